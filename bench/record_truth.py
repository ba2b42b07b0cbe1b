#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Record truth (issue 44): is the best time `tune` reports what the kernel runs at later?

For each workload, seed and condition, a fresh database gets a TRIALS-trial `tensortune tune`
job; the job's reported best (tune --json: best.seconds, confirmed or not) is compared with a
re-time of the database's best kernel in RETIMES fresh `tensortune bench --schedule best`
processes (their median), taken after the job on the machine as it then is. Conditions:
  quiet : nothing else started by this script
  load  : a second process busy on one core (pinned to CPU 0) for part of the job, from
          LOAD_FROM to LOAD_TO of the job's expected duration (the quiet job's, else 60 s)
Prints every pair, then per condition the median and worst |error| against the goal (5% median,
10% worst). A pair whose confirmation's middle rounds (tune's stored spread) or re-times spread
more than NOISY (10%) is marked "noisy" with that spread: the machine was too noisy to decide it,
whatever its error says.

Usage: bench/record_truth.py [--tt PATH] [--trials 200] [--seeds 0,1,2]
         [--workloads matmul,conv2d,odd] [--conditions quiet,load] [--retimes 3] [--threads 2]
         [--load-window 0.25:0.75] [--keep DIR] [--json FILE]
       bench/record_truth.py --retime DIR [--tt PATH] [--retimes 3] [--threads 2] [--json FILE]
The full run is 18 jobs of 200 trials, about 30 minutes on 2 Zen 4 cores. Smaller runs select
with the options. --retime re-times the databases a --keep run left in DIR, later, against each
job's reported best as the database stores it (`db best`): a second look when the machine was
not quiet during the first re-times (the re-times read slow at times the job's figures did not).
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

WORKLOADS = {
    "matmul": "matmul:M=1024,N=1024,K=1024",
    "conv2d": "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1",
    "odd": "matmul:M=640,N=768,K=896",
}
NOISY = 0.10
ROOT = pathlib.Path(__file__).resolve().parent.parent


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tt", default=str(ROOT / "build-main/tools/tensortune/tensortune"))
    p.add_argument("--trials", type=int, default=200)
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--workloads", default="matmul,conv2d,odd",
                   help="names (%s) or specs NAME:key=value,..." % ", ".join(WORKLOADS))
    p.add_argument("--conditions", default="quiet,load")
    p.add_argument("--retimes", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--load-window", default="0.25:0.75")
    p.add_argument("--keep", help="keep the databases in this folder")
    p.add_argument("--json", help="write every pair to this file")
    p.add_argument("--retime", metavar="DIR", help="only re-time the databases of a --keep run")
    a = p.parse_args()
    if not os.access(a.tt, os.X_OK):
        p.error("no tensortune at %s (build first, or give --tt)" % a.tt)
    if a.trials < 1 or a.retimes < 1 or a.threads < 1:
        p.error("--trials, --retimes and --threads must be >= 1")
    for c in a.conditions.split(","):
        if c not in ("quiet", "load"):
            p.error("unknown condition '%s' (quiet, load)" % c)
    lo, hi = (float(x) for x in a.load_window.split(":"))
    if not 0 <= lo < hi <= 1:
        p.error("--load-window FROM:TO with 0 <= FROM < TO <= 1")
    a.window = (lo, hi)
    return a


def run_json(argv):
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("record_truth: %s failed (%d):\n%s" % (" ".join(argv), out.returncode,
                                                         out.stderr[-2000:]))
    return json.loads(out.stdout)


class BusyCore:
    """A process spinning on CPU 0 between two moments of a job."""

    def __init__(self, start_s, stop_s):
        self.start_s, self.stop_s, self.proc = start_s, stop_s, None

    def tick(self, elapsed):
        if self.proc is None and self.start_s <= elapsed < self.stop_s:
            self.proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            os.sched_setaffinity(self.proc.pid, {0})
        elif self.proc is not None and elapsed >= self.stop_s:
            self.stop()

    def stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def tune(a, db, spec, seed, busy):
    argv = [a.tt, "tune", "--workload", spec, "--target", "llvm -cores=%d" % a.threads,
            "--trials", str(a.trials), "--db", db, "--seed", str(seed), "--progress", "none",
            "--no-shipped", "--json"]  # the search's own best, not a shipped log's
    start = time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, text=True)
        try:
            while proc.poll() is None:
                if busy:
                    busy.tick(time.monotonic() - start)
                time.sleep(0.2)
        finally:
            if busy:
                busy.stop()
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            sys.exit("record_truth: tune failed (%d):\n%s" % (proc.returncode, err.read()[-2000:]))
        return json.load(out), time.monotonic() - start


def retime(a, db, spec):
    times = []
    for _ in range(a.retimes):
        j = run_json([a.tt, "bench", "--workload", spec, "--target", "llvm -cores=%d" % a.threads,
                      "--db", db, "--schedule", "best", "--json"])
        times.append(j["seconds"])
    return times


def stored_best(a, db, spec):
    """The database's best record as every surface shows it: (seconds, spread, time, id)."""
    j = run_json([a.tt, "db", "best", "--db", db, "--workload", spec, "--k", "1", "--json"])
    if not j["records"]:
        sys.exit("record_truth: %s has no best record of %s" % (db, spec))
    r = j["records"][0]
    return {"seconds": r["seconds"], "spread": r["confirm_spread"], "time": r["time"],
            "record_id": r["id"]}


def make_pair(name, spec, seed, cond, best, times, wall, load_before):
    med = statistics.median(times)
    spread = best.get("spread", 0.0)
    retime_spread = (max(times) - min(times)) / med
    p = {
        "workload": name, "spec": spec, "seed": seed, "condition": cond,
        "reported_ms": best["seconds"] * 1e3, "time": best.get("time", "?"),
        "record": best["record_id"], "confirm_spread": spread,
        "retimes_ms": [t * 1e3 for t in times], "retime_ms": med * 1e3,
        "retime_spread": retime_spread, "error": best["seconds"] / med - 1,
        "noisy": spread > NOISY or retime_spread > NOISY,
        "wall_s": wall, "loadavg_before": load_before, "loadavg_after": loadavg(),
    }
    print("%-7s seed %d %-5s reported %9.4f ms (%s, record %d, rounds spread %4.1f%%)"
          "  re-times %s ms  median %9.4f  error %+6.1f%%%s  [job %.0fs, load %.1f]"
          % (name, seed, cond, p["reported_ms"], p["time"], p["record"],
             100 * spread, " ".join("%.4f" % t for t in p["retimes_ms"]),
             p["retime_ms"], 100 * p["error"],
             "  NOISY (spread %.1f%% / %.1f%%)" % (100 * spread, 100 * retime_spread)
             if p["noisy"] else "", wall, load_before), flush=True)
    return p


def summarize(a, pairs, conditions):
    for cond in conditions:
        errs = [abs(p["error"]) for p in pairs if p["condition"] == cond]
        decided = [abs(p["error"]) for p in pairs if p["condition"] == cond and not p["noisy"]]
        if not errs:
            continue
        print("%s: %d pairs, |error| median %.1f%% worst %.1f%% (goal 5%% / 10%%: %s); "
              "%d noisy; without them: median %s, worst %s"
              % (cond, len(errs), 100 * statistics.median(errs), 100 * max(errs),
                 "met" if statistics.median(errs) <= 0.05 and max(errs) <= 0.10 else "missed",
                 len(errs) - len(decided),
                 "%.1f%%" % (100 * statistics.median(decided)) if decided else "-",
                 "%.1f%%" % (100 * max(decided)) if decided else "-"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(pairs, f, indent=1)


def retime_only(a):
    """--retime DIR: every NAME_sSEED_COND.db there against its stored best."""
    folder = pathlib.Path(a.retime)
    dbs = sorted(folder.glob("*_s*_*.db"))
    if not dbs:
        sys.exit("record_truth: no NAME_sSEED_COND.db in %s (made by --keep)" % folder)
    print("record_truth: re-timing %d databases of %s, %d threads, %d re-times; load average "
          "%.2f at start" % (len(dbs), folder, a.threads, a.retimes, loadavg()))
    jobs = folder / "jobs.json"  # each database's workload spec, written by --keep
    specs = json.loads(jobs.read_text()) if jobs.exists() else {}
    pairs, conditions = [], []
    for db in dbs:
        name, seed, cond = db.stem.rsplit("_", 2)
        spec = specs.get(db.name, WORKLOADS.get(name))
        if spec is None:
            sys.exit("record_truth: which workload is %s? (no %s entry for it)" % (db, jobs))
        load_before = loadavg()
        best = stored_best(a, str(db), spec)
        times = retime(a, str(db), spec)
        pairs.append(make_pair(name, spec, int(seed[1:]), cond, best, times, 0.0, load_before))
        if cond not in conditions:
            conditions.append(cond)
    summarize(a, pairs, conditions)


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def main():
    a = parse_args()
    if a.retime:
        return retime_only(a)
    work = pathlib.Path(a.keep or tempfile.mkdtemp(prefix="tt_truth_"))
    work.mkdir(parents=True, exist_ok=True)
    specs = [(n, WORKLOADS.get(n, n)) for n in a.workloads.split(",")]
    seeds = [int(s) for s in a.seeds.split(",")]
    print("record_truth: %d trials, seeds %s, %d threads, %d re-times; load average %.2f at start"
          % (a.trials, seeds, a.threads, a.retimes, loadavg()))
    pairs = []
    durations = {}
    specs_of = {}
    for name, spec in specs:
        for seed in seeds:
            for cond in a.conditions.split(","):
                db = str(work / ("%s_s%d_%s.db" % (name.replace(":", "_"), seed, cond)))
                if os.path.exists(db):
                    sys.exit("record_truth: %s exists; give another --keep folder" % db)
                expected = durations.get((name, seed), 60.0)
                busy = BusyCore(a.window[0] * expected, a.window[1] * expected) \
                    if cond == "load" else None
                load_before = loadavg()
                result, wall = tune(a, db, spec, seed, busy)
                if cond == "quiet":
                    durations[(name, seed)] = wall
                if a.keep:
                    specs_of[os.path.basename(db)] = spec
                    (work / "jobs.json").write_text(json.dumps(specs_of, indent=1))
                times = retime(a, db, spec)
                pairs.append(make_pair(name, spec, seed, cond, result["best"], times, wall,
                                       load_before))
    summarize(a, pairs, a.conditions.split(","))
    if not a.keep:
        for f in work.glob("*.db*"):
            f.unlink()
        work.rmdir()


if __name__ == "__main__":
    main()

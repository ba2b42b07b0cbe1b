#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Zero-shot against tuned, kernel by kernel, inside a whole model: compiles MODEL twice, once with
# no database and without the shipped logs (every kernel zero-shot) and once from DB (each
# kernel's tuned best), then profiles both builds in alternating rounds (run-model --profile,
# OMP_WAIT_POLICY=passive), so a change of the machine's speed hits them alike. Prints per unique
# kernel the median of its calls' times in each build and zero-shot / tuned, then the geometric
# mean and the worst (issue 39's goal for ResNet-18: geomean <= 1.5, worst <= 2).
#
# Usage: bench/model_kernels.sh --model M.onnx --db DB [--tt PATH] [--rounds N] [--repeat N]
#                               [--threads N] [--json FILE]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
tt=${TT:-"$root/build-main/tools/tensortune/tensortune"}
model="" db="" rounds=3 repeat=5 threads=2 json=""
die() { echo "model_kernels.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case $1 in -h | --help) sed -n '3,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
  [ $# -ge 2 ] || die "option '$1' needs a value (see the header of $0)"
  case $1 in
    --tt) tt=$2 ;; --model) model=$2 ;; --db) db=$2 ;; --rounds) rounds=$2 ;;
    --repeat) repeat=$2 ;; --threads) threads=$2 ;; --json) json=$2 ;;
    *) die "unknown option '$1' (see the header of $0)" ;;
  esac
  shift 2
done
[ -x "$tt" ] || die "no tensortune binary '$tt' (build it, or pass --tt PATH / set TT)"
case $tt in /*) ;; *) tt=$PWD/$tt ;; esac
[ -f "$model" ] || die "no model '$model' (give --model M.onnx)"
[ -f "$db" ] || die "no tuning database '$db' (give --db DB)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
target="native -cores=$threads"
echo "== compile-model: zero-shot (no database, no shipped logs) and tuned ($db)"
model=$(cd "$(dirname "$model")" && pwd)/$(basename "$model")
# From the empty scratch folder, so no default database (tuning_logs/tensortune.db) is found.
(cd "$out" && "$tt" compile-model "$model" --target "$target" --out "$out/zero-shot" \
  --no-shipped --json) > "$out/zero-shot.json" 2> "$out/zero-shot.log" ||
  { cat "$out/zero-shot.log" >&2; die "compile-model (zero-shot) failed"; }
"$tt" compile-model "$model" --target "$target" --out "$out/tuned" --db "$db" --json \
  > "$out/tuned.json" 2> "$out/tuned.log" ||
  { cat "$out/tuned.log" >&2; die "compile-model (tuned) failed"; }
i=0
while [ "$i" -lt "$rounds" ]; do
  i=$((i + 1))
  echo "== round $i of $rounds: run-model --profile --repeat $repeat, zero-shot then tuned"
  for b in zero-shot tuned; do
    OMP_WAIT_POLICY=passive "$tt" run-model "$out/$b" --profile --repeat "$repeat" --json \
      > "$out/$b.profile.$i.json"
  done
done
/usr/bin/python3 - "$out" "$rounds" "$json" "$model" <<'PY'
import collections, json, math, pathlib, statistics, sys
out, rounds, dest, model = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]

def kernels(build):
    """function -> (workload, median seconds per call over every round and call)."""
    times, names = collections.defaultdict(list), {}
    for i in range(1, rounds + 1):
        for call in json.loads((out / f"{build}.profile.{i}.json").read_text())["profile"]:
            times[call["function"]].append(call["seconds"])
            names[call["function"]] = call["workload"]
    return {f: (names[f], statistics.median(t)) for f, t in times.items()}

def sources(build):
    return {f.get("name"): f.get("source") for f in
            json.loads((out / f"{build}.json").read_text()).get("functions", [])}

zs, tuned, src = kernels("zero-shot"), kernels("tuned"), sources("tuned")
rows = []
for f in sorted(zs, key=lambda f: -tuned.get(f, (0, 0))[1]):
    if f not in tuned:
        continue
    rows.append({"function": f, "workload": zs[f][0], "zero_shot_ms": zs[f][1] * 1e3,
                 "tuned_ms": tuned[f][1] * 1e3, "ratio": zs[f][1] / tuned[f][1],
                 "tuned_source": src.get(f, "?")})
print(f"\n{model}: zero-shot against tuned per kernel (medians of {rounds} alternating rounds)")
print(f"{'kernel':48s} {'zero-shot':>10s} {'tuned':>10s} {'zs/tuned':>8s}  tuned from")
for r in rows:
    print(f"{r['workload'][:48]:48s} {r['zero_shot_ms']:8.3f}ms {r['tuned_ms']:8.3f}ms "
          f"{r['ratio']:8.2f}  {r['tuned_source']}")
g = math.exp(sum(math.log(r["ratio"]) for r in rows) / len(rows))
worst = max(rows, key=lambda r: r["ratio"])
print(f"geomean zero-shot/tuned {g:.2f} (goal <= 1.5) over {len(rows)} kernels; worst "
      f"{worst['ratio']:.2f} (goal <= 2), {worst['workload']}")
if dest:
    pathlib.Path(dest).write_text(json.dumps({"kernels": rows, "geomean": g}, indent=1) + "\n")
PY

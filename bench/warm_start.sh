#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Warm start (issue 4): does a new shape of an already-tuned operator reach 90% of its own best in
# <= 32 trials when the model starts from the database's records? All in one run, same machine:
#   source : SOURCE (default matmul 1024^3) tuned for SOURCE_TRIALS trials into a fresh database
#            (skipped when TT_SOURCE_DB names a database that already holds it)
#   warm   : NEW tuned for WARM_TRIALS trials in a copy of that database (model + starts transferred)
#   cold   : NEW tuned for WARM_TRIALS trials in an empty database
#   own    : NEW tuned for OWN_TRIALS trials in an empty database (its "own best")
# and prints warm/own and cold/own. Same seed everywhere. Each job's best is its confirmed best
# (tune --confirm); as the three jobs run minutes apart on a noisy machine, the three bests are
# then also timed side by side in one process (`bench --compare`, ROUNDS (10) rounds
# round-robin), and those ratios (medians of the per-round ratios) printed too.
# Usage: bench/warm_start.sh [BUILD_DIR]   env: TT_SOURCE_DB, SOURCE, NEW, SOURCE_TRIALS (200),
#        WARM_TRIALS (32), OWN_TRIALS (200), THREADS (2), SEED (0), ROUNDS (10)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build-main"}
tt="$build/tools/tensortune/tensortune"
[ -x "$tt" ] || { echo "warm_start: no $tt; build first" >&2; exit 1; }
source_spec=${SOURCE:-matmul:M=1024,N=1024,K=1024}
new_spec=${NEW:-matmul:M=768,N=1024,K=512}
threads=${THREADS:-2}
seed=${SEED:-0}
target="llvm -cores=$threads"
work=$(mktemp -d /tmp/tt_warm_XXXXXX)
trap 'rm -rf "$work"' EXIT

tune() {  # tune DB SPEC TRIALS [extra...] -> prints best GFLOP/s
  db=$1 spec=$2 trials=$3
  shift 3
  "$tt" tune --workload "$spec" --target "$target" --trials "$trials" --db "$db" --seed "$seed" \
    --progress none --no-shipped --json "$@" > "$work/out.json"
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["best"]["gflops"])' "$work/out.json"
}

if [ -n "${TT_SOURCE_DB:-}" ]; then
  cp "$TT_SOURCE_DB" "$work/source.db"
  echo "source: $TT_SOURCE_DB"
else
  g=$(tune "$work/source.db" "$source_spec" "${SOURCE_TRIALS:-200}")
  echo "source: $source_spec, ${SOURCE_TRIALS:-200} trials, best $g GFLOP/s"
fi
cp "$work/source.db" "$work/warm.db"
t0=$(date +%s)
warm=$(tune "$work/warm.db" "$new_spec" "${WARM_TRIALS:-32}")
t1=$(date +%s)
cold=$(tune "$work/cold.db" "$new_spec" "${WARM_TRIALS:-32}" --no-transfer)
t2=$(date +%s)
own=$(tune "$work/own.db" "$new_spec" "${OWN_TRIALS:-200}" --no-transfer)
t3=$(date +%s)
for job in warm cold own; do  # each job's best, as compile would pick it
  "$tt" db best --db "$work/$job.db" --workload "$new_spec" --k 1 --json |
    python3 -c 'import json,sys; s=json.load(sys.stdin)["records"][0]["schedule"]
open(sys.argv[1], "w").write(s if isinstance(s, str) else json.dumps(s))' "$work/$job.json"
done
"$tt" bench --workload "$new_spec" --target "$target" --schedule "$work/own.json" \
  --compare "$work/warm.json" --compare "$work/cold.json" --rounds "${ROUNDS:-10}" --json \
  > "$work/side.json"
python3 - "$new_spec" "$warm" "$cold" "$own" "${WARM_TRIALS:-32}" "${OWN_TRIALS:-200}" \
  "$((t1 - t0))" "$((t2 - t1))" "$((t3 - t2))" "$work" <<'PY'
import json, sys
spec, warm, cold, own, wt, ot, sw, sc, so, work = sys.argv[1:]
warm, cold, own = float(warm), float(cold), float(own)
rows = json.load(open(f"{work}/side.json"))["schedules"]  # own, warm, cold
side = {j: r["gflops"] for j, r in zip(("own", "warm", "cold"), rows)}
# Throughput ratios from the median of the per-round time ratios against own's.
ratio = {j: 1 / r["time_ratio"] for j, r in zip(("own", "warm", "cold"), rows)}
print(f"{spec}: warm@{wt} {warm:.1f} GFLOP/s ({sw}s), cold@{wt} {cold:.1f} ({sc}s), own@{ot} {own:.1f} ({so}s)")
print(f"  warm@{wt} / own@{ot}: {warm / own:.3f}   (goal >= 0.90)")
print(f"  cold@{wt} / own@{ot}: {cold / own:.3f}")
print(f"  side by side: warm {side['warm']:.1f}, cold {side['cold']:.1f}, own {side['own']:.1f} GFLOP/s;"
      f" warm/own {ratio['warm']:.3f}, cold/own {ratio['cold']:.3f}")
PY

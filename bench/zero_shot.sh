#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fast without tuning, per operator: every operator of the library at three shapes, its zero-shot
# schedule (the shipped cost model's pick, records and shipped logs ignored) timed side by side
# with the default schedule and, when DB holds one, the tuned best (bench --compare, round-robin
# rounds, medians). Prints one row per workload and the geometric means of default / zero-shot
# (how much zero-shot gains) and zero-shot / tuned (how much tuning still gains).
# The whole-model figures (ResNet-18 against TorchScript) are bench/resnet18.sh's:
#   bench/resnet18.sh --no-shipped                 # zero-shot alone
#   bench/resnet18.sh                              # zero-shot and the shipped logs
#   bench/resnet18.sh --time-budget 10m            # then tune-model for 10 minutes
# Usage: bench/zero_shot.sh [TENSORTUNE] [DB] [ROUNDS] [TRIALS]
# With TRIALS, every workload is first tuned into DB (TRIALS trials, shipped logs ignored; a
# workload already holding TRIALS records is skipped, so a stopped run resumes), then timed.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
tt=${1:-"$root/build-main/tools/tensortune/tensortune"}
db=${2:-}
rounds=${3:-3}
trials=${4:-}
[ -x "$tt" ] || { echo "zero_shot.sh: no tensortune at '$tt'" >&2; exit 1; }
[ -z "$trials" ] || [ -n "$db" ] || { echo "zero_shot.sh: TRIALS needs a DB to tune into" >&2; exit 1; }
specs="
matmul:M=256,N=256,K=256 matmul:M=128,N=768,K=768 matmul:M=257,N=1000,K=513
batch_matmul:B=12,M=128,N=128,K=64 batch_matmul:B=4,M=64,N=96,K=32 batch_matmul:B=8,M=100,N=60,K=70
dense:M=1,N=1000,K=512,bias=1 dense:M=64,N=1000,K=512,bias=1,epilogue=relu dense:M=32,N=256,K=256,epilogue=gelu
conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1 conv2d:N=1,C=128,H=28,W=28,K=256,R=3,S=3,stride=2,pad=1 conv2d:N=1,C=144,H=56,W=56,K=24,R=1,S=1
depthwise_conv2d:N=1,C=32,H=112,W=112,R=3,S=3,pad=1 depthwise_conv2d:N=1,C=96,H=112,W=112,R=3,S=3,stride=2,pad=1 depthwise_conv2d:N=1,C=384,H=14,W=14,R=3,S=3,pad=1
pool2d:N=1,C=64,H=112,W=112,R=3,S=3,stride=2,pad=1 pool2d:kind=avg,N=1,C=256,H=14,W=14,R=2,S=2,stride=2 pool2d:N=1,C=32,H=56,W=56,R=3,S=3,pad=1
softmax:M=1536,N=128 softmax:M=64,N=1000 softmax:M=512,N=512
layer_norm:M=128,N=768 layer_norm:M=512,N=1024 layer_norm:M=64,N=3072
add:M=512,N=512 add:M=1024,N=768,broadcast=1 add:M=128,N=3072
mul:M=1024,N=256,broadcast=1 mul:M=512,N=512 mul:M=64,N=4096
relu:M=1024,N=1024 relu:M=256,N=3072 relu:M=100,N=1000
gelu:M=128,N=3072 gelu:M=512,N=768 gelu:M=64,N=1000
transpose:M=1024,N=768 transpose:M=512,N=512 transpose:M=300,N=700
pad:N=1,C=64,H=56,W=56,pad=1 pad:N=1,C=3,H=224,W=224,pad=3 pad:N=1,C=256,H=14,W=14,pad=1
"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [ -n "$trials" ]; then
  for spec in $specs; do
    echo "zero_shot.sh: tuning $spec ($trials trials)" >&2
    OMP_WAIT_POLICY=passive "$tt" tune --workload "$spec" --target native --trials "$trials" \
      --no-shipped --db "$db" > "$out/tune.log" 2>&1 ||
      { echo "zero_shot.sh: tuning $spec failed:" >&2; cat "$out/tune.log" >&2; exit 1; }
  done
fi
i=0
for spec in $specs; do
  i=$((i + 1))
  set -- --compare default
  if [ -n "$db" ]; then
    set -- "$@" --db "$db" --compare best
  fi
  OMP_WAIT_POLICY=passive "$tt" bench --workload "$spec" --target native \
    --schedule zero-shot --no-shipped "$@" --rounds "$rounds" --json \
    > "$out/$i.json" 2> "$out/$i.err" || { echo "zero_shot.sh: $spec failed:" >&2; cat "$out/$i.err" >&2; }
done
/usr/bin/python3 - "$out" <<'PY'
import json, math, pathlib, sys
rows, gains, left = [], [], []
for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json"), key=lambda p: int(p.stem)):
    if p.stat().st_size == 0:
        continue
    j = json.loads(p.read_text())
    by = {s["schedule"].split(" ")[0]: s for s in j["schedules"]}
    zs = j["schedules"][0]["seconds"]
    d = by.get("default", {}).get("seconds")
    # Only a record of this very workload counts as tuned (best falls back to adapted records).
    tuned = next((s["seconds"] for s in j["schedules"][1:] if s["schedule"].startswith("record #")), None)
    gains.append(d / zs)
    if tuned:
        left.append(zs / tuned)
    rows.append((j["workload"], zs, d, tuned))
print(f"{'workload':46s} {'zero-shot':>11s} {'default':>11s} {'tuned':>11s} {'def/zs':>8s} {'zs/tuned':>8s}")
for w, zs, d, t in rows:
    ts = f"{t*1e3:9.3f}ms" if t else f"{'-':>11s}"
    r = f"{zs/t:8.2f}" if t else f"{'-':>8s}"
    print(f"{w:46s} {zs*1e3:9.3f}ms {d*1e3:9.3f}ms {ts} {d/zs:8.1f} {r}")
g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
print(f"geomean default/zero-shot {g(gains):.1f}x over {len(gains)} workloads; "
      f"zero-shot/tuned {g(left):.2f}x over {len(left)} (worst {max(left) if left else float('nan'):.2f}x)")
PY

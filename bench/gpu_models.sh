#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Whole models on a CUDA device against PyTorch in the same run (issue: GPU whole models).
# For each model of DIR (made by scripts/make_models.py --superres DIR and --resnet18 DIR):
# compile-model for TARGET with DB (no database: zero-shot schedules; --no-zero-shot among
# --compile-args: the default GPU schedules) and any --compile-args, run-model on the
# reference input (--profile, CUDA-event times, device memory), the output's error against
# PyTorch's reference output, and bench/torch_gpu_model.py's eager and CUDA-graph times and peak
# memory. Prints one summary line per model with the ratios.
# Usage: bench/gpu_models.sh DIR [--tt PATH] [--target 'cuda -arch=sm_90'] [--db DB]
#                            [--models superres,resnet18] [--out OUT] [--compile-args 'ARGS']
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:?usage: bench/gpu_models.sh DIR [--tt PATH] [--target T] [--db DB] [--models A,B]}
shift
TT=$root/build/tools/tensortune/tensortune
TARGET="cuda -arch=sm_90"
DB=""
MODELS=superres,resnet18
OUT=${OUT:-/tmp/gpu_models}
EXTRA=""
while [ $# -gt 0 ]; do
  case $1 in
  --tt) TT=$2; shift 2 ;;
  --target) TARGET=$2; shift 2 ;;
  --db) DB=$2; shift 2 ;;
  --models) MODELS=$2; shift 2 ;;
  --out) OUT=$2; shift 2 ;;
  --compile-args) EXTRA=$2; shift 2 ;;
  *) echo "gpu_models.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$TT" ] || { echo "gpu_models.sh: no tensortune at $TT (--tt)" >&2; exit 2; }
mkdir -p "$OUT"
# The Python that has PyTorch: Debian's here, the image's own (first on PATH) on a GPU machine.
PY=""
for c in python3 /usr/bin/python3; do
  if "$c" -c "import torch, numpy" 2>/dev/null; then PY=$c; break; fi
done
[ -n "$PY" ] || { echo "gpu_models.sh: no python3 with torch and numpy" >&2; exit 2; }
status=0
for m in ${MODELS//,/ }; do
  [ -f "$DIR/$m.onnx" ] || { echo "gpu_models.sh: $DIR/$m.onnx missing (make_models.py --$m)"; continue; }
  echo "=== $m"
  # shellcheck disable=SC2086  # EXTRA is a list of options
  "$TT" compile-model "$DIR/$m.onnx" --target "$TARGET" ${DB:+--db "$DB"} --out "$OUT/$m" $EXTRA \
    --json >"$OUT/$m.compile.json" || { status=1; continue; }
  in_name=$("$PY" -c "import json,sys; print(json.load(open('$DIR/models.json'))['$m']['inputs'][0]['name'])")
  "$TT" run-model "$OUT/$m" --input "$in_name=$DIR/$m.input.0.npy" --output-dir "$OUT/$m.out" \
    --repeat 20 --profile --json >"$OUT/$m.run.json" || { status=1; continue; }
  "$PY" bench/torch_gpu_model.py "$DIR" --model "$m" >"$OUT/$m.torch.json" || status=1
  "$PY" - "$DIR" "$m" "$OUT" <<'PYEOF'
import json, pathlib, sys
import numpy as np
d, m, out = pathlib.Path(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
run = json.loads((out / f"{m}.run.json").read_text())
ref = np.load(d / f"{m}.output.0.npy")
got = np.load(run["outputs"][0]["file"])
err = float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-30))
g = run["gpu"]
ours = g["device_resident_seconds"] * 1e3
line = f"{m}: ours {ours:.3f} ms device resident ({g['host_to_host_seconds']*1e3:.3f} ms host " \
       f"to host), {g['device_bytes']/2**20:.1f} MiB; rel err {err:.2e}"
if "cuda_graph" in g:
    line += "; one CUDA graph" if g["cuda_graph"] else "; launch by launch"
    if "cuda_graph_seconds" in g:
        line += f" (at open: graph {g['cuda_graph_seconds']*1e3:.3f} ms, launches " \
                f"{g['launch_by_launch_seconds']*1e3:.3f} ms)"
tpath = out / f"{m}.torch.json"
if tpath.exists() and tpath.read_text().strip():
    t = json.loads(tpath.read_text())
    line += f"; PyTorch eager {t['eager_ms']:.3f} ms (ratio {ours / t['eager_ms']:.2f}x)"
    if t.get("graph_ms"):
        line += f", CUDA graph {t['graph_ms']:.3f} ms (ratio {ours / t['graph_ms']:.2f}x)"
    line += f", peak {t['peak_reserved_bytes']/2**20:.1f} MiB reserved " \
            f"(memory ratio {g['device_bytes'] / max(t['peak_reserved_bytes'], 1):.2f})"
    if "device_in_use_bytes" in g and "eager_in_use_bytes" in t:
        line += f"; device in use {g['device_in_use_bytes']/2**20:.0f} vs " \
                f"{t['eager_in_use_bytes']/2**20:.0f} MiB (ratio " \
                f"{g['device_in_use_bytes'] / max(t['eager_in_use_bytes'], 1):.2f})"
print(line)
PYEOF
done
exit $status

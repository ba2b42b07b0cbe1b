#!/bin/bash
# Runs the GPU checks on a machine with an NVIDIA GPU, from the repository root, with the binaries
# and libraries that scripts/device/pack.sh put into .devpack/: the device tests (each operator's
# kernels verified on the GPU, the driver, the measurer, `tune --target cuda`, whole GPU models),
# the super-resolution model and ResNet-18 against PyTorch (bench/gpu_models.sh; zero-shot, then
# the default schedules; both made there by make_models.py), then bench/vs_vendor_gpu
# against cuBLAS/cuDNN. Logs and the database go to $OUT (default /tmp/devout).
# Usage: bash scripts/device/run.sh [TRIALS] [ONLY]
#   TRIALS  vs_vendor_gpu --tune-trials (default 32); ONLY its --only filter (default: every case)
#   QUICK=1 skips the device tests but vs_vendor_gpu's own; VVG_S caps vs_vendor_gpu's seconds (240)
#   GPU_MODELS: the models bench/gpu_models.sh runs (default superres,resnet18)
#   VVG_NOPIPE_S caps the re-run of the best records without double-buffered fetches (120; 0: none)
#   VVG_STAGES3_S caps a re-run of the best records with three pipeline stages everywhere (default
#     0: none; the search chooses the depth per kernel, <stage>.shared.stages)
#   GPU_DEFAULTS=0 skips the models' second compile with the default (not zero-shot) schedules
#   .devpack/seed.db, when present, is the database vs_vendor_gpu resumes from.
# The binaries hold their build folder's absolute paths (/work/main/build...): a checkout elsewhere
# is linked there.
set -u
R=$PWD
OUT=${OUT:-/tmp/devout}
mkdir -p "$OUT"
TRIALS=${1:-32}
ONLY=${2:-}
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s)
el() { echo "=== [$(($(date +%s) - T0))s] $*"; }
el start
uname -r
head -2 /etc/os-release
nproc
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 | head -3
mkdir -p /tmp/ttall /tmp/ttl
tar -C /tmp/ttall -xJf .devpack/libs.tar.xz
tar -C "$R" -xJf .devpack/bin.tar.xz
for f in /tmp/ttall/*; do
  n=$(basename "$f")
  case $n in
  # The machine's newer C++ runtime serves cuBLAS/cuDNN too; ours only where it has none.
  libstdc++.so.6 | libgcc_s.so.1) ldconfig -p | grep -q "	$n " || cp "$f" /tmp/ttl/ ;;
  *) cp "$f" /tmp/ttl/ ;;
  esac
done
if [ "$R" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$R" /work/main; fi
# cuDNN may live in a Python wheel rather than the toolkit.
cudnn=$(find /usr/local/cuda/lib64/ /opt /usr/lib -name 'libcudnn.so.9' 2>/dev/null | head -1)
echo "cudnn: $cudnn"
ldconfig -p | grep -m2 "libcuda.so"
export LD_LIBRARY_PATH=/tmp/ttl:/usr/local/cuda/lib64${cudnn:+:$(dirname "$cudnn")}
ldd /work/main/build/bench/vs_vendor_gpu | grep -i "not found"
cd /work/main/build || exit 1
export OMP_WAIT_POLICY=passive
t() {
  local s=$1
  shift
  el "$*"
  timeout "$s" "$@" 2>&1 | grep -v "^\[ *\(RUN\|OK\) *\]" | tail -40
}
[ -f "$R/.devpack/seed.db" ] && cp "$R/.devpack/seed.db" "$OUT/vvg.db"
if [ -z "${QUICK:-}" ]; then
  # Correctness only, so the suites share the GPU and the cores at once; each keeps its own log.
  el "device tests, in parallel"
  mkdir -p "$OUT/tests"
  pids=()
  pt() {
    local s=$1 log=$OUT/tests/$(basename "$2").log
    shift
    (timeout "$s" "$@" >"$log" 2>&1; echo "rc=$?" >>"$log") &
    pids+=($!)
  }
  pt 150 tests/unit/runtime/runtime_test --gtest_filter='Cuda*'
  pt 150 tests/unit/codegen/codegen_test --gtest_filter='Nvrtc*:*Cuda*:*Gpu*'
  pt 150 tests/golden/golden_test --gtest_filter='*Cuda*'
  pt 200 tests/unit/measure/measure_test --gtest_filter='Gpu*:HostReference*:TimeBatches*'
  pt 150 tests/e2e/gpu_tune_cli_test
  pt 200 tests/e2e/gpu_model_test
  pt 150 tests/e2e/model_cli_test --gtest_filter='*Cuda*'
  wait "${pids[@]}"
  for f in "$OUT"/tests/*.log; do
    el "$(basename "$f" .log): $(grep -E '^\[  (PASSED|FAILED) |^rc=' "$f" | tr '\n' ' ')"
    grep -E '^\[  FAILED  \]|Failure|error' "$f" | head -20
  done
fi
# Whole models against PyTorch (bench/gpu_models.sh); GPU_MODEL_TRIALS > 0 tunes them first.
# The models are made here (PyTorch alone is enough; the pack has no room for them).
MODELS=${GPU_MODELS:-superres,resnet18}
for m in ${MODELS//,/ }; do
  [ -f "$R/.devpack/models/$m.onnx" ] ||
    (cd "$R" && t 180 python3 scripts/make_models.py "--$m" .devpack/models)
done
if [ -d "$R/.devpack/models" ]; then
  dbarg=()
  if [ "${GPU_MODEL_TRIALS:-0}" -gt 0 ]; then
    dbarg=(--db "$OUT/models.db")
    t "${GPU_MODEL_S:-300}" tools/tensortune/tensortune tune-model "$R/.devpack/models/superres.onnx" \
      --target "cuda -arch=sm_90" --trials "$GPU_MODEL_TRIALS" --db "$OUT/models.db"
  fi
  (cd "$R" && t 300 bash bench/gpu_models.sh "$R/.devpack/models" --models "$MODELS" \
    --tt /work/main/build/tools/tensortune/tensortune --out "$OUT/models" "${dbarg[@]}")
  # Untuned, the default GPU schedules against the zero-shot picks above (GPU_DEFAULTS=0: not).
  [ "${GPU_DEFAULTS:-1}" = 0 ] || (cd "$R" && t 300 bash bench/gpu_models.sh "$R/.devpack/models" --models "$MODELS" \
    --tt /work/main/build/tools/tensortune/tensortune --out "$OUT/models-default" \
    --compile-args --no-zero-shot "${dbarg[@]}")
fi
t 60 tests/e2e/vs_vendor_gpu_test
# vs_vendor_gpu on the run's database and cases, capped at $1 seconds.
vvg() {
  local s=$1
  shift
  timeout "$s" bench/vs_vendor_gpu --target "cuda -arch=sm_90" --db "$OUT/vvg.db" \
    ${ONLY:+--only "$ONLY"} "$@"
}
el vs_vendor_gpu
vvg "${VVG_S:-240}" --tune-trials "$TRIALS" --json "$OUT/vvg.json" -v >"$OUT/vvg.log" 2>&1
rc=$?
echo "rc=$rc"
# -v also traces every lowering pass; the tail shows the progress and ratios alone.
grep -v '^\[lower\]' "$OUT/vvg.log" | tail -60
# The cap stopped the tuning before any ratio: time the bests it stored (each batch is committed).
if [ "$rc" = 124 ] && [ "$TRIALS" -gt 0 ]; then
  el "vs_vendor_gpu, the stored bests"
  vvg 90 --json "$OUT/vvg.json" 2>&1 | tail -30
fi
# The same best records built without double-buffered fetches (pipeline.cpp): what the cp.async
# pipeline buys, in the same run.
if [ "${VVG_NOPIPE_S:-120}" != 0 ]; then
  el "vs_vendor_gpu, TT_CUDA_PIPELINE=0"
  TT_CUDA_PIPELINE=0 vvg "${VVG_NOPIPE_S:-120}" --json "$OUT/vvg-nopipe.json" 2>&1 | tail -30
fi
# And with three stages in flight in every kernel (VVG_STAGES3_S > 0).
if [ "${VVG_STAGES3_S:-0}" != 0 ]; then
  el "vs_vendor_gpu, TT_CUDA_PIPELINE=3"
  TT_CUDA_PIPELINE=3 vvg "$VVG_STAGES3_S" --json "$OUT/vvg-3stage.json" 2>&1 | tail -30
fi
el done

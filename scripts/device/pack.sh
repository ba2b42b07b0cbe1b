#!/bin/bash
# Packs the Debian-built GPU test binaries, vs_vendor_gpu and the shared libraries they need into
# .devpack/ (git-ignored through .git/info/exclude), for a GPU machine that has the CUDA driver and
# toolkit but none of our Debian packages (LLVM, XGBoost, SQLite, fmt...). On that machine, from the
# repository root: `bash scripts/device/run.sh [TRIALS] [ONLY]` (see there).
# Usage: bash scripts/device/pack.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
cd "$root"
grep -qx '/.devpack/' .git/info/exclude 2>/dev/null || echo '/.devpack/' >>.git/info/exclude
rm -rf .devpack && mkdir -p .devpack/stage/build .devpack/libs
bins="tools/tensortune/tensortune tools/tensortune/tensortune-worker bench/vs_vendor_gpu
  tests/unit/measure/measure_test tests/unit/runtime/runtime_test tests/unit/codegen/codegen_test
  tests/golden/golden_test tests/e2e/gpu_tune_cli_test tests/e2e/vs_vendor_gpu_test
  tests/e2e/gpu_model_test tests/e2e/model_cli_test"
for f in $bins; do
  mkdir -p ".devpack/stage/build/$(dirname "$f")"
  strip --strip-unneeded -o ".devpack/stage/build/$f" "$build/$f"
done
# The runtime archive that compile-model links into model libraries.
mkdir -p .devpack/stage/build/src/runtime
cp "$build/src/runtime/libtt_runtime.a" .devpack/stage/build/src/runtime/
# Every library outside glibc: the GPU machine may have none of them, or other versions.
for f in $bins; do ldd "$build/$f"; done | awk '/=>/ {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libpthread|libdl|librt)\.so|ld-linux' | while read -r lib; do
  cp -L "$lib" .devpack/libs/
done
# Two libraries libLLVM pulls in that no GPU path calls, replaced by empty stand-ins so the pack
# stays inside the device tool's 64 MiB: Z3 (the static analyzer's solver; every reference is a
# lazily bound function) and ICU's data (libxml2's encoding tables; only its symbol must exist).
stub() { gcc -shared -fPIC -o ".devpack/libs/$1" -Wl,-soname,"$1" -x c - <<<"$2"; }
[ -f .devpack/libs/libz3.so.4 ] && stub libz3.so.4 'int tt_no_z3;'
[ -f .devpack/libs/libicudata.so.72 ] && stub libicudata.so.72 'const char icudt72_dat[64];'
# libpq (the PostgreSQL fleet, which no GPU check uses) and the libraries only it needs, the same
# way: its functions are bound lazily, so an empty libpq.so.5 loads, and the rest need not travel.
if [ -f .devpack/libs/libpq.so.5 ]; then
  stub libpq.so.5 'int tt_no_pq;'
  needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
  declare -A keep=()
  todo=$(for f in $bins; do needed "$build/$f"; done)
  while [ -n "$todo" ]; do
    next=""
    for n in $todo; do
      [ -n "${keep[$n]:-}" ] && continue
      keep[$n]=1
      [ -f ".devpack/libs/$n" ] && next="$next $(needed ".devpack/libs/$n")"
    done
    todo=$next
  done
  for f in .devpack/libs/*; do [ -n "${keep[$(basename "$f")]:-}" ] || rm "$f"; done
fi
tar -C .devpack/libs -cf - . | xz -T0 -6 >.devpack/libs.tar.xz
tar -C .devpack/stage -cf - build | xz -T0 -6 >.devpack/bin.tar.xz
rm -rf .devpack/libs .devpack/stage
# The device tool carries the tracked tree and .devpack together, 64 MiB at most.
tree=$(git ls-files -z | xargs -0 stat -c %s | awk '{s += $1} END {print s}')
pack=$(du -sb .devpack | cut -f1)
echo "pack.sh: .devpack $((pack >> 20)) MiB + tracked tree $((tree >> 20)) MiB of 64 MiB"
[ $((pack + tree)) -lt $((64 << 20)) ] || echo "pack.sh: over the device tool's 64 MiB" >&2

# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts/fuzz.sh and scripts/sanitize.sh: configures one clang-19 build with ASan and
# UBSan (LeakSanitizer comes with ASan) whose libraries are also instrumented for libFuzzer's
# coverage, so the fuzz targets and the sanitized unit, error and golden tests share one build.
# -O1 keeps the sanitizers' reports readable at a modest cost; -g1 gives line numbers without the
# full debug info that would double the link time.

SAN_BUILD="${TT_SAN_BUILD_DIR:-build-fuzz}"
# -fno-sanitize=function: its check reads the 8 bytes before a called function for a signature,
# and a JIT-compiled kernel (not built by clang) at the start of a page has none mapped there.
SAN_FLAGS="-fsanitize=address,undefined -fno-sanitize=function"
SAN_FLAGS="$SAN_FLAGS -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

# Installs clang 19 and its runtime (libFuzzer, ASan, UBSan) when missing; setup.sh lists them
# too, so this only matters when a script runs on a machine setup.sh never saw.
san_install_clang() {
  local missing=() pkg status
  for pkg in clang-19 libclang-rt-19-dev; do
    status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
    [ "$status" = "install ok installed" ] || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then sudo=(sudo); fi
  echo "sanitizer_build: installing ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    "${missing[@]}"
}

# san_configure: configures $SAN_BUILD (idempotent); TT_FUZZ_CMAKE_ARGS adds CMake options.
san_configure() {
  san_install_clang
  mkdir -p "$SAN_BUILD"
  # shellcheck disable=SC2086  # TT_FUZZ_CMAKE_ARGS is a list of options
  cmake -S . -B "$SAN_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link $SAN_FLAGS" \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link $SAN_FLAGS" \
    -DTT_FUZZ_LIBFUZZER=ON ${TT_FUZZ_CMAKE_ARGS:-} -DTT_WITH_CUDA=OFF -DTT_BUILD_BENCH=OFF \
    -DTT_WITH_PYTHON=OFF -DTT_BUILD_E2E_TESTS=OFF \
    >"$SAN_BUILD/configure.log" ||
    { cat "$SAN_BUILD/configure.log" >&2; return 1; }
}

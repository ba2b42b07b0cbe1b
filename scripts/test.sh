#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The CI test command: install what is missing, configure build-ci (Ninja, -O2 without debug
# info, which halves the build time; warnings as errors), build with every core, and run the unit,
# golden, error, e2e, lint and fuzz (corpus replay) tests; then the sanitizer run
# (scripts/sanitize.sh: the unit, error and golden tests under ASan, UBSan and LeakSanitizer in a
# clang-19 build, and every fuzz target for 30 s from its corpus), which TT_SKIP_SANITIZE=1 skips.
# Exits non-zero when any step or test fails.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR="${TT_BUILD_DIR:-build-ci}"
JOBS="$(nproc 2>/dev/null || echo 2)"

bash scripts/setup.sh

cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DTT_WERROR=ON
cmake --build "$BUILD_DIR" -j "$JOBS"

export OMP_WAIT_POLICY=passive
# ctest prints its "N% tests passed, M tests failed out of T" summary line itself.
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" -L "unit|golden|error|e2e|lint|fuzz"

# A build of its own: on a 2-core host the unity build takes about 6 minutes without ccache, then
# the sanitized tests and 30 s of each fuzz target.
if [ "${TT_SKIP_SANITIZE:-0}" != 1 ]; then
  bash scripts/sanitize.sh --fuzz 30s
fi

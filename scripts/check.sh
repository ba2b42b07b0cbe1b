#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What CI runs and what everyone runs before pushing (docs/style.md section 8), in order: format
# check, build with -Werror, the unit/golden/error/e2e tests, the layering check, the line budget,
# and clang-tidy on the files changed since HEAD. Stops at the first failing step.
# Options: --fix-format rewrites sources with clang-format first; --no-tidy skips clang-tidy.
# TT_BUILD_DIR picks the build folder (default build-ci).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR="${TT_BUILD_DIR:-build-ci}"
JOBS="$(nproc 2>/dev/null || echo 2)"
RUN_TIDY=1
FIX_FORMAT=0
for arg in "$@"; do
  case "$arg" in
    --no-tidy) RUN_TIDY=0 ;;
    --fix-format) FIX_FORMAT=1 ;;
    -h | --help)
      sed -n '3,7p' "$0"
      exit 0
      ;;
    *)
      echo "check.sh: unknown option '$arg' (accepted: --fix-format, --no-tidy, --help)" >&2
      exit 2
      ;;
  esac
done

step() { printf '\n== %s\n' "$*"; }

# C++ sources of the project (never build folders or third-party code).
cxx_sources() {
  find include src tools tests bench python -type f \( -name '*.h' -o -name '*.cpp' \) 2>/dev/null | sort
}

step "1/6 format (clang-format --dry-run -Werror)"
if command -v clang-format >/dev/null 2>&1; then
  if [ "$FIX_FORMAT" -eq 1 ]; then
    cxx_sources | xargs -r clang-format -i
  fi
  if ! cxx_sources | xargs -r clang-format --dry-run -Werror; then
    echo "format: FAILED (fix with: bash scripts/check.sh --fix-format)"
    exit 1
  fi
  echo "format: OK"
else
  echo "format: clang-format not installed, skipped (bash scripts/setup.sh installs it)"
fi

step "2/6 build with -Werror ($BUILD_DIR)"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTT_WERROR=ON
cmake --build "$BUILD_DIR" -j "$JOBS"

step "3/6 tests (unit, golden, error, e2e)"
OMP_WAIT_POLICY=passive ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" \
  -L "unit|golden|error|e2e"

step "4/6 layering"
python3 scripts/check_layering.py

step "5/6 line budget"
python3 scripts/line_budget.py

step "6/6 clang-tidy on changed files"
if [ "$RUN_TIDY" -eq 0 ]; then
  echo "clang-tidy: skipped (--no-tidy)"
elif ! command -v clang-tidy >/dev/null 2>&1; then
  echo "clang-tidy: not installed, skipped"
elif ! git rev-parse --verify -q HEAD >/dev/null 2>&1; then
  echo "clang-tidy: no git history to diff against, skipped"
else
  mapfile -t changed < <({
    git diff --name-only HEAD -- '*.cpp'
    git ls-files --others --exclude-standard -- '*.cpp'
  } | sort -u | grep -E '^(src|tools)/' || true)
  if [ "${#changed[@]}" -eq 0 ]; then
    echo "clang-tidy: no changed .cpp files under src/ or tools/"
  else
    clang-tidy -p "$BUILD_DIR" --quiet "${changed[@]}"
  fi
fi

printf '\ncheck.sh: all steps passed\n'

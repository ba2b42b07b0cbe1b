#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Regenerates the golden files (tests/golden/**) from the current code; review the diff after.
# Usage: scripts/update_golden.sh [BUILD_DIR]   (default: build)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
cmake --build "$build" --target golden_test
TT_UPDATE_GOLDEN=1 "$build/tests/golden/golden_test"
git -C "$root" --no-pager diff --stat -- tests/golden || true

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main demonstration: installs what is missing, builds the tensortune binary in build-main
# (Release), and benches matmul 1024x1024x1024 float32 on this machine with the hand-written
# schedule in examples/matmul_1024_schedule.json (checked against the default schedule first).
# Extra arguments are passed on to `tensortune bench` (e.g. --json, --threads 2).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=build-main
JOBS="$(nproc 2>/dev/null || echo 2)"

bash scripts/setup.sh

cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTT_BUILD_TESTS=OFF \
  -DTT_BUILD_BENCH=OFF >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS" --target tensortune

export OMP_WAIT_POLICY=passive
echo "tensortune bench: matmul 1024x1024x1024 float32 with examples/matmul_1024_schedule.json"
"./$BUILD_DIR/tools/tensortune/tensortune" bench --workload matmul:M=1024,N=1024,K=1024 --target native \
  --schedule examples/matmul_1024_schedule.json "$@"

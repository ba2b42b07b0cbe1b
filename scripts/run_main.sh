#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: installs what is missing, builds tensortune in build-main (Release), tunes
# matmul 1024x1024x1024 float32 on this machine into the SQLite database
# tuning_logs/tensortune.db (resuming from what it already holds), then shows the result: the
# best records, the tuned kernel timed side by side with what an untuned build gets (zero-shot,
# and the naive default), and an HTML report.
# Environment: TT_WORKLOAD (a workload spec), TT_TRIALS (default 200), TT_DB (database path).
# Extra arguments are passed on to `tensortune tune` (e.g. --tuner xgb-evo, --seed 3).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=build-main
JOBS="$(nproc 2>/dev/null || echo 2)"
WORKLOAD="${TT_WORKLOAD:-matmul:M=1024,N=1024,K=1024}"
TRIALS="${TT_TRIALS:-200}"
DB="${TT_DB:-tuning_logs/tensortune.db}"

bash scripts/setup.sh

cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTT_BUILD_TESTS=OFF \
  -DTT_BUILD_BENCH=OFF >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS" --target tensortune

export OMP_WAIT_POLICY=passive
TT="./$BUILD_DIR/tools/tensortune/tensortune"
echo "== tensortune tune: $WORKLOAD, $TRIALS trials into $DB"
"$TT" tune --workload "$WORKLOAD" --target native --trials "$TRIALS" --db "$DB" "$@"
echo "== the best records"
"$TT" db best --db "$DB" --workload "$WORKLOAD" --k 3
echo "== the best kernel, timed side by side with the untuned ones (zero-shot, default)"
# zero-shot: what the shipped cost model picks with no record at all (records are ignored).
"$TT" bench --workload "$WORKLOAD" --target native --db "$DB" --schedule best --compare zero-shot \
  --compare default --rounds 3
REPORT="$(dirname "$DB")/report.html"
"$TT" report --db "$DB" --out "$REPORT"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The measurement queue on PostgreSQL, on this machine:
#   1. its own cost per job: build/bench/queue_throughput with 8 worker processes (goal >= 500
#      jobs/s);
#   2. a real tuning job through the queue against the same job measured locally, on the same
#      cores, same run: trials/s of each and their ratio (goal >= 0.9), with 1 and 2 workers.
#   bench/queue_throughput.sh [BUILD_DIR] [TRIALS]      (defaults: build-ci, 64)
# Starts a throwaway server with scripts/pg_server.sh and stops it at the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD="${1:-build-ci}"
TRIALS="${2:-64}"
TT="$BUILD/tools/tensortune/tensortune"
STATE="$(mktemp -d /tmp/tt-queue-bench.XXXXXX)"
trap 'bash scripts/pg_server.sh stop "$STATE" >/dev/null 2>&1 || true; rm -rf "$STATE"' EXIT
SERVER="$(bash scripts/pg_server.sh start "$STATE")"
createdb() { psql -q "$SERVER/postgres" -c "CREATE DATABASE $1" >/dev/null; }

echo "== queue overhead (trivial kernel, 8 workers)"
createdb overhead
"$BUILD/bench/queue_throughput" --db "$SERVER/overhead" --jobs 4000 --workers 8 --reps 3

TUNE=(tune --workload matmul:M=256,N=256,K=256 --target native --trials "$TRIALS" --batch 16
  --tuner random --seed 1 --confirm 0 --progress none)
seconds() { python3 -c "import sys,time; print(f'{time.time():.3f}')"; }

echo "== a real tuning job: local against the queue ($TRIALS trials of matmul 256^3)"
local_db="$STATE/local.db"
t0=$(seconds)
"$TT" "${TUNE[@]}" --db "$local_db" >/dev/null
t1=$(seconds)
local_s=$(python3 -c "print($t1 - $t0)")
for workers in 1 2; do
  createdb "queue$workers"
  url="$SERVER/queue$workers"
  pids=()
  for ((w = 0; w < workers; w++)); do
    "$TT" worker --db "$url" --target native --idle-exit 30 2>/dev/null &
    pids+=($!)
  done
  t0=$(seconds)
  "$TT" "${TUNE[@]}" --db "$url" --measure-on queue >/dev/null
  t1=$(seconds)
  kill -TERM "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  queue_s=$(python3 -c "print($t1 - $t0)")
  python3 - "$TRIALS" "$local_s" "$queue_s" "$workers" <<'EOF'
import sys
trials, local_s, queue_s, workers = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
print(f"local {trials / local_s:.2f} trials/s ({local_s:.1f} s); queue with {workers} worker(s) "
      f"{trials / queue_s:.2f} trials/s ({queue_s:.1f} s); ratio queue/local "
      f"{local_s / queue_s:.2f} (goal >= 0.9)")
EOF
done

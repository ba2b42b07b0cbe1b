#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Coverage-guided fuzzing with libFuzzer, ASan and UBSan (clang 19):
#   scripts/fuzz.sh [--keep] TARGET DURATION
# TARGET is a file name of tests/fuzz/ (workload_spec, schedule_replay, jsonl_import,
# worker_frame, npy, onnx_import) or "all"; DURATION is per target: 30s, 10m, 2h.
# Builds build-fuzz/ (scripts/lib/sanitizer_build.sh; only the fuzz targets and the libraries they
# link, unless scripts/sanitize.sh built the rest there already), runs each target from
# its committed corpus, writes new inputs to a scratch folder and, with --keep, merges them into
# tests/fuzz/corpus/TARGET/. Crash inputs land in build-fuzz/findings/TARGET/. Prints per target
# executions per second, coverage (cov/ft of libFuzzer's last stats line), crashes found and slow
# units (inputs over 10 s, kept in findings/ but not counted as crashes). Targets run side by
# side, one per core (TT_FUZZ_JOBS sets how many at once).
# TT_FUZZ_CMAKE_ARGS adds CMake options (e.g. a compiler launcher for ccache); TT_SAN_BUILD_DIR
# names another build folder; TT_FUZZ_ARGS adds
# libFuzzer flags (e.g. "-fork=1 -ignore_crashes=1" to fuzz on past a known open crash).
# Exits 1 when any target found a crash.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
usage() {
  echo "usage: scripts/fuzz.sh [--keep] TARGET|all DURATION (e.g. 30s, 10m, 2h)" >&2
  exit 2
}
KEEP=0
if [ "${1:-}" = "--keep" ]; then KEEP=1; shift; fi
[ $# -eq 2 ] || usage
TARGET="$1"
case "$2" in
  *[0-9]s) SECONDS_EACH="${2%s}" ;;
  *[0-9]m) SECONDS_EACH=$(( ${2%m} * 60 )) ;;
  *[0-9]h) SECONDS_EACH=$(( ${2%h} * 3600 )) ;;
  *) usage ;;
esac
[[ "$SECONDS_EACH" =~ ^[0-9]+$ ]] || usage

ALL=(workload_spec schedule_replay jsonl_import worker_frame npy onnx_import)
if [ "$TARGET" = all ]; then TARGETS=("${ALL[@]}"); else TARGETS=("$TARGET"); fi
for t in "${TARGETS[@]}"; do
  if [ ! -f "tests/fuzz/$t.cpp" ]; then
    echo "fuzz.sh: no fuzz target '$t' (tests/fuzz/$t.cpp)" >&2
    exit 2
  fi
done

# shellcheck source=scripts/lib/sanitizer_build.sh
source scripts/lib/sanitizer_build.sh
san_configure
BUILD="$SAN_BUILD"
JOBS="$(nproc 2>/dev/null || echo 2)"
cmake --build "$BUILD" -j "$JOBS" --target "${TARGETS[@]/#/fuzz_}"

# A unit that runs this long, or a process this large, is a finding. The limits are wall time
# and resident memory under ASan (about 20x slower than -O2 on the allocation-heavy lowering),
# on a shared 2-core machine: 10 s flagged a schedule that lowers in 0.2 s at -O2 and 5 s under
# ASan once a build ran beside it, and 2 GB flagged a merge of a large corpus, not any one input.
UNIT_TIMEOUT="${TT_FUZZ_UNIT_TIMEOUT:-60}"
RSS_LIMIT_MB="${TT_FUZZ_RSS_LIMIT_MB:-4096}"
export OMP_WAIT_POLICY=passive
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
# run_target T: fuzzes T, then writes its summary line to logs/T.summary and the number of
# findings (crash inputs, or a failed run without one) to logs/T.found.
run_target() {
  local t="$1" found=0
  local scratch="$BUILD/scratch/$t" findings="$BUILD/findings/$t" log="$BUILD/logs/$t.log"
  mkdir -p "$scratch" "$findings" "$(dirname "$log")"
  # Crashes of earlier runs stay in $findings; count only this run's.
  local marker="$BUILD/logs/$t.start"
  touch "$marker"
  echo "fuzz.sh: $t for ${SECONDS_EACH}s (log $log)"
  local dict=()
  if [ -f "tests/fuzz/$t.dict" ]; then dict=(-dict="tests/fuzz/$t.dict"); fi
  local rc=0
  # shellcheck disable=SC2086  # TT_FUZZ_ARGS is a list of flags
  "$BUILD/tests/fuzz/fuzz_$t" -max_total_time="$SECONDS_EACH" -timeout="$UNIT_TIMEOUT" \
    -rss_limit_mb="$RSS_LIMIT_MB" \
    "${dict[@]}" -artifact_prefix="$findings/" -print_final_stats=1 ${TT_FUZZ_ARGS:-} \
    "$scratch" "tests/fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  local stats cov ft execs runs crashes slow
  stats="$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)"
  cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$stats")"
  ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$stats")"
  execs="$(sed -n 's/.*exec\/s: \([0-9]*\).*/\1/p' <<<"$stats")"
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
  # libFuzzer also saves inputs slower than -report_slow_units (10 s) as slow-unit-*: counted
  # apart, not as findings (under ASan on a busy 2-core host a 0.1 s input can take that long).
  crashes="$(find "$findings" -type f -newer "$marker" ! -name 'slow-unit-*' | wc -l)"
  slow="$(find "$findings" -type f -newer "$marker" -name 'slow-unit-*' | wc -l)"
  found=$((found + crashes))
  if [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ]; then
    echo "fuzz.sh: $t exited $rc without a crash input; see $log" >&2
    found=$((found + 1))
  fi
  grep -h "schedules checked" "$log" || true
  printf '%-16s %8s exec/s %10s runs  cov %6s  ft %6s  crashes %s  slow %s\n' "$t" \
    "${execs:-?}" "${runs:-?}" "${cov:-?}" "${ft:-?}" "$crashes" "$slow" >"$BUILD/logs/$t.summary"
  if [ "$KEEP" -eq 1 ]; then
    "$BUILD/tests/fuzz/fuzz_$t" -merge=1 -rss_limit_mb="$RSS_LIMIT_MB" \
      -timeout="$UNIT_TIMEOUT" -artifact_prefix="$findings/" \
      "tests/fuzz/corpus/$t" "$scratch" \
      >>"$log" 2>&1
    echo "fuzz.sh: merged new inputs of $t into tests/fuzz/corpus/$t"
  fi
  echo "$found" >"$BUILD/logs/$t.found"
}

# One target per core at a time: each is one process, and replaying a grown corpus under ASan
# takes minutes, so on 2 cores running them one after another doubled the CI's fuzzing time.
PARALLEL="${TT_FUZZ_JOBS:-$JOBS}"
running=0
for t in "${TARGETS[@]}"; do
  rm -f "$BUILD/logs/$t.summary" "$BUILD/logs/$t.found"
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$PARALLEL" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true
found=0
summary=()
for t in "${TARGETS[@]}"; do
  if [ -f "$BUILD/logs/$t.found" ]; then
    found=$((found + $(cat "$BUILD/logs/$t.found")))
    summary+=("$(cat "$BUILD/logs/$t.summary")")
  else
    echo "fuzz.sh: $t did not finish; see $BUILD/logs/$t.log" >&2
    found=$((found + 1))
  fi
done
printf '%s\n' "${summary[@]}"
[ "$found" -eq 0 ]

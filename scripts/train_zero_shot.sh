#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the shipped zero-shot cost model in one command: tunes the corpus
# (scripts/zero_shot_corpus.sh, TRIALS trials per workload into DB, resuming what DB holds), then
# trains tuning_logs/zero_shot/cpu.vN.json on it (N: the build's feature version). Run it on an
# idle machine: the corpus' records are measurements. About 40 s per workload at 48 trials on 2
# cores, 25 minutes for the whole corpus.
# Usage: scripts/train_zero_shot.sh [BUILD_DIR] [DB] [TRIALS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD="${1:-build-main}"
DB="${2:-tuning_logs/zero_shot_corpus.db}"
TRIALS="${3:-48}"
TT="$BUILD/tools/tensortune/tensortune"
[ -x "$TT" ] || { echo "train_zero_shot.sh: build $TT first" >&2; exit 1; }
VERSION="$(grep -o 'kFeatureVersion = [0-9]*' include/tensortune/cost_model/features.h | grep -o '[0-9]*$')"
mkdir -p tuning_logs/zero_shot
OMP_WAIT_POLICY=passive bash scripts/zero_shot_corpus.sh "$TT" "$DB" "$TRIALS"
"$TT" train-model --db "$DB" --out "tuning_logs/zero_shot/cpu.v$VERSION.json"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the shipped zero-shot cost model in one command. Three steps, each resumable:
#  1. tunes the operator corpus (scripts/zero_shot_corpus.sh, TRIALS trials per workload) into
#     DIR/corpus.db: about 40 s a workload on 2 cores, 30 minutes;
#  2. tunes the kernels of four models as tune-model builds them (conv, bias, residual add and
#     activation fused), each for a fixed time into DIR/<model>.db: ResNet-18 with --winograd
#     (25 minutes), MobileNet v2 (8), MobileNet v3 small and ShuffleNet v2 (6 each). A model
#     whose database is complete (DIR/<model>.done) is skipped;
#  3. trains tuning_logs/zero_shot/cpu.vN.json (N: the build's feature version) on all of them.
# About 80 minutes in all. Run it on an idle machine: the records are measurements, ranked
# within their workload, so only one device's times are compared with each other.
# Usage: scripts/train_zero_shot.sh [BUILD_DIR] [DIR] [TRIALS]
#   MODEL_MINUTES="resnet18=25 mobilenet_v2=8 ..." overrides the models and their budgets.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD="${1:-build-main}"
DIR="${2:-tuning_logs/zero_shot_corpus}"
TRIALS="${3:-48}"
MODEL_MINUTES="${MODEL_MINUTES:-resnet18=25 mobilenet_v2=8 mobilenet_v3_small=6 shufflenet_v2_x1_0=6}"
TT="$BUILD/tools/tensortune/tensortune"
[ -x "$TT" ] || { echo "train_zero_shot.sh: build $TT first" >&2; exit 1; }
VERSION="$(grep -o 'kFeatureVersion = [0-9]*' include/tensortune/cost_model/features.h | grep -o '[0-9]*$')"
mkdir -p tuning_logs/zero_shot "$DIR/models"
export OMP_WAIT_POLICY=passive
bash scripts/zero_shot_corpus.sh "$TT" "$DIR/corpus.db" "$TRIALS"

train=(--db "$DIR/corpus.db")
for entry in $MODEL_MINUTES; do
  name="${entry%%=*}" minutes="${entry#*=}"
  onnx="$DIR/models/$name.onnx"
  if [ ! -f "$onnx" ]; then
    if [ "$name" = resnet18 ]; then
      /usr/bin/python3 scripts/make_models.py --resnet18 "$DIR/models"
    else
      /usr/bin/python3 scripts/make_models.py --family "$DIR/models" --only "$name"
    fi
  fi
  [ -f "$onnx" ] || { echo "train_zero_shot.sh: make_models.py made no $onnx" >&2; exit 1; }
  if [ ! -f "$DIR/$name.done" ]; then
    # An interrupted job's records stay, but its budget starts again: begin the model afresh.
    rm -f "$DIR/$name.db" "$DIR/$name.db-wal" "$DIR/$name.db-shm"
    winograd=()
    [ "$name" = resnet18 ] && winograd=(--winograd)
    echo "train_zero_shot: tune-model $name for $minutes minutes"
    "$TT" tune-model "$onnx" --target native "${winograd[@]}" --time-budget "${minutes}m" \
      --db "$DIR/$name.db"
    touch "$DIR/$name.done"
  fi
  train+=(--db "$DIR/$name.db" --model "$onnx")
done
"$TT" train-model "${train[@]}" --out "tuning_logs/zero_shot/cpu.v$VERSION.json"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tunes the zero-shot corpus: every operator of the library and the layer shapes of the models
# users bring (ResNet-18, MobileNet-style depthwise and pointwise convs, transformer encoder
# matmuls, odd sizes), TRIALS trials each, into DB. scripts/train_zero_shot.sh then trains the
# shipped cost model on it. Resumes: workloads already holding TRIALS records are skipped by tune.
# Usage: zero_shot_corpus.sh TENSORTUNE DB [TRIALS]
set -euo pipefail
TT="$1"; DB="$2"; TRIALS="${3:-48}"
CORPUS=(
  # ResNet-18 (NCHW, batch 1): stem, the four stages and the 1x1 downsampling convs, classifier.
  "conv2d:N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3"
  "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1"
  "conv2d:N=1,C=64,H=56,W=56,K=128,R=3,S=3,stride=2,pad=1"
  "conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,pad=1"
  "conv2d:N=1,C=128,H=28,W=28,K=256,R=3,S=3,stride=2,pad=1"
  "conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,pad=1"
  "conv2d:N=1,C=256,H=14,W=14,K=512,R=3,S=3,stride=2,pad=1"
  "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,pad=1"
  "conv2d:N=1,C=64,H=56,W=56,K=128,R=1,S=1,stride=2"
  "conv2d:N=1,C=256,H=14,W=14,K=512,R=1,S=1,stride=2"
  "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1,bias=1,epilogue=relu"
  "dense:M=1,N=1000,K=512,bias=1"
  "pool2d:N=1,C=64,H=112,W=112,R=3,S=3,stride=2,pad=1"
  # MobileNet-style: depthwise 3x3 (stride 1 and 2) and pointwise 1x1 convs.
  "depthwise_conv2d:N=1,C=32,H=112,W=112,R=3,S=3,pad=1"
  "depthwise_conv2d:N=1,C=96,H=112,W=112,R=3,S=3,stride=2,pad=1"
  "depthwise_conv2d:N=1,C=144,H=56,W=56,R=3,S=3,pad=1"
  "depthwise_conv2d:N=1,C=384,H=14,W=14,R=3,S=3,pad=1"
  "conv2d:N=1,C=32,H=112,W=112,K=16,R=1,S=1"
  "conv2d:N=1,C=144,H=56,W=56,K=24,R=1,S=1"
  "conv2d:N=1,C=384,H=14,W=14,K=64,R=1,S=1"
  # Transformer encoder (sequence 128, hidden 768, 12 heads).
  "matmul:M=128,N=768,K=768"
  "matmul:M=128,N=3072,K=768"
  "matmul:M=128,N=768,K=3072"
  "batch_matmul:B=12,M=128,N=128,K=64"
  "batch_matmul:B=12,M=128,N=64,K=128"
  "softmax:M=1536,N=128"
  "layer_norm:M=128,N=768"
  "gelu:M=128,N=3072"
  # GEMMs square and odd, element-wise and data movement.
  "matmul:M=1024,N=1024,K=1024"
  "matmul:M=512,N=512,K=512"
  "matmul:M=257,N=1000,K=513"
  "matmul:M=100,N=300,K=700"
  "dense:M=64,N=1000,K=512,bias=1,epilogue=relu"
  "add:M=512,N=512"
  "mul:M=1024,N=256,broadcast=1"
  "relu:M=1024,N=1024"
  "transpose:M=1024,N=768"
  "pad:N=1,C=64,H=56,W=56,pad=1"
)
for spec in "${CORPUS[@]}"; do
  echo "zero_shot_corpus: $spec"
  "$TT" tune --workload "$spec" --target native --trials "$TRIALS" --confirm 0 --no-shipped --db "$DB"
done

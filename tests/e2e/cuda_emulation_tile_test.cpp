// SPDX-License-Identifier: Apache-2.0
// The shared-memory tiling sketches of the GPU rules ("gpu-tile+shared", "+vthread") run on the
// CPU emulation of CUDA (cuda_emulation.h) and match ir::eval: cooperative fetches over two and
// three thread indices, barriers, partial tiles, blocked accumulators shrunk to registers.
#include "cuda_emulation.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/search/search_space.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/support/rng.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace tensortune::codegen {
namespace {

using emulation::expect_emulation_matches_eval;

/// Runs `count` sampled configurations of each shared-memory sketch of `spec` (only the one
/// without virtual threads when `plain`) that lower and whose description holds `must`.
void check_shared_sketches(const std::string& spec,
                           int count,
                           uint64_t seed,
                           const std::string& must = "",
                           bool plain = false) {
  const target::Target target = target::Target::parse("cuda -arch=sm_90");
  const te::Workload workload = te::make_workload(spec);
  const search::SearchSpace space = search::SearchSpace::generate(workload, target);
  int checked_sketches = 0;
  for (size_t sketch = 0; sketch < space.sketches().size(); ++sketch) {
    const std::string& name = space.sketches()[sketch].name;
    if (name.find("gpu-tile+shared") == std::string::npos ||
        (plain && name.find("vthread") != std::string::npos)) {
      continue;
    }
    ++checked_sketches;
    support::Rng rng(seed);
    int ran = 0;
    for (int n = 0; n < 3000 && ran < count; ++n) {
      const search::Config config = space.sample(rng);
      if (config.sketch != static_cast<int>(sketch) ||
          space.describe(config).find(must) == std::string::npos) {
        continue;
      }
      schedule::Schedule schedule{workload.key(), space.steps(config)};
      try {
        lower::lower(workload, schedule, target);
      } catch (const ScheduleError&) {
        continue;  // the search drops these too
      }
      SCOPED_TRACE(spec + ": " + space.describe(config));
      expect_emulation_matches_eval(spec, schedule.steps);
      if (::testing::Test::HasFailure()) {
        return;
      }
      ++ran;
    }
    EXPECT_EQ(ran, count) << space.sketches()[sketch].name;
  }
  EXPECT_EQ(checked_sketches, plain ? 1 : 2) << spec;
}

TEST(CudaEmulationTile, SharedMatmulOnTilesThatDoNotDivide) {
  check_shared_sketches("matmul:M=24,N=20,K=12", 4, 3);
}

TEST(CudaEmulationTile, SharedBatchMatmulOverThreeThreadIndices) {
  check_shared_sketches("batch_matmul:B=2,M=8,N=12,K=6", 3, 4);
}

TEST(CudaEmulationTile, SharedConvWithInlinedPadding) {
  check_shared_sketches("conv2d:N=1,C=4,H=6,W=6,K=8,R=3,S=3,pad=1", 3, 5);
}

// The epilogue (bias, relu) is fused into the tiled kernel: one kernel writes the output.
TEST(CudaEmulationTile, SharedDenseWithFusedBiasAndRelu) {
  check_shared_sketches("dense:M=6,N=20,K=10,bias=1,epilogue=relu", 3, 6);
}

TEST(CudaEmulationTile, SharedConvWithFusedBiasAndRelu) {
  check_shared_sketches("conv2d:N=1,C=3,H=5,W=5,K=4,R=3,S=3,pad=1,bias=1,epilogue=relu", 2, 7);
}

// Inputs staged blocked by the block's tile of a threaded axis ([k][tile of i]): the copy reads
// in the input's order and stores transposed, zero past a tile that does not divide.
TEST(CudaEmulationTile, SharedCopiesBlockedAlongTheThreadsTile) {
  check_shared_sketches("matmul:M=24,N=20,K=12", 3, 8, ".shared.layout=1");
  check_shared_sketches("batch_matmul:B=2,M=8,N=12,K=6", 2, 9, ".shared.layout=1");
  check_shared_sketches("dense:M=6,N=20,K=10,bias=1,epilogue=relu", 2, 10, ".shared.layout=1");
  check_shared_sketches("conv2d:N=1,C=4,H=6,W=6,K=8,R=3,S=3,pad=1", 2, 11, ".shared.layout=1");
}

// A thread's tile interleaved in groups of 4 (threads x 4 apart), its last axis stored as float4s
// where the tiles divide it: partial tiles, three thread indices, fused epilogues.
TEST(CudaEmulationTile, InterleavedThreadTilesInGroupsOfFour) {
  constexpr bool plain = true;  // the knob is the sketch's without virtual threads
  check_shared_sketches("matmul:M=24,N=40,K=12", 3, 12, "interleave=1", plain);
  check_shared_sketches("batch_matmul:B=2,M=16,N=24,K=6", 2, 13, "interleave=1", plain);
  check_shared_sketches("dense:M=6,N=48,K=10,bias=1,epilogue=relu", 2, 14, "interleave=1", plain);
  check_shared_sketches("conv2d:N=1,C=3,H=4,W=16,K=16,R=3,S=3,pad=1,bias=1,epilogue=relu", 2, 15,
                        "interleave=1", plain);
}

// Eight-wide thread tiles that do interleave, under fused epilogues: a dense whose tiles divide N
// (float4 stores of bias + relu) and a conv whose 16 columns are 2 threads of 8.
TEST(CudaEmulationTile, InterleavedThreadTilesUnderFusedEpilogues) {
  const target::Target target = target::Target::parse("cuda -arch=sm_90");
  const std::string dense = "dense:M=6,N=48,K=10,bias=1,epilogue=relu";
  const search::SearchSpace dense_space =
      search::SearchSpace::generate(te::make_workload(dense), target);
  expect_emulation_matches_eval(
      dense, dense_space.steps(dense_space.from_json(support::Json::parse(
                 R"({"sketch": "bias_add:inline dense:gpu-tile+shared+fused", "knobs": {
                     "dense.i.split": [3,2], "dense.j.split": [6,8], "dense.local.k.split": [5],
                     "data.shared.layout": [1], "weight.shared.layout": [1],
                     "dense.local.interleave": [1], "dense.local.unroll": [16],
                     "dense.shared.vector": [1]}})"))));
  const std::string conv = "conv2d:N=1,C=3,H=4,W=16,K=16,R=3,S=3,pad=1,bias=1,epilogue=relu";
  const search::SearchSpace conv_space =
      search::SearchSpace::generate(te::make_workload(conv), target);
  expect_emulation_matches_eval(
      conv, conv_space.steps(conv_space.from_json(support::Json::parse(
                R"({"sketch": "bias_add:inline conv:gpu-tile+shared+fused conv_pad:inline",
                    "knobs": {"conv.f.split": [2,8], "conv.y.split": [4,1], "conv.x.split": [2,8],
                    "conv.local.rc.split": [3], "conv.local.ry.split": [3],
                    "conv.local.rx.split": [1], "weight.shared.layout": [1],
                    "conv.local.interleave": [1], "conv.local.unroll": [0],
                    "conv.shared.vector": [1]}})"))));
}

// Accumulators [2][128 threads][8] of one thread squeezed to 16 registers.
TEST(CudaEmulationTile, InterleavedAccumulatorsSqueezedAroundTheThreadIndex) {
  const std::string spec = "matmul:M=256,N=16,K=16";
  const search::SearchSpace space = search::SearchSpace::generate(
      te::make_workload(spec), target::Target::parse("cuda -arch=sm_90"));
  const search::Config config = space.from_json(support::Json::parse(
      R"({"sketch": "C:gpu-tile+shared+vthread", "knobs": {"C.i.split": [2,128],
          "C.j.split": [8,1], "C.local.k.split": [8], "A.shared.layout": [1],
          "C.local.unroll": [512], "C.shared.vector": [4]}})"));
  expect_emulation_matches_eval(spec, space.steps(config));
}

// Double-buffered 128x128 tiles of 32 KB a step: 64 KB of dynamic shared memory on a device, a
// static array under the emulation; and the same tiles in three stages.
TEST(CudaEmulationTile, DoubleBufferedTilesInDynamicSharedMemory) {
  const std::string spec = "matmul:M=256,N=128,K=64";
  const search::SearchSpace space = search::SearchSpace::generate(
      te::make_workload(spec), target::Target::parse("cuda -arch=sm_90"));
  for (const char* interleave : {"0", "1"}) {
    SCOPED_TRACE(std::string("interleave ") + interleave);
    const search::Config config = space.from_json(support::Json::parse(
        R"({"sketch": "C:gpu-tile+shared", "knobs": {"C.i.split": [16,8], "C.j.split": [16,8],
            "C.local.k.split": [32], "A.shared.layout": [1], "C.local.interleave": [)" +
        std::string(interleave) + R"(], "C.local.unroll": [0], "C.shared.vector": [4]}})"));
    expect_emulation_matches_eval(spec, space.steps(config));
  }
  // Three stages (TT_CUDA_PIPELINE=3): the emulation's copies land at once, so a step that
  // fetched into the stage it then reads would compute from the wrong tile.
  const search::Config config = space.from_json(support::Json::parse(
      R"({"sketch": "C:gpu-tile+shared", "knobs": {"C.i.split": [16,8], "C.j.split": [16,8],
          "C.local.k.split": [16], "A.shared.layout": [1], "C.local.interleave": [1],
          "C.local.unroll": [0], "C.shared.vector": [4]}})"));
  setenv("TT_CUDA_PIPELINE", "3", 1);
  expect_emulation_matches_eval(spec, space.steps(config));
  unsetenv("TT_CUDA_PIPELINE");
}

}  // namespace
}  // namespace tensortune::codegen

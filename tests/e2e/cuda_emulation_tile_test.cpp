// SPDX-License-Identifier: Apache-2.0
// The shared-memory tiling sketches of the GPU rules ("gpu-tile+shared", "+vthread") run on the
// CPU emulation of CUDA (cuda_emulation.h) and match ir::eval: cooperative fetches over two and
// three thread indices, barriers, partial tiles, blocked accumulators shrunk to registers.
#include "cuda_emulation.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/search/search_space.h"
#include "tensortune/support/error.h"
#include "tensortune/support/rng.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <string>

namespace tensortune::codegen {
namespace {

using emulation::expect_emulation_matches_eval;

/// Runs `count` sampled configurations of each shared-memory sketch of `spec` that lower.
void check_shared_sketches(const std::string& spec, int count, uint64_t seed) {
  const target::Target target = target::Target::parse("cuda -arch=sm_90");
  const te::Workload workload = te::make_workload(spec);
  const search::SearchSpace space = search::SearchSpace::generate(workload, target);
  int checked_sketches = 0;
  for (size_t sketch = 0; sketch < space.sketches().size(); ++sketch) {
    if (space.sketches()[sketch].name.find("gpu-tile+shared") == std::string::npos) {
      continue;
    }
    ++checked_sketches;
    support::Rng rng(seed);
    int ran = 0;
    for (int n = 0; n < 3000 && ran < count; ++n) {
      const search::Config config = space.sample(rng);
      if (config.sketch != static_cast<int>(sketch)) {
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
  EXPECT_EQ(checked_sketches, 2) << spec;
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

}  // namespace
}  // namespace tensortune::codegen

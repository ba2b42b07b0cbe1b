// SPDX-License-Identifier: Apache-2.0
// The GPU sketch rules on every operator of the library: sampled configurations bind blocks and
// threads, lower for "cuda -arch=sm_80" within the device limits, compute what the naive
// reference computes (ir::eval runs bound loops one iteration after another), and their CUDA C
// compiles to PTX through NVRTC.
#include "search_test_util.h"
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/ir/eval.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/search/search_space.h"
#include "tensortune/support/error.h"
#include "tensortune/support/rng.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace tensortune::search {
namespace {

const target::Target& gpu() {
  static const target::Target kTarget = target::Target::parse("cuda -arch=sm_80");
  return kTarget;
}

/// Lowers sampled configurations of `spec` until `wanted` lowered (or `attempts` were tried),
/// checking every lowered one against the reference. Returns how many lowered.
int check_gpu_space(const std::string& spec, int wanted, int attempts, uint64_t seed) {
  const te::Workload w = te::make_workload(spec);
  const SearchSpace space = SearchSpace::generate(w, gpu());
  support::Rng rng(seed);
  std::set<std::string> seen;
  int lowered = 0;
  std::string first_refusal;
  for (int n = 0; n < attempts && lowered < wanted; ++n) {
    const Config config = space.sample(rng);
    if (!seen.insert(space.key(config)).second) {
      continue;
    }
    SCOPED_TRACE(space.describe(config));
    ir::LoweredFunc f;
    try {
      lower::LowerOptions options;
      options.verify_each_pass = true;
      f = lower::lower(schedule::apply_steps(w, space.steps(config)), gpu(), "f", options);
    } catch (const ScheduleError& e) {
      first_refusal =
          first_refusal.empty() ? space.describe(config) + ": " + e.what() : first_refusal;
      continue;
    }
    ++lowered;
    testing::HostBuffers buffers(w);
    buffers.fill_inputs(5);
    poison_outputs(buffers);
    ir::eval(f, buffers.args());
    EXPECT_TRUE(testing::outputs_match_reference(w, buffers)) << ir::to_string(f);
    // The CUDA C of the lowered function, and its PTX where NVRTC loads (every CI machine with
    // CUDA installed; elsewhere generation alone is checked).
    const codegen::CudaModule module = codegen::generate_cuda(f, gpu());
    EXPECT_FALSE(module.kernels.empty());
    if (codegen::nvrtc_available()) {
      const codegen::NvrtcOutput out = codegen::compile_cuda(module.source, gpu(), false);
      for (const codegen::CudaKernel& k : module.kernels) {
        EXPECT_NE(out.ptx.find(".entry " + k.name), std::string::npos) << module.source;
      }
    }
    if (::testing::Test::HasFailure()) {
      break;
    }
  }
  const double size = space.size();
  EXPECT_GE(lowered, std::min<double>(wanted, static_cast<double>(seen.size())))
      << spec << ": space of " << size << "; first refusal: " << first_refusal;
  return lowered;
}

TEST(GpuSketchRules, TwentySampledConfigurationsOfEveryOperatorComputeTheReferenceAndCompile) {
  uint64_t seed = 3;
  for (const auto& [name, specs] : tiny_specs()) {
    for (const std::string& spec : specs) {
      SCOPED_TRACE(spec);
      EXPECT_GT(check_gpu_space(spec, 20, 400, seed++), 0);
      if (HasFailure()) {
        return;
      }
    }
  }
}

TEST(GpuSketchRules, MatmulIsTiledOverBlocksAndThreadsWithALocalAccumulator) {
  const te::Workload w = te::make_workload("matmul:M=256,N=256,K=128");
  const SearchSpace space = SearchSpace::generate(w, gpu());
  ASSERT_EQ(space.sketches().size(), 1u);
  EXPECT_EQ(space.sketches()[0].name, "C:gpu-tile+local");
  support::Rng rng(9);
  const std::vector<schedule::Step> steps = space.steps(space.sample(rng));
  std::set<std::string> kinds;
  for (const schedule::Step& s : steps) {
    kinds.insert(schedule::step_kind(s));
  }
  for (const char* k : {"cache_write", "blockIdx.x", "threadIdx.x", "compute_at"}) {
    EXPECT_EQ(kinds.count(k), 1u) << k;
  }
  // Lowered, the kernel binds both indices and accumulates in a local buffer.
  int lowered = 0;
  for (int n = 0; n < 50 && lowered == 0; ++n) {
    try {
      ir::LoweredFunc f =
          lower::lower(schedule::apply_steps(w, space.steps(space.sample(rng))), gpu(), "f");
      const std::string text = ir::to_string(f);
      EXPECT_NE(text.find("blockIdx.x"), std::string::npos) << text;
      EXPECT_NE(text.find("threadIdx.x"), std::string::npos) << text;
      EXPECT_NE(text.find(" local {"), std::string::npos) << text;
      ++lowered;
    } catch (const ScheduleError&) {
    }
  }
  EXPECT_EQ(lowered, 1);
}

TEST(GpuSketchRules, ElementwiseStagesBindEveryElementToAThread) {
  const te::Workload w = te::make_workload("relu:M=100,N=300");
  const SearchSpace space = SearchSpace::generate(w, gpu());
  ASSERT_EQ(space.sketches().size(), 1u);
  // One knob: threads per block, 32 .. 1024.
  ASSERT_EQ(space.sketches()[0].knobs.size(), 1u);
  EXPECT_EQ(space.sketches()[0].knobs[0].choices.size(), 6u);
}

}  // namespace
}  // namespace tensortune::search

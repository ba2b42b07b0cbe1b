// SPDX-License-Identifier: Apache-2.0
// The GPU cross-thread reduction sketch: offered beside gpu-generic for reductions without reuse
// over at least 32 elements, its knobs, and its sampled configurations, which must all lower
// (rows per block divide the rows, so every thread reaches the combine), compute what the naive
// reference computes, and compile through NVRTC where it loads.
#include "search_test_util.h"
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/ir/eval.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/search/search_space.h"
#include "tensortune/search/zero_shot.h"
#include "tensortune/support/error.h"
#include "tensortune/support/rng.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tensortune::search {
namespace {

TEST(GpuReduceSketch, SoftmaxGetsACrossThreadSketchBesideGpuGeneric) {
  const SearchSpace space = SearchSpace::generate(te::make_workload("softmax:M=4,N=100"), gpu());
  const std::vector<std::string> names = sketch_names(space);
  ASSERT_EQ(names.size(), 2u) << ::testing::PrintToString(names);
  EXPECT_EQ(names[1],
            "softmax_sum:gpu-cross-thread softmax_exp:inline softmax_max:gpu-cross-thread");
  const Sketch& sketch = space.sketches()[1];
  const Knob* threads = find_knob(sketch, "softmax_max.threads");
  ASSERT_NE(threads, nullptr);
  // [threads along the row, rows per block]: at most the 100 elements of a row; rows per block
  // that divide the 4 rows.
  const std::vector<std::vector<int64_t>> expected = {{32, 1}, {32, 2}, {32, 4},
                                                      {64, 1}, {64, 2}, {64, 4}};
  EXPECT_EQ(threads->choices, expected);
  EXPECT_NE(find_knob(sketch, "softmax_sum.unroll"), nullptr);
  EXPECT_NE(find_knob(sketch, "softmax.threads"), nullptr);  // the output stays generic
}

TEST(GpuReduceSketch, RowsTimesThreadsStayWithinABlock) {
  const SearchSpace space =
      SearchSpace::generate(te::make_workload("layer_norm:M=16,N=4096"), gpu());
  ASSERT_EQ(space.sketches().size(), 2u);
  const Knob* threads = find_knob(space.sketches()[1], "layer_norm_mean.threads");
  ASSERT_NE(threads, nullptr);
  std::set<int64_t> widths;
  for (const std::vector<int64_t>& c : threads->choices) {
    ASSERT_EQ(c.size(), 2u);
    EXPECT_LE(c[0] * c[1], 1024) << c[0] << " x " << c[1];
    EXPECT_EQ(16 % c[1], 0) << c[1];
    widths.insert(c[0]);
  }
  EXPECT_EQ(widths, (std::set<int64_t>{32, 64, 128, 256, 512, 1024}));
}

TEST(GpuReduceSketch, NotOfferedForShortReductionsOrReuseStages) {
  for (const char* spec : {"softmax:M=3,N=10", "pool2d:kind=avg,N=1,C=2,H=8,W=8,R=3,S=3,pad=1",
                           "matmul:M=64,N=64,K=64", "relu:M=4,N=100"}) {
    const SearchSpace space = SearchSpace::generate(te::make_workload(spec), gpu());
    for (const std::string& name : sketch_names(space)) {
      EXPECT_EQ(name.find("gpu-cross-thread"), std::string::npos) << spec << ": " << name;
    }
  }
}

/// Samples configurations of the cross-thread sketch of `spec`; each must lower, compute the
/// reference and compile. Returns how many distinct ones were checked.
int check_cross_thread_sketch(const std::string& spec, int wanted, uint64_t seed) {
  const te::Workload w = te::make_workload(spec);
  const SearchSpace space = SearchSpace::generate(w, gpu());
  const std::vector<std::string> names = sketch_names(space);
  const auto at = std::find_if(names.begin(), names.end(), [](const std::string& name) {
    return name.find("gpu-cross-thread") != std::string::npos;
  });
  EXPECT_NE(at, names.end()) << spec;
  const int cross_thread = static_cast<int>(at - names.begin());
  support::Rng rng(seed);
  std::set<std::string> seen;
  int checked = 0;
  for (int n = 0; n < 40 * wanted && checked < wanted; ++n) {
    const Config config = space.sample(rng);
    if (config.sketch != cross_thread || !seen.insert(space.key(config)).second) {
      continue;
    }
    SCOPED_TRACE(space.describe(config));
    lower::LowerOptions options;
    options.verify_each_pass = true;
    ir::LoweredFunc f;
    try {
      f = lower::lower(schedule::apply_steps(w, space.steps(config)), gpu(), "f", options);
    } catch (const ScheduleError& e) {
      ADD_FAILURE() << "refused: " << e.what();
      continue;
    }
    ++checked;
    testing::HostBuffers buffers(w);
    buffers.fill_inputs(5);
    poison_outputs(buffers);
    ir::eval(f, buffers.args());
    EXPECT_TRUE(testing::outputs_match_reference(w, buffers)) << ir::to_string(f);
    const codegen::CudaModule module = codegen::generate_cuda(f, gpu());
    EXPECT_NE(module.source.find("__shfl_down_sync"), std::string::npos) << module.source;
    EXPECT_NE(module.source.find("_rf[1];"), std::string::npos) << module.source;
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
  return checked;
}

TEST(GpuReduceSketch, SampledConfigurationsComputeTheReferenceAndCompile) {
  EXPECT_GE(check_cross_thread_sketch("softmax:M=6,N=100", 12, 1), 12);
  EXPECT_GE(check_cross_thread_sketch("layer_norm:M=4,N=72", 12, 2), 12);
  EXPECT_GE(check_cross_thread_sketch("softmax:M=2,N=1500", 8, 3), 8);
  // A global pool: the 7x7 window's two reduction axes fused, then split over the threads.
  EXPECT_GE(check_cross_thread_sketch("pool2d:kind=avg,N=1,C=4,H=7,W=7,R=7,S=7", 6, 4), 6);
  // Matrix-vector products, B stored K x N (as the model importer lays out Gemm's weights) and
  // N x K (dense), the second with its bias added by a generic stage.
  EXPECT_GE(check_cross_thread_sketch("matmul:M=1,N=40,K=96,constant_b=1", 8, 5), 8);
  EXPECT_GE(check_cross_thread_sketch("dense:M=2,N=24,K=64,bias=1", 8, 6), 8);
}

// A matrix-vector product's few outputs cannot fill a GPU one thread each: the cross-thread
// sketch joins the tilings, and the zero-shot pick takes it (ResNet-18's classifier ran 0.104 ms
// on an H200 as one block of the shared tiling). A square product keeps the tilings alone.
TEST(GpuReduceSketch, MatrixVectorProductsAlsoGetIt) {
  const te::Workload gemv = te::make_workload("matmul:M=1,N=1000,K=512,constant_b=1");
  const std::vector<std::string> names = sketch_names(SearchSpace::generate(gemv, gpu()));
  ASSERT_EQ(names.size(), 4u) << ::testing::PrintToString(names);
  EXPECT_EQ(names[3], "C:gpu-cross-thread");
  const std::optional<ZeroShotPick> pick = ZeroShot(nullptr).pick(gemv, gpu());
  ASSERT_TRUE(pick.has_value());
  EXPECT_NE(pick->config.find("gpu-cross-thread"), std::string::npos) << pick->config;
  for (const char* spec : {"matmul:M=256,N=256,K=256", "matmul:M=8,N=1000,K=64"}) {
    for (const std::string& name :
         sketch_names(SearchSpace::generate(te::make_workload(spec), gpu()))) {
      EXPECT_EQ(name.find("gpu-cross-thread"), std::string::npos) << spec << ": " << name;
    }
  }
}

// A sum of every element: one block of threads (the output's single element), the two reduction
// axes fused.
TEST(GpuReduceSketch, ASumOfEverythingRunsInOneBlock) {
  te::Tensor a = te::placeholder({8, 45}, ir::DataType::float32(), "A");
  ir::IterVar r = te::reduce_axis(8, "r");
  ir::IterVar c = te::reduce_axis(45, "c");
  te::Tensor total = te::compute(
      {1},
      [&](const std::vector<ir::Var>&) {
        return te::sum(a({r.var, c.var}), {r, c});
      },
      "total");
  const te::Workload w("sum_all", {a}, {total});
  const SearchSpace space = SearchSpace::generate(w, gpu());
  // The input misses the output's extent-1 axis, so the tiling sketches are offered too.
  const std::vector<std::string> names = sketch_names(space);
  const auto found = std::find(names.begin(), names.end(), "total:gpu-cross-thread");
  ASSERT_NE(found, names.end()) << ::testing::PrintToString(names);
  const auto sketch = static_cast<int>(found - names.begin());
  support::Rng rng(6);
  int checked = 0;
  for (int n = 0; n < 200 && checked < 4; ++n) {
    const Config config = space.sample(rng);
    if (config.sketch != sketch) {
      continue;
    }
    const ir::LoweredFunc f =
        lower::lower(schedule::apply_steps(w, space.steps(config)), gpu(), "f");
    testing::HostBuffers buffers(w);
    buffers.fill_inputs(8);
    poison_outputs(buffers);
    ir::eval(f, buffers.args());
    EXPECT_TRUE(testing::outputs_match_reference(w, buffers)) << ir::to_string(f);
    const codegen::CudaModule module = codegen::generate_cuda(f, gpu());
    // The extent-1 block loop is simplified away: the init store is a kernel of its own.
    ASSERT_FALSE(module.kernels.empty());
    EXPECT_EQ(module.kernels.back().grid[0], 1);
    EXPECT_GE(module.kernels.back().block[0], 32);
    EXPECT_NE(module.source.find("total_rf[1];"), std::string::npos) << module.source;
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

}  // namespace
}  // namespace tensortune::search

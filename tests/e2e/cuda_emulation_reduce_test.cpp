// SPDX-License-Identifier: Apache-2.0
// Cross-thread reductions run on the emulated GPU against ir::eval: a reduction axis split so
// that its inner part is bound to threadIdx.x (each thread strides over the reduction), rows on
// blocks and, for several rows per block, on threadIdx.y. The widths cover every way the
// generated code combines: shuffles within a warp segment, warps plus shared slots, and the
// shared-memory tree for widths that are no power of two; and the search's cross-thread sketch.
#include "cuda_emulation.h"
#include "tensortune/ir/ops.h"
#include "tensortune/schedule/step.h"
#include "tensortune/search/search_space.h"
#include "tensortune/support/rng.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tensortune::codegen {
namespace {

using emulation::expect_emulation_matches_eval;
using schedule::Annotate;
using schedule::Reorder;
using schedule::Split;

/// Appends the steps of a cross-thread row reduction of `stage` (one data axis `row`, one
/// reduction axis `axis`): `threads` threads per row on threadIdx.x striding over the reduction,
/// `rows` rows per block on threadIdx.y (1: none), the remaining rows on blockIdx.x.
void reduce_rows(const std::string& stage,
                 const std::string& row,
                 const std::string& axis,
                 int64_t threads,
                 int64_t rows,
                 std::vector<schedule::Step>& out) {
  out.emplace_back(Split{stage, axis, threads, false});
  std::vector<std::string> order = {row, axis + ".i", axis + ".o"};
  if (rows > 1) {
    out.emplace_back(Split{stage, row, rows, false});
    order = {row + ".o", row + ".i", axis + ".i", axis + ".o"};
    out.emplace_back(Annotate{stage, row + ".i", ir::ForKind::ThreadY});
  }
  out.emplace_back(Reorder{stage, order});
  out.emplace_back(Annotate{stage, order[0], ir::ForKind::BlockX});
  out.emplace_back(Annotate{stage, axis + ".i", ir::ForKind::ThreadX});
}

std::vector<schedule::Step> softmax_steps(int64_t threads, int64_t rows) {
  std::vector<schedule::Step> steps;
  reduce_rows("softmax_max", "i", "rk", threads, rows, steps);
  reduce_rows("softmax_sum", "i", "rk", threads, rows, steps);
  return steps;
}

std::vector<schedule::Step> layer_norm_steps(int64_t threads, int64_t rows) {
  std::vector<schedule::Step> steps;
  reduce_rows("layer_norm_mean", "i", "rk", threads, rows, steps);
  reduce_rows("layer_norm_var", "i", "rk", threads, rows, steps);
  return steps;
}

// 64 threads (two warps) over rows of 100: the last stride is partial.
TEST(CudaEmulationReduce, SoftmaxTwoWarpsPerRowOnANonDividingExtent) {
  expect_emulation_matches_eval("softmax:M=3,N=100", softmax_steps(64, 1));
}

TEST(CudaEmulationReduce, SoftmaxOneWarpPerRowOnADividingExtent) {
  expect_emulation_matches_eval("softmax:M=2,N=64", softmax_steps(32, 1));
}

// Rows share a warp: 16 threads per row, 2 rows per block (a full warp), and 8 threads per row,
// 3 rows per block (24 threads: a partial warp).
TEST(CudaEmulationReduce, SoftmaxSeveralRowsPerBlockShareAWarp) {
  expect_emulation_matches_eval("softmax:M=6,N=40", softmax_steps(16, 2));
  expect_emulation_matches_eval("softmax:M=6,N=21", softmax_steps(8, 3));
}

TEST(CudaEmulationReduce, LayerNormSeveralWarpsAndRowsPerBlock) {
  expect_emulation_matches_eval("layer_norm:M=4,N=300", layer_norm_steps(128, 2));
}

// 24 and 48 threads per row: neither a power of two nor whole warps, so a shared-memory tree.
TEST(CudaEmulationReduce, LayerNormTreeForWidthsThatAreNoPowerOfTwo) {
  expect_emulation_matches_eval("layer_norm:M=4,N=50", layer_norm_steps(24, 2));
  expect_emulation_matches_eval("layer_norm:M=3,N=100", layer_norm_steps(48, 1));
}

// A sum of every element into one: both reduction axes fused, one block.
TEST(CudaEmulationReduce, SumOfEverythingInOneBlock) {
  te::Tensor a = te::placeholder({8, 45}, ir::DataType::float32(), "A");
  ir::IterVar r = te::reduce_axis(8, "r");
  ir::IterVar c = te::reduce_axis(45, "c");
  te::Tensor total = te::compute(
      {1},
      [&](const std::vector<ir::Var>&) {
        return te::sum(a({r.var, c.var}), {r, c});
      },
      "total");
  te::Workload workload("sum_all", {a}, {total});
  expect_emulation_matches_eval(
      workload, {schedule::Fuse{"total", {"r", "c"}}, Split{"total", "r@c", 128, false},
                 Reorder{"total", {"i", "r@c.i", "r@c.o"}},
                 Annotate{"total", "r@c.i", ir::ForKind::ThreadX}});
}

// max, min and a product per row, with widths that do and do not divide the rows.
TEST(CudaEmulationReduce, MaxMinAndProductPerRow) {
  te::Tensor a = te::placeholder({5, 70}, ir::DataType::float32(), "A");
  auto row_reduce = [&](const std::string& name, auto reducer, bool scaled) {
    ir::IterVar k = te::reduce_axis(70, "k");
    return te::compute(
        {5},
        [&](const std::vector<ir::Var>& i) {
          ir::Expr x = a({i[0], k.var});
          const ir::DataType f32 = ir::DataType::float32();
          ir::Expr near_one = ir::make_const(f32, 1.0) + x * ir::make_const(f32, 0.01);
          return reducer(scaled ? near_one : x, std::vector<ir::IterVar>{k});
        },
        name);
  };
  te::Tensor hi = row_reduce("hi", te::max_reduce, false);
  te::Tensor lo = row_reduce("lo", te::min_reduce, false);
  te::Tensor pr = row_reduce("pr", te::prod, true);
  te::Workload workload("row_reductions", {a}, {hi, lo, pr});
  std::vector<schedule::Step> steps;
  reduce_rows("hi", "i", "k", 32, 1, steps);
  reduce_rows("lo", "i", "k", 35, 1, steps);
  reduce_rows("pr", "i", "k", 64, 1, steps);
  expect_emulation_matches_eval(workload, steps);
}

// The reduction accumulates into a local buffer computed at the output's block loop: every
// thread keeps its own copy of the total, which the output stage then copies out.
TEST(CudaEmulationReduce, IntoALocalBufferEveryThreadHolds) {
  std::vector<schedule::Step> steps = {schedule::CacheWrite{"softmax_sum", ir::MemoryScope::Local},
                                       Annotate{"softmax_sum", "i", ir::ForKind::BlockX},
                                       schedule::ComputeAt{"softmax_sum.local", "softmax_sum", "i"},
                                       Split{"softmax_sum.local", "rk", 32, false},
                                       Reorder{"softmax_sum.local", {"i", "rk.i", "rk.o"}},
                                       Annotate{"softmax_sum.local", "rk.i", ir::ForKind::ThreadX}};
  expect_emulation_matches_eval("softmax:M=3,N=50", steps);
}

// out[i, j] = sum over k of A[i, k, j]: the accumulator row (out.local, a thread-private local
// buffer) is computed at the block's loop, one cross-thread reduction of 32 threads per column j,
// while out's own loop binds 64 threads: threads 32..63 skip the accumulation, join the combine,
// and each thread reads the totals from its own copy.
TEST(CudaEmulationReduce, NarrowerThanTheBlockIntoALocalRow) {
  te::Tensor a = te::placeholder({3, 40, 64}, ir::DataType::float32(), "A");
  ir::IterVar k = te::reduce_axis(40, "k");
  te::Tensor out = te::compute(
      {3, 64},
      [&](const std::vector<ir::Var>& v) {
        return te::sum(a({v[0], k.var, v[1]}), {k});
      },
      "out");
  te::Workload workload("middle_sum", {a}, {out});
  expect_emulation_matches_eval(
      workload,
      {schedule::CacheWrite{"out", ir::MemoryScope::Local},
       Annotate{"out", "i", ir::ForKind::BlockX}, Annotate{"out", "j", ir::ForKind::ThreadX},
       schedule::ComputeAt{"out.local", "out", "i"}, Split{"out.local", "k", 32, false},
       Reorder{"out.local", {"i", "j", "k.i", "k.o"}},
       Annotate{"out.local", "k.i", ir::ForKind::ThreadX}});
}

// Configurations the cross-thread sketch of the search space samples (fixed seed) run like the
// interpreter: rows and widths as the rule picks them, each thread striding over its row.
TEST(CudaEmulationReduce, SampledCrossThreadSchedules) {
  const target::Target target = target::Target::parse("cuda -arch=sm_90");
  for (const char* spec : {"softmax:M=4,N=100", "layer_norm:M=4,N=96"}) {
    const te::Workload workload = te::make_workload(spec);
    const search::SearchSpace space = search::SearchSpace::generate(workload, target);
    int sketch = -1;
    for (size_t k = 0; k < space.sketches().size(); ++k) {
      if (space.sketches()[k].name.find("gpu-cross-thread") != std::string::npos) {
        sketch = static_cast<int>(k);
      }
    }
    ASSERT_GE(sketch, 0) << spec;
    support::Rng rng(17);
    int run = 0;
    for (int n = 0; n < 200 && run < 3; ++n) {
      const search::Config config = space.sample(rng);
      if (config.sketch != sketch) {
        continue;
      }
      SCOPED_TRACE(std::string(spec) + ": " + space.describe(config));
      expect_emulation_matches_eval(spec, space.steps(config));
      ++run;
    }
    EXPECT_EQ(run, 3) << spec;
  }
}

}  // namespace
}  // namespace tensortune::codegen

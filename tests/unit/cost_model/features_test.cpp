// SPDX-License-Identifier: Apache-2.0
// Features of real lowered matmul schedules (default, tiled and vectorized, parallel, cache_write,
// guarded tails) and of other workloads: lengths, flops, lanes, parallel extents, cache lines,
// reuse, allocations, determinism.
#include "tensortune/cost_model/features.h"

#include "tensortune/ir/stmt.h"
#include "unit/cost_model/cost_model_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace tensortune::cost_model {
namespace {

using schedule::Annotate;
using testing::log_scaled;
using testing::lower_steps;
using testing::program_feature;
using testing::store_feature;

const char* const kMatmul = "matmul:M=64,N=64,K=64";
constexpr double kMatmulFlops = 2.0 * 64 * 64 * 64;

/// The row of the matmul update store C = C + A * B.
const StoreFeatures& update_row(const ProgramFeatures& f) {
  for (const StoreFeatures& row : f.stores) {
    if (store_feature(row, "is_reduction_update") == 1.0f) {
      return row;
    }
  }
  throw InternalError("no update store");
}

/// Cache lines touched by all (up to five) buffers in the innermost loop.
float innermost_lines(const StoreFeatures& row) {
  float sum = 0;
  for (int b = 0; b < 5; ++b) {
    sum += std::exp2(store_feature(row, "buf" + std::to_string(b) + ".lines_l1")) - 1.0f;
  }
  return sum;
}

ProgramFeatures tiled_vectorized() {
  return extract_features(lower_steps(kMatmul, testing::tiled_matmul(8, 16, 4, true, false)));
}

TEST(Features, LengthsMatchTheNames) {
  ProgramFeatures f = extract_features(lower_steps(kMatmul, {}));
  EXPECT_EQ(f.vector.size(), program_feature_names().size());
  ASSERT_EQ(f.stores.size(), 2u);  // the init store and the update
  for (const StoreFeatures& row : f.stores) {
    EXPECT_EQ(row.values.size(), store_feature_names().size());
    EXPECT_EQ(row.buffer, "C");
  }
  std::set<std::string> unique(program_feature_names().begin(), program_feature_names().end());
  EXPECT_EQ(unique.size(), program_feature_names().size());
  EXPECT_EQ(program_feature_names().size(), 3 * store_feature_names().size() + 11);
}

TEST(Features, MatmulFlopsAreTwoMNK) {
  for (const ProgramFeatures& f :
       {extract_features(lower_steps(kMatmul, {})), tiled_vectorized()}) {
    EXPECT_FLOAT_EQ(program_feature(f, "total.flops"), log_scaled(kMatmulFlops));
    const StoreFeatures& update = update_row(f);
    EXPECT_FLOAT_EQ(store_feature(update, "flops"), log_scaled(kMatmulFlops));
    EXPECT_FLOAT_EQ(store_feature(update, "float_fma"), log_scaled(kMatmulFlops / 2));
    EXPECT_FLOAT_EQ(store_feature(update, "float_mul"), log_scaled(kMatmulFlops / 2));
    EXPECT_FLOAT_EQ(store_feature(update, "float_add_sub"), log_scaled(kMatmulFlops / 2));
  }
}

TEST(Features, VectorizedStoreHasItsLanes) {
  ProgramFeatures f = tiled_vectorized();
  const StoreFeatures& update = update_row(f);
  EXPECT_EQ(store_feature(update, "vector_lanes"), 16.0f);
  EXPECT_EQ(store_feature(update, "store_contiguous"), 1.0f);
  EXPECT_EQ(program_feature(f, "top.vector_lanes"), 16.0f);
  EXPECT_EQ(program_feature(f, "max.vector_lanes"), 16.0f);
  // The scalar schedule has one lane everywhere.
  ProgramFeatures plain = extract_features(lower_steps(kMatmul, {}));
  EXPECT_EQ(program_feature(plain, "max.vector_lanes"), 1.0f);
  EXPECT_EQ(program_feature(plain, "max.store_contiguous"), 0.0f);
}

TEST(Features, ParallelLoopShowsItsExtent) {
  ProgramFeatures f =
      extract_features(lower_steps(kMatmul, {Annotate{"C", "i", ir::ForKind::Parallel}}));
  const StoreFeatures& update = update_row(f);
  EXPECT_FLOAT_EQ(store_feature(update, "parallel_extent"), log_scaled(64));
  EXPECT_FLOAT_EQ(store_feature(update, "num_parallel_loops"), log_scaled(1));
  EXPECT_FLOAT_EQ(store_feature(update, "parallel_depth"), log_scaled(1));
  EXPECT_FLOAT_EQ(store_feature(update, "parallel_launches"), log_scaled(1));
  EXPECT_FLOAT_EQ(program_feature(f, "total.parallel_loops"), log_scaled(1));
  ProgramFeatures plain = extract_features(lower_steps(kMatmul, {}));
  EXPECT_EQ(program_feature(plain, "max.parallel_extent"), 0.0f);
}

TEST(Features, TilingTouchesFewerLinesInTheInnermostLoop) {
  const StoreFeatures naive = update_row(extract_features(lower_steps(kMatmul, {})));
  const StoreFeatures tiled = update_row(tiled_vectorized());
  // Naive innermost k: C 1 line, A 64 floats = 4 lines, B a column = 64 lines.
  EXPECT_FLOAT_EQ(innermost_lines(naive), 69.0f);
  // Tiled innermost k.i (4) around 16 lanes: C 1 line, A 4 floats = 1 line, B 4 rows of 64 B.
  EXPECT_FLOAT_EQ(innermost_lines(tiled), 6.0f);
}

TEST(Features, ReuseIsCarriedByTheLoopTheIndexIgnores) {
  const StoreFeatures naive = update_row(extract_features(lower_steps(kMatmul, {})));
  // Buffers by bytes: C (read and written), then A, then B (first-access order on ties).
  EXPECT_EQ(store_feature(naive, "buf0.read"), 1.0f);
  EXPECT_EQ(store_feature(naive, "buf0.write"), 1.0f);
  EXPECT_EQ(store_feature(naive, "buf1.write"), 0.0f);
  // C[i, j] is reused by k, the innermost loop: distance 1 iteration.
  EXPECT_EQ(store_feature(naive, "buf0.reuse_loop"), 1.0f);
  EXPECT_FLOAT_EQ(store_feature(naive, "buf0.reuse_distance"), log_scaled(1));
  // A[i, k] is reused by j: distance one k loop (64 iterations), 256 bytes in between.
  EXPECT_FLOAT_EQ(store_feature(naive, "buf1.reuse_distance"), log_scaled(64));
  EXPECT_FLOAT_EQ(store_feature(naive, "buf1.reuse_bytes"), log_scaled(256));
  EXPECT_FLOAT_EQ(store_feature(naive, "buf1.reuse_count"), log_scaled(64));
  // B[k, j] moves by a row per k step; A by one element.
  EXPECT_FLOAT_EQ(store_feature(naive, "buf2.innermost_stride"), log_scaled(64));
  EXPECT_FLOAT_EQ(store_feature(naive, "buf1.innermost_stride"), log_scaled(1));
  EXPECT_FLOAT_EQ(store_feature(naive, "buf2.unique_bytes"), log_scaled(64 * 64 * 4));
}

TEST(Features, CacheWriteShowsTheLocalAllocation) {
  ProgramFeatures f = extract_features(lower_steps(
      kMatmul, {schedule::CacheWrite{"C", ir::MemoryScope::Local},
                schedule::Tile{"C", "i", "j", 8, 16}, schedule::ComputeAt{"C.local", "C", "j.o"}}));
  bool saw_local = false;
  for (const StoreFeatures& row : f.stores) {
    if (row.buffer == "C.local") {
      saw_local = true;
      EXPECT_EQ(store_feature(row, "is_scratch"), 1.0f);
      EXPECT_EQ(store_feature(row, "is_output"), 0.0f);
      EXPECT_FLOAT_EQ(store_feature(row, "alloc_local_bytes"), log_scaled(8 * 16 * 4));
      EXPECT_FLOAT_EQ(store_feature(row, "alloc_executions"), log_scaled(8 * 4));
    } else {
      EXPECT_EQ(store_feature(row, "is_output"), 1.0f);
    }
  }
  EXPECT_TRUE(saw_local);
  EXPECT_FLOAT_EQ(program_feature(f, "total.alloc_bytes"), log_scaled(8 * 16 * 4));
}

TEST(Features, UnrolledCopiesKeepTheWorkOfTheLoop) {
  std::vector<schedule::Step> steps = testing::tiled_matmul(8, 16, 4, true, false);
  steps.push_back(Annotate{"C", "k.i", ir::ForKind::Unrolled});
  ProgramFeatures unrolled = extract_features(lower_steps(kMatmul, steps));
  ProgramFeatures looped = tiled_vectorized();
  ASSERT_EQ(unrolled.stores.size(), 5u);  // the init store and four copies of the update
  for (size_t s = 1; s < unrolled.stores.size(); ++s) {
    EXPECT_FLOAT_EQ(store_feature(unrolled.stores[s], "copies"), log_scaled(4));
    EXPECT_FLOAT_EQ(store_feature(unrolled.stores[s], "flops"), log_scaled(kMatmulFlops / 4));
  }
  // The program vector sees the copies as one statement with the work of all four.
  EXPECT_FLOAT_EQ(program_feature(unrolled, "top.flops"), log_scaled(kMatmulFlops));
  EXPECT_FLOAT_EQ(program_feature(unrolled, "top.flops"), program_feature(looped, "top.flops"));
  EXPECT_FLOAT_EQ(program_feature(unrolled, "top.copies"), log_scaled(4));
  EXPECT_FLOAT_EQ(program_feature(looped, "top.copies"), log_scaled(1));
  EXPECT_FLOAT_EQ(program_feature(unrolled, "total.stores"), log_scaled(5));
}

TEST(Features, GuardedTailIsPredicated) {
  ProgramFeatures f = extract_features(lower_steps(
      kMatmul,
      {schedule::Split{"C", "j", 24, false}, schedule::Reorder{"C", {"i", "j.o", "k", "j.i"}},
       schedule::Fuse{"C", {"i", "j.o"}}, Annotate{"C", "j.i", ir::ForKind::Vectorized}}));
  // Full tiles run an unpredicated copy (unswitch_guards), the boundary tiles a predicated one
  // (fused with i, the boundary j tile is every third value of i@j.o, so its offset is not one
  // constant and its guard stays); 24 lanes are no power of two, so each copy is three unrolled
  // stores of 8 lanes, and in the boundary tile (j = 48..71 of 64) only the last chunk keeps a
  // predicate.
  int predicated = 0;
  int full = 0;
  for (const StoreFeatures& row : f.stores) {
    if (store_feature(row, "is_reduction_update") != 1.0f) {
      continue;
    }
    EXPECT_EQ(store_feature(row, "vector_lanes"), 8.0f);
    if (store_feature(row, "predicated_store") == 1.0f) {
      EXPECT_GT(store_feature(row, "predicated_loads"), 0.0f);
      ++predicated;
    } else {
      EXPECT_EQ(store_feature(row, "predicated_loads"), 0.0f);
      ++full;
    }
  }
  EXPECT_EQ(predicated, 1);
  EXPECT_EQ(full, 5);
}

// A GPU kernel's launch shape, its shared memory and how neighbouring threads access each buffer
// (the 16x16 shared-memory matmul of the CUDA golden files); a CPU kernel has none of them.
TEST(Features, GpuLaunchSharedMemoryAndThreadStrides) {
  using schedule::CacheRead;
  using schedule::CacheWrite;
  using schedule::ComputeAt;
  const ir::ForKind bx = ir::ForKind::BlockX, by = ir::ForKind::BlockY;
  const ir::ForKind tx = ir::ForKind::ThreadX, ty = ir::ForKind::ThreadY;
  std::vector<schedule::Step> steps{CacheWrite{"C", ir::MemoryScope::Local},
                                    CacheRead{"A", ir::MemoryScope::Shared, {"C.local"}},
                                    CacheRead{"B", ir::MemoryScope::Shared, {"C.local"}},
                                    schedule::Tile{"C", "i", "j", 16, 16},
                                    Annotate{"C", "i.o", by},
                                    Annotate{"C", "j.o", bx},
                                    Annotate{"C", "i.i", ty},
                                    Annotate{"C", "j.i", tx},
                                    ComputeAt{"C.local", "C", "j.o"},
                                    schedule::Split{"C.local", "k", 16, false},
                                    schedule::Reorder{"C.local", {"k.o", "i", "j", "k.i"}},
                                    Annotate{"C.local", "i", ty},
                                    Annotate{"C.local", "j", tx}};
  for (const char* input : {"A.shared", "B.shared"}) {
    steps.push_back(ComputeAt{input, "C.local", "k.o"});
    steps.push_back(Annotate{input, "i", ty});
    steps.push_back(Annotate{input, "j", tx});
  }
  const te::Workload w = te::make_workload(kMatmul);
  lower::LowerOptions options;
  options.vectorize_and_unroll = false;  // as the tuner extracts features
  const ProgramFeatures f = extract_features(lower::lower(
      schedule::apply_steps(w, steps), target::Target::parse("cuda -arch=sm_90"), "f", options));
  const StoreFeatures& row = update_row(f);
  EXPECT_FLOAT_EQ(store_feature(row, "gpu_blocks"), log_scaled(16));
  EXPECT_FLOAT_EQ(store_feature(row, "gpu_threads_x"), log_scaled(16));
  EXPECT_FLOAT_EQ(store_feature(row, "gpu_threads_y"), log_scaled(16));
  EXPECT_FLOAT_EQ(store_feature(row, "gpu_threads_z"), log_scaled(1));
  EXPECT_FLOAT_EQ(store_feature(row, "gpu_threads"), log_scaled(256));
  EXPECT_FLOAT_EQ(store_feature(row, "alloc_shared_bytes"), log_scaled(2 * 16 * 16 * 4));
  // A.shared[i*16 + k] is the same for a row of threads; B.shared[k*16 + j] moves by one.
  std::set<float> shared_strides;
  for (int b = 0; b < 5; ++b) {
    const std::string slot = "buf" + std::to_string(b) + ".";
    if (store_feature(row, slot + "shared") == 1.0f) {
      shared_strides.insert(store_feature(row, slot + "thread_stride"));
    }
  }
  EXPECT_EQ(shared_strides, (std::set<float>{log_scaled(0), log_scaled(1)}));

  const StoreFeatures cpu = update_row(tiled_vectorized());  // a copy: the features are a temporary
  EXPECT_EQ(store_feature(cpu, "gpu_threads"), 0.0f);
  EXPECT_EQ(store_feature(cpu, "alloc_shared_bytes"), 0.0f);
}

TEST(Features, SameIrGivesTheSameVector) {
  ir::LoweredFunc f = lower_steps(kMatmul, testing::tiled_matmul(4, 8, 2, true, true));
  EXPECT_EQ(extract_features(f).vector, extract_features(f).vector);
  ir::LoweredFunc again = lower_steps(kMatmul, testing::tiled_matmul(4, 8, 2, true, true));
  EXPECT_EQ(extract_features(f).vector, extract_features(again).vector);
}

TEST(Features, DifferentSchedulesGiveDifferentVectors) {
  std::vector<std::vector<float>> vectors{
      extract_features(lower_steps(kMatmul, {})).vector, tiled_vectorized().vector,
      extract_features(lower_steps(kMatmul, testing::tiled_matmul(8, 16, 4, false, false))).vector,
      extract_features(lower_steps(kMatmul, testing::tiled_matmul(16, 8, 4, true, false))).vector,
      extract_features(lower_steps(kMatmul, {Annotate{"C", "i", ir::ForKind::Parallel}})).vector};
  for (size_t a = 0; a < vectors.size(); ++a) {
    for (size_t b = a + 1; b < vectors.size(); ++b) {
      EXPECT_NE(vectors[a], vectors[b]) << "schedules " << a << " and " << b;
    }
  }
}

TEST(Features, OtherWorkloadsGiveFiniteVectors) {
  for (const char* spec : {"conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3,stride=1,pad=1", "softmax:M=4,N=64",
                           "layer_norm:M=4,N=32", "dense:M=8,N=16,K=32,bias=1,epilogue=gelu",
                           "pool2d:kind=max,N=1,C=2,H=8,W=8,R=2,S=2,stride=2",
                           "depthwise_conv2d:N=1,C=4,H=8,W=8,R=3,S=3,stride=1,pad=1"}) {
    SCOPED_TRACE(spec);
    te::Workload workload = te::make_workload(spec);
    ProgramFeatures f = extract_features(lower::lower(workload, {workload.key(), {}}, {}));
    ASSERT_EQ(f.vector.size(), program_feature_names().size());
    for (float x : f.vector) {
      ASSERT_TRUE(std::isfinite(x));
      ASSERT_GE(x, 0.0f);
    }
    EXPECT_GT(program_feature(f, "total.flops"), 0.0f);
    EXPECT_NEAR(std::exp2(program_feature(f, "total.flops")) - 1.0, workload.flop_count(),
                0.5 * workload.flop_count());
  }
}

TEST(Features, SoftmaxCountsItsExponentials) {
  ProgramFeatures f = extract_features(lower_steps("softmax:M=4,N=64", {}));
  float math = 0;
  for (const StoreFeatures& row : f.stores) {
    math = std::max(math, store_feature(row, "float_math"));
  }
  EXPECT_FLOAT_EQ(math, log_scaled(4 * 64));
}

TEST(Features, UnflattenedIrGivesTheSameAccessPatterns) {
  te::Workload workload = te::make_workload(kMatmul);
  lower::LowerOptions options;
  options.stop_before_flatten = true;
  ProgramFeatures nested =
      extract_features(lower::lower(workload, {workload.key(), {}}, {}, options));
  ProgramFeatures flat = extract_features(lower_steps(kMatmul, {}));
  EXPECT_EQ(store_feature(update_row(nested), "buf2.unique_lines"),
            store_feature(update_row(flat), "buf2.unique_lines"));
  EXPECT_EQ(store_feature(update_row(nested), "buf2.innermost_stride"),
            store_feature(update_row(flat), "buf2.innermost_stride"));
}

TEST(Features, FunctionWithoutStoresIsAllZero) {
  ir::LoweredFunc empty{"empty", {}, 0, ir::Evaluate::make(ir::Expr(0)), {}, {}};
  ProgramFeatures f = extract_features(empty);
  EXPECT_TRUE(f.stores.empty());
  ASSERT_EQ(f.vector.size(), program_feature_names().size());
  for (float x : f.vector) {
    EXPECT_EQ(x, 0.0f);
  }
}

}  // namespace
}  // namespace tensortune::cost_model

// SPDX-License-Identifier: Apache-2.0
// Semantics of the loop-structure primitives: every lowered function, run by ir::eval on random
// inputs, matches the naive reference; factors that do not divide the extents on purpose.
#include "lower_test_util.h"

namespace tensortune::lower {
namespace {

using schedule::Fuse;
using schedule::Reorder;
using schedule::Split;
using schedule::Step;
using schedule::Tile;

TEST(LowerLoops, DefaultScheduleOfMatmulMatchesReference) {
  ir::LoweredFunc f = expect_lowers_correctly(matmul_workload(13, 17, 19), {});
  EXPECT_EQ(f.name, "matmul");
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_EQ(f.num_inputs, 2u);
  EXPECT_EQ(f.params[2].name(), "C");
  EXPECT_EQ(count_in(f, "if ("), 0) << ir::to_string(f);
}

TEST(LowerLoops, DefaultScheduleOfEveryNamedWorkloadMatchesReference) {
  for (const char* spec :
       {"conv2d:N=1,C=3,H=7,W=6,K=4,R=3,S=3,stride=2,pad=1", "softmax:M=5,N=7",
        "layer_norm:M=3,N=9", "pool2d:kind=avg,N=1,C=2,H=7,W=7,R=3,S=3,stride=2,pad=1",
        "depthwise_conv2d:N=1,C=3,H=6,W=6,R=3,S=3,stride=1,pad=1",
        "dense:M=5,N=6,K=7,bias=1,epilogue=gelu", "batch_matmul:B=2,M=3,N=5,K=4",
        "transpose:M=3,N=5", "pad:N=1,C=2,H=3,W=4,pad=2", "add:M=3,N=4,broadcast=1"}) {
    SCOPED_TRACE(spec);
    expect_lowers_correctly(te::make_workload(spec), {});
  }
}

TEST(LowerLoops, SplitByDivisorNeedsNoGuard) {
  ir::LoweredFunc f =
      expect_lowers_correctly(matmul_workload(12, 16, 8), {Split{"C", "i", 4}, Split{"C", "k", 2}});
  EXPECT_EQ(count_in(f, "if ("), 0) << ir::to_string(f);
}

TEST(LowerLoops, SplitByNonDivisorGuardsTheTail) {
  ir::LoweredFunc f = expect_lowers_correctly(
      matmul_workload(13, 17, 19), {Split{"C", "i", 4}, Split{"C", "j", 5}, Split{"C", "k", 8}});
  EXPECT_GE(count_in(f, "if ("), 2) << ir::to_string(f);
}

TEST(LowerLoops, SplitFactorLargerThanExtent) {
  expect_lowers_correctly(matmul_workload(3, 5, 2), {Split{"C", "i", 8}, Split{"C", "k", 7}});
}

TEST(LowerLoops, SplitByNparts) {
  expect_lowers_correctly(matmul_workload(13, 17, 19),
                          {Split{"C", "i", 3, true}, Split{"C", "k", 4, true}});
}

TEST(LowerLoops, NestedSplitsOfTheInnerPieceDoNotRepeatIterations) {
  // k.i ranges over [0, 8] after the second split: without a guard on k.i, k = 8 would be
  // accumulated twice (as k.o = 0, k.i = 8 and as k.o = 1, k.i = 0).
  expect_lowers_correctly(matmul_workload(5, 6, 16), {Split{"C", "k", 8}, Split{"C", "k.i", 3}});
  expect_lowers_correctly(matmul_workload(13, 6, 7),
                          {Split{"C", "i", 4}, Split{"C", "i.i", 3}, Split{"C", "i.o", 2}});
}

TEST(LowerLoops, FuseThenSplitByNonDivisor) {
  expect_lowers_correctly(matmul_workload(13, 17, 19),
                          {Fuse{"C", {"i", "j"}}, Split{"C", "i@j", 16}});
  expect_lowers_correctly(matmul_workload(5, 7, 9),
                          {Split{"C", "j", 3}, Fuse{"C", {"j.o", "j.i"}}, Split{"C", "j.o@j.i", 4},
                           Fuse{"C", {"i", "j.o@j.i.o"}}});
}

TEST(LowerLoops, FuseReductionAxes) {
  expect_lowers_correctly(te::make_workload("conv2d:N=1,C=2,H=5,W=5,K=3,R=3,S=3,pad=1"),
                          {Fuse{"conv", {"rc", "ry", "rx"}}, Split{"conv", "rc@ry@rx", 5}});
}

TEST(LowerLoops, ReorderPutsTheReductionOutermost) {
  expect_lowers_correctly(matmul_workload(13, 17, 19),
                          {Split{"C", "k", 4}, Reorder{"C", {"k.o", "i", "k.i", "j"}}});
}

TEST(LowerLoops, TileWithTails) {
  expect_lowers_correctly(matmul_workload(13, 17, 19),
                          {Tile{"C", "i", "j", 4, 8}, Split{"C", "k", 5},
                           Reorder{"C", {"i.o", "j.o", "k.o", "i.i", "k.i", "j.i"}}});
}

TEST(LowerLoops, ReductionInitCoversTheInnerDataParallelLoops) {
  const std::vector<Step> steps = {Split{"C", "j", 4}, Reorder{"C", {"i", "j.o", "k", "j.i"}}};
  expect_lowers_correctly(matmul_workload(6, 10, 5), steps);
  ir::LoweredFunc f = lower_plain(matmul_workload(6, 10, 5), steps);
  // One init nest over j.i, placed right before the reduction loop.
  EXPECT_EQ(count_in(f, "] = 0f"), 1) << ir::to_string(f);
  EXPECT_EQ(count_in(f, "for (j.i.init, 0, 4) {\n        if (((j.o*4) + j.i.init) < 10) {"), 1)
      << ir::to_string(f);
}

}  // namespace
}  // namespace tensortune::lower

// SPDX-License-Identifier: Apache-2.0
// Semantics of the annotations: vectorize (with masked tails), unroll, parallel, pragma unroll.
#include "lower_test_util.h"
#include "tensortune/lower/unroll_loops.h"

namespace tensortune::lower {
namespace {

using schedule::Annotate;
using schedule::PragmaUnroll;
using schedule::Reorder;
using schedule::Split;
using schedule::Tile;

TEST(LowerAnnotate, VectorizeWithDividingFactorMakesVectorCode) {
  ir::LoweredFunc f = expect_lowers_correctly(
      matmul_workload(4, 16, 3), {Split{"C", "j", 8}, Reorder{"C", {"i", "j.o", "k", "j.i"}},
                                  Annotate{"C", "j.i", ir::ForKind::Vectorized}});
  EXPECT_GE(count_in(f, "ramp("), 1) << ir::to_string(f);
  EXPECT_EQ(count_in(f, "vectorized"), 0) << ir::to_string(f);
}

TEST(LowerAnnotate, VectorizeTailIsMaskedNotDropped) {
  ir::LoweredFunc f = expect_lowers_correctly(
      matmul_workload(13, 17, 19), {Split{"C", "j", 8}, Reorder{"C", {"i", "j.o", "k", "j.i"}},
                                    Annotate{"C", "j.i", ir::ForKind::Vectorized}});
  EXPECT_GE(count_in(f, "ramp("), 1) << ir::to_string(f);
  EXPECT_EQ(count_in(f, "vectorized"), 0) << ir::to_string(f);
}

TEST(LowerAnnotate, VectorizeWholeAxisOfElementwise) {
  te::Workload w = te::make_workload("gelu:M=3,N=11");
  expect_lowers_correctly(w, {Annotate{w.outputs()[0].name(), "j", ir::ForKind::Vectorized}});
}

TEST(LowerAnnotate, VectorizeAxisFromAFuse) {
  te::Workload w = te::make_workload("transpose:M=5,N=6");
  const std::string t = w.outputs()[0].name();
  expect_lowers_correctly(w, {schedule::Fuse{t, {"i", "j"}}, Split{t, "i@j", 8},
                              Annotate{t, "i@j.i", ir::ForKind::Vectorized}});
}

TEST(LowerAnnotate, VectorizeThroughPaddingSelect) {
  te::Workload w = te::make_workload("pad:N=1,C=2,H=3,W=5,pad=2");
  const std::string t = w.outputs()[0].name();
  ir::LoweredFunc f =
      expect_lowers_correctly(w, {Split{t, "l", 4}, Annotate{t, "l.i", ir::ForKind::Vectorized}});
  // The select's condition predicates the load, so the clamp that kept the scalar read inside
  // the data goes: the index stays a ramp (a masked load), not a gather of clamped lanes.
  EXPECT_EQ(count_in(f, "max(ramp("), 0) << ir::to_string(f);
  EXPECT_GE(count_in(f, "data[ramp("), 1) << ir::to_string(f);
}

TEST(LowerAnnotate, VectorizedAxisWithALoopInsideStaysAnAnnotatedLoop) {
  // j.i is vectorized but the reduction k is inside it (a state the vectorize step itself would
  // refuse): the loop stays, annotated, and the result is right.
  te::Workload w = matmul_workload(3, 8, 5);
  schedule::LoopState state = schedule::apply_steps(w, {Split{"C", "j", 8}});
  state.mutable_stage("C").leaf_axes[2].annotation = ir::ForKind::Vectorized;
  ir::LoweredFunc f = lower(state, target::Target{}, "f");
  EXPECT_TRUE(runs_like_reference(w, f));
  EXPECT_GE(count_in(f, "vectorized"), 1) << ir::to_string(f);
}

TEST(LowerAnnotate, UnrollInnerLoops) {
  ir::LoweredFunc f = expect_lowers_correctly(
      matmul_workload(7, 9, 5),
      {Tile{"C", "i", "j", 2, 3}, Split{"C", "k", 2}, Annotate{"C", "i.i", ir::ForKind::Unrolled},
       Annotate{"C", "k.i", ir::ForKind::Unrolled}});
  EXPECT_EQ(count_in(f, "unrolled"), 0) << ir::to_string(f);
}

TEST(LowerAnnotate, ParallelOuterLoop) {
  ir::LoweredFunc f = expect_lowers_correctly(
      matmul_workload(13, 17, 19), {schedule::Fuse{"C", {"i", "j"}}, Split{"C", "i@j", 10},
                                    Annotate{"C", "i@j.o", ir::ForKind::Parallel}});
  EXPECT_GE(count_in(f, "parallel"), 1) << ir::to_string(f);
}

TEST(LowerAnnotate, PragmaUnrollUnrollsSmallInnerNests) {
  ir::LoweredFunc f = expect_lowers_correctly(
      matmul_workload(8, 8, 6),
      {Tile{"C", "i", "j", 2, 4}, Split{"C", "k", 3},
       Reorder{"C", {"i.o", "j.o", "k.o", "k.i", "i.i", "j.i"}}, PragmaUnroll{"C", "i.o", 8}});
  // i.i x j.i (8 steps) is unrolled under k.i; k.i itself (24 steps) is not.
  EXPECT_EQ(count_in(f, "for (i.i"), 0) << ir::to_string(f);
  EXPECT_EQ(count_in(f, "for (k.i"), 1) << ir::to_string(f);
}

TEST(LowerAnnotate, AHugePragmaUnrollIsCappedByTheSizeOfTheResult) {
  // An imported record's max_step of 1e9 used to unroll the whole 32x32x32 matmul into 32768
  // statements (compile: 101 s, 2.1 GB). The budget is capped: the j x k nest (1024 steps) is
  // unrolled, the i loop around it stays a loop.
  ir::LoweredFunc f =
      expect_lowers_correctly(matmul_workload(32, 32, 32), {PragmaUnroll{"C", "i", 1000000000}});
  EXPECT_EQ(count_in(f, "for (i"), 1) << ir::to_string(f).substr(0, 2000);
  EXPECT_LE(count_in(f, "C["), 2 * kMaxAutoUnrollSteps + 64);
}

TEST(LowerAnnotate, VectorizeAndUnrollTogether) {
  expect_lowers_correctly(
      matmul_workload(10, 20, 6),
      {Tile{"C", "i", "j", 4, 8}, Reorder{"C", {"i.o", "j.o", "k", "i.i", "j.i"}},
       Annotate{"C", "i.i", ir::ForKind::Unrolled}, Annotate{"C", "j.i", ir::ForKind::Vectorized}});
}

}  // namespace
}  // namespace tensortune::lower

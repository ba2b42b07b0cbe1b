// SPDX-License-Identifier: Apache-2.0
// Statement simplification: loop ranges, dead loops and branches, extent-1 loops, lets.
#include "ir_test_util.h"
#include "tensortune/ir/eval.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/ir/ops.h"
#include "tensortune/ir/simplify.h"

#include <gtest/gtest.h>

#include <vector>

namespace tensortune::ir {
namespace {
using test_util::f32;

class SimplifyStmtTest : public ::testing::Test {
 protected:
  Buffer a{"A", DataType::float32(), {64}};
  Buffer out{"Out", DataType::float32(), {64}};
  Var i{"i"};
  Var j{"j"};
};

TEST_F(SimplifyStmtTest, LearnsLoopRangesForIndicesAndConditions) {
  Stmt body = IfThenElse::make(i * 8 + j < 64,
                               Store::make(out, Load::make(a, {(i * 8 + j) % 8}), {i * 8 + j}));
  Stmt nest = For::make(i, 0, 8, ForKind::Serial, For::make(j, 0, 8, ForKind::Serial, body));
  EXPECT_EQ(to_string(simplify(nest)),
            "for (i, 0, 8) {\n"
            "  for (j, 0, 8) {\n"
            "    Out[((i*8) + j)] = A[j]\n"
            "  }\n"
            "}\n");
}

TEST_F(SimplifyStmtTest, RemovesEmptyLoopsAndSubstitutesSingleIterationOnes) {
  Stmt empty = For::make(i, 0, 0, ForKind::Serial, Store::make(out, f32(1), {i}));
  Stmt single = For::make(j, 5, 1, ForKind::Vectorized, Store::make(out, f32(2), {j * 2}));
  EXPECT_EQ(to_string(simplify(Seq::make({empty, single}))), "Out[10] = 2f\n");
}

TEST_F(SimplifyStmtTest, KeepsTheLiveBranchOfDecidedIfs) {
  Stmt then_case = Store::make(out, f32(1), {i});
  Stmt else_case = Store::make(out, f32(2), {i});
  VarRanges r{{i.get(), {0, 7}}};
  EXPECT_EQ(to_string(simplify(IfThenElse::make(i < 8, then_case, else_case), r)), "Out[i] = 1f\n");
  EXPECT_EQ(to_string(simplify(IfThenElse::make(i >= 8, then_case, else_case), r)),
            "Out[i] = 2f\n");
  EXPECT_EQ(to_string(simplify(IfThenElse::make(i < 4, then_case, else_case), r)),
            "if (i < 4) {\n"
            "  Out[i] = 1f\n"
            "} else {\n"
            "  Out[i] = 2f\n"
            "}\n");
}

TEST_F(SimplifyStmtTest, NarrowsRangesInsideBranches) {
  // Inside `if (i < 4)` i is in [0, 3], so the inner test is redundant; in the else branch i is
  // in [4, 7], so i / 4 is 1.
  Stmt inner = IfThenElse::make(i < 6, Store::make(out, f32(1), {i}));
  Stmt s = IfThenElse::make(i < 4, inner, Store::make(out, f32(2), {i / 4}));
  EXPECT_EQ(to_string(simplify(s, {{i.get(), {0, 7}}})),
            "if (i < 4) {\n"
            "  Out[i] = 1f\n"
            "} else {\n"
            "  Out[1] = 2f\n"
            "}\n");
}

TEST_F(SimplifyStmtTest, DropsProvablyTruePredicatesAndFalseStores) {
  Var v("v");
  Expr ramp = Ramp::make(v * 4, 1, 4);
  Stmt vstore =
      Store::make(out, Broadcast::make(f32(0), 4), {ramp}, Lt::make(ramp, Broadcast::make(64, 4)));
  Stmt loop = For::make(v, 0, 16, ForKind::Serial, vstore);
  EXPECT_EQ(to_string(simplify(loop)),
            "for (v, 0, 16) {\n"
            "  Out[ramp((v*4), 1, 4)] = x4(0f)\n"
            "}\n");
  Stmt dead = Store::make(out, f32(1), {i}, IntImm::make(DataType::boolean(), 0));
  EXPECT_EQ(to_string(simplify(Seq::make({dead, Store::make(out, f32(3), {0})}))), "Out[0] = 3f\n");
}

TEST_F(SimplifyStmtTest, DropsAStoreOfTheValueAlreadyThere) {
  // An accumulation whose term folded away: Out[i + 1] = Out[i + 1] + x4(-0f) is Out[i + 1].
  Var v("v");
  Expr ramp = Ramp::make(v * 4, 1, 4);
  Stmt noop = Store::make(out, Load::make(out, {ramp}) + Broadcast::make(f32(-0.0), 4), {ramp});
  EXPECT_EQ(to_string(simplify(Seq::make({noop, Store::make(out, f32(3), {0})}))), "Out[0] = 3f\n");
  Expr lanes = Lt::make(Ramp::make(v * 4, 1, 4), Broadcast::make(62, 4));
  Stmt masked = Store::make(out, Load::make(out, {ramp}, lanes), {ramp}, lanes);
  EXPECT_EQ(to_string(simplify(Seq::make({masked, Store::make(out, f32(3), {0})}))),
            "Out[0] = 3f\n");
  // + 0 is not exact for a vector (-0 + 0 is +0), a copy between buffers or places is a store.
  Stmt plus_zero = Store::make(out, Load::make(out, {ramp}) + Broadcast::make(f32(0), 4), {ramp});
  EXPECT_EQ(to_string(simplify(plus_zero)),
            "Out[ramp((v*4), 1, 4)] = (Out[ramp((v*4), 1, 4)] + x4(0f))\n");
  EXPECT_EQ(to_string(simplify(Store::make(out, Load::make(a, {i}), {i}))), "Out[i] = A[i]\n");
  EXPECT_EQ(to_string(simplify(Store::make(out, Load::make(out, {i + 1}), {i}))),
            "Out[i] = Out[(i + 1)]\n");
}

TEST_F(SimplifyStmtTest, InlinesTrivialLetsAndDropsUnusedOnes) {
  Var x("x");
  Var y("y");
  Stmt trivial = LetStmt::make(x, j, Store::make(out, f32(1), {x + 1}));
  EXPECT_EQ(to_string(simplify(trivial)), "Out[(j + 1)] = 1f\n");
  Stmt unused = LetStmt::make(y, i * j, Store::make(out, f32(1), {i}));
  EXPECT_EQ(to_string(simplify(unused)), "Out[i] = 1f\n");
  Stmt kept = LetStmt::make(y, i % 8, Store::make(out, f32(1), {y % 8}));
  EXPECT_EQ(to_string(simplify(kept)),
            "let y = (i % 8) {\n"
            "  Out[y] = 1f\n"
            "}\n");
}

TEST_F(SimplifyStmtTest, ReturnsTheSameHandleWhenNothingChanges) {
  Stmt loop = For::make(i, 0, 8, ForKind::Serial, Store::make(out, Load::make(a, {i}), {i}));
  EXPECT_TRUE(simplify(loop).same_as(loop));
}

TEST_F(SimplifyStmtTest, PreservesTheMeaningOfASplitLoopNest) {
  // for io in [0, 4), ii in [0, 16): Out[io*16 + ii] = A[(io*16 + ii) / 2 * 2 + (io*16+ii) % 2]
  Var io("io");
  Var ii("ii");
  Expr idx = io * 16 + ii;
  Stmt body = Store::make(out, Load::make(a, {idx / 2 * 2 + idx % 2}) * f32(3), {idx});
  Stmt nest = For::make(io, 0, 4, ForKind::Serial, For::make(ii, 0, 16, ForKind::Serial, body));
  Stmt simple = simplify(nest);
  EXPECT_EQ(to_string(simple),
            "for (io, 0, 4) {\n"
            "  for (ii, 0, 16) {\n"
            "    Out[((io*16) + ii)] = (A[((io*16) + ii)]*3f)\n"
            "  }\n"
            "}\n");
  LoweredFunc f;
  f.name = "f";
  f.params = {a, out};
  f.num_inputs = 1;
  std::vector<float> av(64);
  for (size_t n = 0; n < av.size(); ++n) {
    av[n] = static_cast<float>(n) * 0.5f;
  }
  std::vector<float> before(64);
  std::vector<float> after(64);
  f.body = nest;
  eval(f, {av.data(), before.data()});
  f.body = simple;
  eval(f, {av.data(), after.data()});
  EXPECT_EQ(before, after);
}

}  // namespace
}  // namespace tensortune::ir

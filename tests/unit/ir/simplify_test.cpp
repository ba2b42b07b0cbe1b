// SPDX-License-Identifier: Apache-2.0
// The simplifier's canonical forms, one rule family per test, checked on the printed text.
#include "tensortune/ir/simplify.h"

#include "ir_test_util.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/ir/ops.h"

#include <gtest/gtest.h>

namespace tensortune::ir {
namespace {
using test_util::f32;

std::string simp(const Expr& e, const VarRanges& ranges = {}) {
  return to_string(simplify(e, ranges));
}

class SimplifyTest : public ::testing::Test {
 protected:
  Var i{"i"};
  Var j{"j"};
  Var k{"k"};
  Var x{"x"};
  Var f{"f"};
  /// i, j in [0, 7]; k in [0, 63].
  VarRanges ranges{{i.get(), {0, 7}}, {j.get(), {0, 7}}, {k.get(), {0, 63}}};
};

TEST_F(SimplifyTest, FoldsIntegerConstantsWithFloorSemantics) {
  EXPECT_EQ(simp(Expr(7) / 2), "3");
  EXPECT_EQ(simp(Expr(-7) / 2), "-4");
  EXPECT_EQ(simp(Expr(-7) % 2), "1");
  EXPECT_EQ(simp(Expr(7) % -2), "-1");
  EXPECT_EQ(simp((Expr(3) + 4) * 2 - 1), "13");
  EXPECT_EQ(simp(min(Expr(3), 9) + max(Expr(-2), -5)), "1");
  // Division by zero is left for run time to report.
  EXPECT_EQ(simp(Expr(7) / 0), "(7/0)");
}

TEST_F(SimplifyTest, FoldsFloatAndBoolConstants) {
  EXPECT_EQ(simp(f32(1.5) * f32(2)), "3f");
  EXPECT_EQ(simp(f32(0.1) + f32(0.2)), to_string(f32(0.1f + 0.2f)));
  EXPECT_EQ(simp(Expr(3) < 4), "true");
  EXPECT_EQ(simp(f32(3) >= f32(4)), "false");
  EXPECT_EQ(simp(cast(DataType::int32(), f32(-2.5))), "-2");
  EXPECT_EQ(simp(cast(DataType::float32(), Expr(3))), "3f");
  // The interpreter has no float16 arithmetic, so float16 constants are left as written.
  Expr h = FloatImm::make(DataType::float16(), 1.5);
  EXPECT_EQ(simp(h + h), "(float16(1.5) + float16(1.5))");
  EXPECT_EQ(simp(h < h), "(float16(1.5) < float16(1.5))");
}

TEST_F(SimplifyTest, RemovesIdentitiesAndCancelsTerms) {
  EXPECT_EQ(simp(x + 0), "x");
  EXPECT_EQ(simp(0 + x), "x");
  EXPECT_EQ(simp(x * 1), "x");
  EXPECT_EQ(simp(x * 0), "0");
  EXPECT_EQ(simp(x - x), "0");
  EXPECT_EQ(simp(x / 1), "x");
  EXPECT_EQ(simp(x % 1), "0");
  Var y("y", DataType::float32());
  EXPECT_EQ(simp(y * 1.0f), "y");
  EXPECT_EQ(simp(y + 0.0f), "y");
  // x*0 is not 0 for a float (NaN, inf), and x - x is not either.
  EXPECT_EQ(simp(y * 0.0f), "(y*0f)");
  EXPECT_EQ(simp(y - y), "(y - y)");
}

TEST_F(SimplifyTest, PutsConstantsOnTheRightOfCommutativeOperators) {
  EXPECT_EQ(simp(3 + x), "(x + 3)");
  EXPECT_EQ(simp(3 * x), "(x*3)");
  EXPECT_EQ(simp(min(Expr(5), x)), "min(x, 5)");
  EXPECT_EQ(simp(max(Expr(5), x)), "max(x, 5)");
  EXPECT_EQ(simp(Expr(5) == x), "(x == 5)");
  Var y("y", DataType::float32());
  EXPECT_EQ(simp(f32(2) * y), "(y*2f)");
  EXPECT_EQ(simp(f32(2) + y), "(y + 2f)");
}

TEST_F(SimplifyTest, CanonicalisesLinearCombinations) {
  EXPECT_EQ(simp(i * 2 + j + i), "((i*3) + j)");
  EXPECT_EQ(simp(j + i * 8), "((i*8) + j)");
  EXPECT_EQ(simp(i * 8 + j - i * 8), "j");
  EXPECT_EQ(simp((i + 1) * 8 - 8), "(i*8)");
  EXPECT_EQ(simp(x - 1), "(x - 1)");
  EXPECT_EQ(simp(x + (-1)), "(x - 1)");
  EXPECT_EQ(simp(5 - x), "(5 - x)");
  EXPECT_EQ(simp(0 - x), "(x*-1)");
  EXPECT_EQ(simp(i - j * 2 + 3), "((i - (j*2)) + 3)");
  EXPECT_EQ(simp((i + j) * 4 - (j + i) * 2), "((i*2) + (j*2))");
  // Products of variables are atoms with ordered operands.
  EXPECT_EQ(simp(j * i - i * j), "0");
  EXPECT_EQ(simp(j * i), "(i*j)");
}

TEST_F(SimplifyTest, SplitsDivisionAndModuloOfMultiples) {
  EXPECT_EQ(simp((i * 8 + j) / 8, ranges), "i");
  EXPECT_EQ(simp((i * 8 + j) % 8, ranges), "j");
  EXPECT_EQ(simp((i * 8 + j + 8) / 8, ranges), "(i + 1)");
  EXPECT_EQ(simp((j + i * 8) % 8, ranges), "j");
  // Without ranges floor semantics still allow splitting off the multiple.
  EXPECT_EQ(simp((x * 8 + f) / 8), "(x + (f/8))");
  EXPECT_EQ(simp((x * 8 + f) % 8), "(f % 8)");
  EXPECT_EQ(simp((x * 16 + f * 9 + 17) % 8), "(((f*9) + 1) % 8)");
  EXPECT_EQ(simp((x * 16 + 3) / 8), "(x*2)");
  EXPECT_EQ(simp(x * 6 / 3), "(x*2)");
  EXPECT_EQ(simp(x * 4 / 8), "(x/2)");
  EXPECT_EQ(simp((x * 4 + 2) % 8), "(((x % 2)*4) + 2)");
}

TEST_F(SimplifyTest, CollapsesNestedDivisionAndModulo) {
  EXPECT_EQ(simp(x / 4 / 8), "(x/32)");
  EXPECT_EQ(simp(x % 16 % 8), "(x % 8)");
  EXPECT_EQ(simp(k / 64, ranges), "0");
  EXPECT_EQ(simp(k % 64, ranges), "k");
  EXPECT_EQ(simp(k / 16 * 16 + k % 16), "k");
  EXPECT_EQ(simp((f / 8) * 16 + (f % 8) * 2), "(f*2)");
  // A fused index split back by a factor that does not divide its coefficients.
  Expr fused = x * 8 + f;
  EXPECT_EQ(simp(fused / 5 * 5 + fused % 5), "((x*8) + f)");
}

TEST_F(SimplifyTest, FoldsMinAndMaxWithBounds) {
  EXPECT_EQ(simp(min(i, i + 1)), "i");
  EXPECT_EQ(simp(max(i, i + 1)), "(i + 1)");
  EXPECT_EQ(simp(min(x + 3, x + 5)), "(x + 3)");
  EXPECT_EQ(simp(max(i, 8), ranges), "8");
  EXPECT_EQ(simp(min(i, 8), ranges), "i");
  EXPECT_EQ(simp(min(i, j), ranges), "min(i, j)");
  EXPECT_EQ(simp(min(x, x)), "x");
  EXPECT_EQ(simp(min(min(x, 4), 2)), "min(x, 2)");
}

TEST_F(SimplifyTest, FoldsComparisonsWithBounds) {
  EXPECT_EQ(simp(k < 64, ranges), "true");
  EXPECT_EQ(simp(k >= 64, ranges), "false");
  EXPECT_EQ(simp(k < 32, ranges), "(k < 32)");
  EXPECT_EQ(simp(i * 8 + j < 64, ranges), "true");
  EXPECT_EQ(simp(i * 8 + j <= 62, ranges), "(((i*8) + j) <= 62)");
  EXPECT_EQ(simp(x + 1 > x), "true");
  EXPECT_EQ(simp(x == x), "true");
  EXPECT_EQ(simp(x != x + 1), "true");
  EXPECT_EQ(simp(i == 9, ranges), "false");
  EXPECT_EQ(simp(x < 3), "(x < 3)");
  EXPECT_EQ(simp(3 < x), "(x > 3)");
  // Comparisons of a floor quotient with a constant become comparisons of the dividend.
  EXPECT_EQ(simp(x / 5 < 6), "(x < 30)");
  EXPECT_EQ(simp(x / 5 <= 6), "(x < 35)");
  EXPECT_EQ(simp(x / 5 > 6), "(x >= 35)");
  EXPECT_EQ(simp(x / 5 >= 6), "(x >= 30)");
  EXPECT_EQ(simp(x / 5 < 6 && x < 30), "(x < 30)");
}

TEST_F(SimplifyTest, FoldsLogicAndSelect) {
  EXPECT_EQ(simp(k < 64 && j < 4, ranges), "(j < 4)");
  EXPECT_EQ(simp(k < 32 || i < 8, ranges), "true");
  EXPECT_EQ(simp(!(x < j)), "(x >= j)");
  EXPECT_EQ(simp(!!(x < j)), "(x < j)");
  EXPECT_EQ(simp((x < 3) && (x < 3)), "(x < 3)");
  EXPECT_EQ(simp(select(k < 64, x, j), ranges), "x");
  EXPECT_EQ(simp(select(x < 3, j + 0, j)), "j");
  EXPECT_EQ(simp(select(x < 3, x, j)), "select((x < 3), x, j)");
  Var y("y", DataType::float32());
  // !(a < b) is not a >= b for floats (NaN).
  EXPECT_EQ(simp(!(y < f32(1))), "!(y < 1f)");
}

TEST_F(SimplifyTest, FoldsRampAndBroadcastArithmetic) {
  Expr b4 = Broadcast::make(x, 4);
  EXPECT_EQ(simp(b4 + Broadcast::make(1, 4)), "x4((x + 1))");
  EXPECT_EQ(simp(Ramp::make(x, 1, 4) + Broadcast::make(2, 4)), "ramp((x + 2), 1, 4)");
  EXPECT_EQ(simp(Broadcast::make(2, 4) + Ramp::make(x, 1, 4)), "ramp((x + 2), 1, 4)");
  EXPECT_EQ(simp(Ramp::make(x, 1, 4) * Broadcast::make(3, 4)), "ramp((x*3), 3, 4)");
  EXPECT_EQ(simp(Ramp::make(x, 1, 4) + Ramp::make(j, 2, 4)), "ramp((j + x), 3, 4)");
  EXPECT_EQ(simp(Ramp::make(x, 1, 4) - Ramp::make(x, 1, 4)), "x4(0)");
  EXPECT_EQ(simp(Ramp::make(x, 0, 4)), "x4(x)");
  EXPECT_EQ(simp(Ramp::make(i * 8, 1, 4) / Broadcast::make(8, 4)), "x4(i)");
  EXPECT_EQ(simp(Ramp::make(i * 8, 1, 4) % Broadcast::make(8, 4)), "ramp(0, 1, 4)");
  EXPECT_EQ(simp(Ramp::make(x, 8, 4) / Broadcast::make(4, 4)), "ramp((x/4), 2, 4)");
  EXPECT_EQ(simp(Ramp::make(k, 1, 4) < Broadcast::make(67, 4), ranges), "x4(true)");
  EXPECT_EQ(simp(Ramp::make(k, 1, 4) < Broadcast::make(64, 4), ranges), "(ramp(k, 1, 4) < x4(64))");
  // A vector times a broadcast one is the vector, exactly (a Winograd transform's unit
  // coefficients once its small loops are unrolled and the rest vectorized); times zero it stays,
  // since NaN * 0 is NaN.
  Var v("v", DataType::float32().with_lanes(4));
  EXPECT_EQ(simp(v * Broadcast::make(f32(1), 4)), "v");
  EXPECT_EQ(simp(Broadcast::make(f32(1), 4) * v), "v");
  EXPECT_EQ(simp(v * Broadcast::make(f32(0), 4)), "(v*x4(0f))");
}

TEST(ConstBound, UsesIntervalArithmetic) {
  Var i("i");
  Var j("j");
  VarRanges r{{i.get(), {0, 3}}, {j.get(), {-2, 5}}};
  auto bound = [&](const Expr& e) {
    return const_bound(e, r);
  };
  auto eq = [](std::optional<ConstBound> b, int64_t lo, int64_t hi) {
    return b.has_value() && b->min == lo && b->max == hi;
  };
  EXPECT_TRUE(eq(bound(i * 4 + j), -2, 17));
  EXPECT_TRUE(eq(bound(i - j), -5, 5));
  EXPECT_TRUE(eq(bound(i * j), -6, 15));
  EXPECT_TRUE(eq(bound(j / 2), -1, 2));
  EXPECT_TRUE(eq(bound(j % 4), 0, 3));
  EXPECT_TRUE(eq(bound(i % 8), 0, 3));
  EXPECT_TRUE(eq(bound((i + 8) % 8), 0, 3));
  EXPECT_TRUE(eq(bound(min(i, j)), -2, 3));
  EXPECT_TRUE(eq(bound(max(i, 2)), 2, 3));
  EXPECT_TRUE(eq(bound(select(i < 2, i, j * 2)), -4, 10));
  EXPECT_TRUE(eq(bound(Ramp::make(i, 2, 4)), 0, 9));
  EXPECT_TRUE(eq(bound(i < j), 0, 1));
  Var free("free");
  EXPECT_FALSE(bound(free + 1).has_value());
  EXPECT_TRUE(eq(bound(free % 8), 0, 7));
  EXPECT_FALSE(bound(i / j).has_value());  // j may be zero
  Buffer a("A", DataType::int32(), {4});
  EXPECT_FALSE(bound(Load::make(a, {i})).has_value());
}

TEST(ConstBound, QuotientsOfNumeratorsAConstantApartBoundTheirDifference) {
  // A grouped convolution's input channel (f / 8) * 8 + rc over a tile of 20 output channels
  // from f0: the two quotients move together, so the span is 24 or 32 channels, not the range
  // of f0 / 8 twice over.
  Var f0("f0");
  Var free("free");
  VarRanges r{{f0.get(), {0, 420}}};
  auto eq = [](std::optional<ConstBound> b, int64_t lo, int64_t hi) {
    return b.has_value() && b->min == lo && b->max == hi;
  };
  EXPECT_TRUE(eq(const_bound(((f0 + 19) / 8) * 8 + 7 - (f0 / 8) * 8, r), 23, 31));
  EXPECT_TRUE(eq(const_bound((free + 16) / 8 - free / 8), 2, 2));  // bounded without a range
  EXPECT_TRUE(eq(const_bound((free - 3) / 8 - free / 8), -1, 0));
  EXPECT_FALSE(const_bound((free + 16) / 8 - free / 4).has_value());  // other divisors
}

TEST(CanProve, ProvesOnlyWhatHoldsEverywhere) {
  Var i("i");
  Var j("j");
  VarRanges r{{i.get(), {0, 7}}, {j.get(), {0, 7}}};
  EXPECT_TRUE(can_prove(i * 8 + j < 64, r));
  EXPECT_TRUE(can_prove((i * 8 + j) / 8 == i, r));
  EXPECT_TRUE(can_prove(i >= 0 && j <= 7, r));
  EXPECT_FALSE(can_prove(i < 5, r));
  EXPECT_FALSE(can_prove(i * 8 + j < 63, r));
  EXPECT_FALSE(can_prove(i < 9));
}

TEST_F(SimplifyTest, MaxOverRangedVariablesKeepsTheOthers) {
  // i, j in [0, 7]; f free.
  VarRanges ij{{i.get(), {0, 7}}, {j.get(), {0, 7}}};
  EXPECT_EQ(to_string(*max_over(f * 64 + i * 8 + j - 257, ij)), "((f*64) - 194)");
  EXPECT_EQ(to_string(*max_over(f * 64 - i * 8 + 3, ij)), "((f*64) + 3)");
  EXPECT_EQ(to_string(*max_over((f % 5) * 64 + i, ij)), "(((f % 5)*64) + 7)");
  EXPECT_EQ(to_string(*max_over(i / 2 + f, ij)), "(f + 3)");
  // An atom that mixes f and i has no bound in f alone; an unranged variable stays symbolic.
  EXPECT_FALSE(max_over((f + i) / 3, ij).has_value());
  EXPECT_EQ(to_string(*max_over(x + i, ij)), "(x + 7)");
  EXPECT_FALSE(
      max_over(i + k, VarRanges{{i.get(), {0, 7}}, {k.get(), {0, INT64_MAX}}}).has_value());
}

}  // namespace
}  // namespace tensortune::ir

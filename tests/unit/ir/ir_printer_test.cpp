// SPDX-License-Identifier: Apache-2.0
// The canonical text form: golden strings for every node kind, unique names, determinism.
#include "tensortune/ir/ir_printer.h"

#include "ir_test_util.h"
#include "tensortune/ir/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

namespace tensortune::ir {
namespace {
using test_util::f32;

TEST(IRPrinter, PrintsArithmeticFullyParenthesised) {
  Var i("i");
  Var j("j");
  EXPECT_EQ(to_string(i * 8 + j), "((i*8) + j)");
  EXPECT_EQ(to_string((i - j) / 4 % 3), "(((i - j)/4) % 3)");
  EXPECT_EQ(to_string(min(i, j) + max(i, 0)), "(min(i, j) + max(i, 0))");
  EXPECT_EQ(to_string(i < 4 && !(j >= i)), "((i < 4) && !(j >= i))");
  EXPECT_EQ(to_string(i == j || i != 3), "((i == j) || (i != 3))");
  EXPECT_EQ(to_string(i <= j), "(i <= j)");
  EXPECT_EQ(to_string(i > j), "(i > j)");
}

TEST(IRPrinter, PrintsIntegerConstantsWithTheirType) {
  EXPECT_EQ(to_string(Expr(-5)), "-5");
  EXPECT_EQ(to_string(IntImm::make(DataType::int64(), 5)), "int64(5)");
  EXPECT_EQ(to_string(IntImm::make(DataType(DataType::Code::UInt, 8), 7)), "uint8(7)");
  EXPECT_EQ(to_string(IntImm::make(DataType::boolean(), 1)), "true");
  EXPECT_EQ(to_string(IntImm::make(DataType::boolean(), 0)), "false");
}

TEST(IRPrinter, PrintsFloat32AsShortestRoundTripWithSuffix) {
  EXPECT_EQ(to_string(f32(0)), "0f");
  EXPECT_EQ(to_string(f32(1.5)), "1.5f");
  EXPECT_EQ(to_string(f32(-0.0)), "-0f");
  EXPECT_EQ(to_string(f32(0.1)), "0.1f");
  EXPECT_EQ(to_string(f32(1e-5)), "1e-05f");
  EXPECT_EQ(to_string(f32(100)), "100f");
  EXPECT_EQ(to_string(f32(3.4028234663852886e38)), "3.4028235e+38f");
}

TEST(IRPrinter, PrintsNonFiniteAndOtherFloatTypesWithATypePrefix) {
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(to_string(f32(-inf)), "float32(-inf)");
  EXPECT_EQ(to_string(f32(inf)), "float32(inf)");
  EXPECT_EQ(to_string(f32(std::nan(""))), "float32(nan)");
  EXPECT_EQ(to_string(FloatImm::make(DataType::float64(), 0.1)), "float64(0.1)");
}

TEST(IRPrinter, PrintsVectorsCastsCallsAndSelects) {
  Var i("i");
  Var x("x", DataType::float32());
  EXPECT_EQ(to_string(Ramp::make(i * 4, 1, 4)), "ramp((i*4), 1, 4)");
  EXPECT_EQ(to_string(Broadcast::make(x, 16)), "x16(x)");
  EXPECT_EQ(to_string(cast(DataType::float32(), i)), "float32(i)");
  EXPECT_EQ(to_string(Cast::make(DataType::int32(4), Ramp::make(i, 2, 4))),
            "int32x4(ramp(i, 2, 4))");
  EXPECT_EQ(to_string(exp(x) + pow(x, 2.0f)), "(exp(x) + pow(x, 2f))");
  EXPECT_EQ(to_string(select(i < 3, x, 0.0f)), "select((i < 3), x, 0f)");
}

TEST(IRPrinter, PrintsLoadsWithIndicesAndPredicates) {
  Buffer a("A", DataType::float32(), {64, 64});
  Buffer flat("B", DataType::float32(), {16});
  Var i("i");
  Var j("j");
  EXPECT_EQ(to_string(Load::make(a, {i, j})), "A[i, j]");
  Expr ramp = Ramp::make(i, 1, 4);
  Expr pred = Lt::make(ramp, Broadcast::make(10, 4));
  EXPECT_EQ(to_string(Load::make(flat, {ramp}, pred)),
            "(B[ramp(i, 1, 4)] if (ramp(i, 1, 4) < x4(10)))");
  Var p("p", DataType::boolean());
  EXPECT_EQ(to_string(Load::make(flat, {i}, p)), "(B[i] if (p))");
}

TEST(IRPrinter, PrintsReductionsWithTheirAxes) {
  Buffer a("A", DataType::float32(), {8, 8});
  Buffer b("B", DataType::float32(), {8, 8});
  Var i("i");
  Var j("j");
  Var k("k");
  Var r("r");
  Expr body = Load::make(a, {i, k}) * Load::make(b, {k, j});
  Expr sum = Reduce::make(ReduceKind::Sum, body, {IterVar{k, 8, IterKind::Reduce}});
  EXPECT_EQ(to_string(sum), "sum((A[i, k]*B[k, j]), axes=[k:8])");
  Expr mx = Reduce::make(ReduceKind::Maximum, Load::make(a, {k, r}),
                         {IterVar{k, 8, IterKind::Reduce}, IterVar{r, 3, IterKind::Reduce}});
  EXPECT_EQ(to_string(mx), "max(A[k, r], axes=[k:8, r:3])");
}

TEST(IRPrinter, GivesDistinctVariablesSharingANameDistinctSuffixes) {
  Var i1("i");
  Var i2("i");
  Var i3("i");
  EXPECT_EQ(to_string(i1 + i2 * i3 + i1), "((i + (i.1*i.2)) + i)");
  // A hint that already looks like a suffixed name is still kept distinct.
  Var dotted("i.1");
  EXPECT_EQ(to_string(i1 + i2 + dotted), "((i + i.1) + i.1.1)");
  Var unnamed("");
  EXPECT_EQ(to_string(unnamed + 1), "(v + 1)");
}

TEST(IRPrinter, NamesAreAssignedPerPrintedRoot) {
  Var a("i");
  Var b("i");
  EXPECT_EQ(to_string(b + a), "(i + i.1)");
  EXPECT_EQ(to_string(a + b), "(i + i.1)");
  EXPECT_EQ(to_string(Expr(a)), "i");
}

TEST(IRPrinter, PrintsLoopsWithKindAndUnrollPragma) {
  Buffer c("C", DataType::float32(), {64});
  Var i("i");
  Stmt store = Store::make(c, f32(0), {i});
  EXPECT_EQ(to_string(For::make(i, 0, 64, ForKind::Serial, store)),
            "for (i, 0, 64) {\n"
            "  C[i] = 0f\n"
            "}\n");
  EXPECT_EQ(to_string(For::make(i, 0, 64, ForKind::Parallel, store, 16)),
            "for (i, 0, 64) parallel auto_unroll(16) {\n"
            "  C[i] = 0f\n"
            "}\n");
  EXPECT_EQ(to_string(For::make(i, 0, 64, ForKind::ThreadX, store)),
            "for (i, 0, 64) threadIdx.x {\n"
            "  C[i] = 0f\n"
            "}\n");
}

TEST(IRPrinter, PrintsStatementsOfEveryKind) {
  Buffer c("C", DataType::float32(), {16});
  Buffer t("T", DataType::float32(), {4, 4}, MemoryScope::Local);
  Var i("i");
  Var j("j");
  Var x("x");
  Expr ramp = Ramp::make(i * 4, 1, 4);
  Stmt vstore =
      Store::make(c, Broadcast::make(f32(0), 4), {ramp}, Lt::make(ramp, Broadcast::make(10, 4)));
  Stmt inner = Seq::make({Store::make(t, Load::make(c, {x}), {i, j}), Evaluate::make(x)});
  Stmt body = Seq::make({
      vstore,
      Allocate::make(t, LetStmt::make(x, i + j, inner)),
      IfThenElse::make(i < 2, Store::make(c, f32(1), {i}), Store::make(c, f32(2), {i})),
      IfThenElse::make(Var("flag", DataType::boolean()), Store::make(c, f32(3), {i})),
  });
  EXPECT_EQ(to_string(body),
            "C[ramp((i*4), 1, 4)] = x4(0f) if (ramp((i*4), 1, 4) < x4(10))\n"
            "allocate float32 T[4, 4] local {\n"
            "  let x = (i + j) {\n"
            "    T[i, j] = C[x]\n"
            "    evaluate(x)\n"
            "  }\n"
            "}\n"
            "if (i < 2) {\n"
            "  C[i] = 1f\n"
            "} else {\n"
            "  C[i] = 2f\n"
            "}\n"
            "if (flag) {\n"
            "  C[i] = 3f\n"
            "}\n");
}

TEST(IRPrinter, PrintsAFunctionWithInputsThenMarkedOutputs) {
  Buffer a("A", DataType::float32(), {4, 8});
  Buffer b("B", DataType::float32(), {8});
  Buffer c("C", DataType::float32(), {4});
  Var i("i");
  LoweredFunc f;
  f.name = "matvec";
  f.params = {a, b, c};
  f.num_inputs = 2;
  f.body = For::make(i, 0, 4, ForKind::Serial, Store::make(c, f32(0), {i}));
  EXPECT_EQ(to_string(f),
            "func matvec(float32 A[4, 8], float32 B[8], out float32 C[4]) {\n"
            "  for (i, 0, 4) {\n"
            "    C[i] = 0f\n"
            "  }\n"
            "}\n");
}

TEST(IRPrinter, DistinctBuffersSharingANameGetSuffixes) {
  Buffer a1("A", DataType::float32(), {4});
  Buffer a2("A", DataType::float32(), {4}, MemoryScope::Local);
  Var i("i");
  Stmt s = Allocate::make(a2, Store::make(a1, Load::make(a2, {i}), {i}));
  EXPECT_EQ(to_string(s),
            "allocate float32 A[4] local {\n"
            "  A.1[i] = A[i]\n"
            "}\n");
}

TEST(IRPrinter, IsDeterministicAcrossIdenticalBuilds) {
  auto build = [] {
    Buffer a("A", DataType::float32(), {8});
    Var i("i");
    Var i2("i");
    Stmt inner = For::make(i2, 0, 2, ForKind::Unrolled, Store::make(a, f32(1), {i * 2 + i2}));
    return For::make(i, 0, 4, ForKind::Vectorized, inner);
  };
  std::string first = to_string(build());
  EXPECT_EQ(first, to_string(build()));
  EXPECT_EQ(first,
            "for (i, 0, 4) vectorized {\n"
            "  for (i.1, 0, 2) unrolled {\n"
            "    A[((i*2) + i.1)] = 1f\n"
            "  }\n"
            "}\n");
}

TEST(IRPrinter, StreamsTheSameText) {
  Var i("i");
  std::ostringstream os;
  os << (i + 1);
  EXPECT_EQ(os.str(), "(i + 1)");
  EXPECT_EQ(to_string(Expr()), "<undefined>");
}

}  // namespace
}  // namespace tensortune::ir

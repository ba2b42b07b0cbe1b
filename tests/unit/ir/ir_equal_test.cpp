// SPDX-License-Identifier: Apache-2.0
// Structural equality and hashing: free entities by identity, bound ones by position.
#include "tensortune/ir/ir_equal.h"

#include "ir_test_util.h"
#include "tensortune/ir/ops.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tensortune::ir {
namespace {
using test_util::f32;

Stmt fill_loop(const Buffer& buf, const Var& v, double value) {
  return For::make(v, 0, 8, ForKind::Serial, Store::make(buf, f32(value), {v}));
}

TEST(StructuralEqual, FreeVariablesCompareByIdentity) {
  Var i("i");
  Var other_i("i");
  EXPECT_TRUE(structural_equal(i * 8 + 1, i * 8 + 1));
  EXPECT_FALSE(structural_equal(i * 8 + 1, other_i * 8 + 1));
  EXPECT_EQ(structural_hash(i * 8 + 1), structural_hash(i * 8 + 1));
}

TEST(StructuralEqual, DistinguishesKindsTypesAndValues) {
  Var i("i");
  EXPECT_FALSE(structural_equal(i + 1, i - 1));
  EXPECT_FALSE(structural_equal(i + 1, i + 2));
  EXPECT_FALSE(structural_equal(Expr(1), IntImm::make(DataType::int64(), 1)));
  EXPECT_FALSE(structural_equal(Ramp::make(i, 1, 4), Ramp::make(i, 1, 8)));
  EXPECT_FALSE(structural_equal(Expr(), Expr(1)));
  EXPECT_TRUE(structural_equal(Expr(), Expr()));
}

TEST(StructuralEqual, FloatConstantsCompareByBits) {
  double nan = std::nan("");
  EXPECT_TRUE(structural_equal(f32(nan), f32(nan)));
  EXPECT_EQ(structural_hash(f32(nan)), structural_hash(f32(nan)));
  EXPECT_FALSE(structural_equal(f32(0.0), f32(-0.0)));
  EXPECT_TRUE(structural_equal(f32(1.5), f32(1.5)));
}

TEST(StructuralEqual, LoopVariablesCompareByPosition) {
  Buffer a("A", DataType::float32(), {8});
  Var i("i");
  Var j("j");
  Stmt x = fill_loop(a, i, 1.0);
  Stmt y = fill_loop(a, j, 1.0);
  EXPECT_TRUE(structural_equal(x, y));
  EXPECT_EQ(structural_hash(x), structural_hash(y));
  EXPECT_FALSE(structural_equal(x, fill_loop(a, j, 2.0)));
  EXPECT_FALSE(structural_equal(x, fill_loop(Buffer("A", DataType::float32(), {8}), j, 1.0)));
}

TEST(StructuralEqual, BoundVariableNeverMatchesAFreeOne) {
  Buffer a("A", DataType::float32(), {8});
  Var i("i");
  Var j("j");
  // Both bodies are the same handle, but in `x` it refers to x's loop variable and in `y` to a
  // variable that y's loop does not bind.
  Stmt body = Store::make(a, f32(1), {i});
  Stmt x = For::make(i, 0, 8, ForKind::Serial, body);
  Stmt y = For::make(j, 0, 8, ForKind::Serial, body);
  EXPECT_FALSE(structural_equal(x, y));
}

TEST(StructuralEqual, NestedLoopsMatchInOrder) {
  Buffer a("A", DataType::float32(), {8, 8});
  Var i("i");
  Var j("j");
  Var p("p");
  Var q("q");
  auto nest = [&](const Var& outer, const Var& inner, const Var& row, const Var& col) {
    Stmt s = Store::make(a, f32(0), {row, col});
    return For::make(outer, 0, 8, ForKind::Serial, For::make(inner, 0, 8, ForKind::Serial, s));
  };
  EXPECT_TRUE(structural_equal(nest(i, j, i, j), nest(p, q, p, q)));
  EXPECT_FALSE(structural_equal(nest(i, j, i, j), nest(p, q, q, p)));
  EXPECT_NE(structural_hash(nest(i, j, i, j)), structural_hash(nest(p, q, q, p)));
}

TEST(StructuralEqual, AllocatedBuffersCompareByPosition) {
  Buffer out("C", DataType::float32(), {4});
  Var i("i");
  auto alloc = [&](const std::string& name, int64_t size) {
    Buffer t(name, DataType::float32(), {size}, MemoryScope::Local);
    Stmt body = Seq::make({Store::make(t, f32(2), {i}), Store::make(out, Load::make(t, {i}), {i})});
    return Allocate::make(t, body);
  };
  EXPECT_TRUE(structural_equal(alloc("T", 4), alloc("U", 4)));
  EXPECT_EQ(structural_hash(alloc("T", 4)), structural_hash(alloc("U", 4)));
  EXPECT_FALSE(structural_equal(alloc("T", 4), alloc("T", 8)));
}

TEST(StructuralEqual, LetAndReduceBindByPosition) {
  Buffer a("A", DataType::float32(), {8});
  Var x("x");
  Var y("y");
  Var i("i");
  Stmt lx = LetStmt::make(x, i + 1, Store::make(a, f32(0), {x}));
  Stmt ly = LetStmt::make(y, i + 1, Store::make(a, f32(0), {y}));
  EXPECT_TRUE(structural_equal(lx, ly));
  EXPECT_EQ(structural_hash(lx), structural_hash(ly));
  Var k("k");
  Var r("r");
  Expr sk = Reduce::make(ReduceKind::Sum, Load::make(a, {k}), {IterVar{k, 8, IterKind::Reduce}});
  Expr sr = Reduce::make(ReduceKind::Sum, Load::make(a, {r}), {IterVar{r, 8, IterKind::Reduce}});
  Expr sp = Reduce::make(ReduceKind::Prod, Load::make(a, {r}), {IterVar{r, 8, IterKind::Reduce}});
  EXPECT_TRUE(structural_equal(sk, sr));
  EXPECT_EQ(structural_hash(sk), structural_hash(sr));
  EXPECT_FALSE(structural_equal(sk, sp));
}

TEST(StructuralEqual, ComparesPredicatesAndElseBranches) {
  Buffer a("A", DataType::float32(), {8});
  Var i("i");
  Expr ramp = Ramp::make(i, 1, 4);
  Expr pred = Lt::make(ramp, Broadcast::make(6, 4));
  Expr plain = Load::make(a, {ramp});
  Expr masked = Load::make(a, {ramp}, pred);
  EXPECT_FALSE(structural_equal(plain, masked));
  EXPECT_TRUE(structural_equal(masked, Load::make(a, {Ramp::make(i, 1, 4)}, pred)));
  Stmt then_only = IfThenElse::make(i < 2, Store::make(a, f32(0), {i}));
  Stmt with_else =
      IfThenElse::make(i < 2, Store::make(a, f32(0), {i}), Store::make(a, f32(1), {i}));
  EXPECT_FALSE(structural_equal(then_only, with_else));
  EXPECT_TRUE(structural_equal(with_else, IfThenElse::make(i < 2, Store::make(a, f32(0), {i}),
                                                           Store::make(a, f32(1), {i}))));
}

}  // namespace
}  // namespace tensortune::ir

// SPDX-License-Identifier: Apache-2.0
// The mutator returns the same handle when nothing changed; substitute replaces by identity.
#include "tensortune/ir/ir_mutator.h"

#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"

#include <gtest/gtest.h>

namespace tensortune::ir {
namespace {

Stmt sample_loop(const Var& i, const Buffer& a, const Buffer& b) {
  Expr value = Load::make(a, {i}) * 2.0f + 1.0f;
  return For::make(i, 0, 16, ForKind::Serial, Store::make(b, value, {i}));
}

TEST(IRMutator, UnchangedTreeKeepsItsHandle) {
  Var i("i");
  Buffer a("A", DataType::float32(), {16});
  Buffer b("B", DataType::float32(), {16});
  Stmt s = sample_loop(i, a, b);
  IRMutator identity;
  EXPECT_TRUE(identity.mutate(s).same_as(s));
}

TEST(IRMutator, SubstituteReplacesByIdentity) {
  Var i("i");
  Var other("i");
  Expr e = i * 4 + other;
  Expr r = substitute(e, {{i.get(), Expr(3)}});
  const auto* add = r.as<Add>();
  ASSERT_NE(add, nullptr);
  EXPECT_TRUE(add->b.same_as(other));
  const auto* mul = add->a.as<Mul>();
  ASSERT_NE(mul, nullptr);
  EXPECT_TRUE(is_const_int(mul->a, 3));
}

TEST(IRMutator, SubstituteInsideStatements) {
  Var i("i");
  Var j("j");
  Buffer a("A", DataType::float32(), {16});
  Buffer b("B", DataType::float32(), {16});
  Stmt s = sample_loop(i, a, b);
  Stmt r = substitute(s, {{i.get(), j}});
  EXPECT_FALSE(r.same_as(s));
  int uses_of_j = 0;
  post_order_visit(r, [&](const Expr& e) {
    if (e.same_as(j)) {
      ++uses_of_j;
    }
  });
  EXPECT_EQ(uses_of_j, 2);  // the load index and the store index; the loop var stays i
}

class CountLoads : public IRVisitor {
 public:
  int loads = 0;
  using IRVisitor::visit;

 protected:
  void visit(const Load* op) override {
    ++loads;
    IRVisitor::visit(op);
  }
};

TEST(IRVisitor, RecursesIntoEveryChild) {
  Var i("i");
  Buffer a("A", DataType::float32(), {16});
  Buffer b("B", DataType::float32(), {16});
  Stmt s = sample_loop(i, a, b);
  Stmt both = Seq::make({s, IfThenElse::make(i < 3, s)});
  CountLoads v;
  v.visit(both);
  EXPECT_EQ(v.loads, 2);
}

}  // namespace
}  // namespace tensortune::ir

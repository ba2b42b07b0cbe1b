// SPDX-License-Identifier: Apache-2.0
// Node factories, types, and the checks that keep ill-typed nodes from existing.
#include "tensortune/ir/expr.h"

#include "tensortune/ir/ops.h"
#include "tensortune/ir/stmt.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

namespace tensortune::ir {
namespace {

TEST(DataType, PrintsAndParsesEveryForm) {
  for (DataType t : {DataType::float32(), DataType::int32(), DataType::boolean(),
                     DataType::float32(16), DataType::bfloat16(), DataType::float16(8),
                     DataType::int64()}) {
    EXPECT_EQ(DataType::parse(t.to_string()), t) << t.to_string();
  }
  EXPECT_EQ(DataType::float32(16).to_string(), "float32x16");
  EXPECT_EQ(DataType::boolean().to_string(), "bool");
}

TEST(DataType, RejectsUnknownNames) {
  EXPECT_THROW(DataType::parse("float33"), UserError);
  EXPECT_THROW(DataType::parse("double"), UserError);
  EXPECT_THROW(DataType::parse("float32x"), UserError);
}

TEST(Expr, VarsCompareByIdentityNotName) {
  Var a("i");
  Var b("i");
  EXPECT_FALSE(a.same_as(b));
  Expr e = a;
  EXPECT_TRUE(e.same_as(a));
  EXPECT_EQ(Var::from(e).get(), a.get());
}

TEST(Expr, FactoriesRejectMismatchedTypes) {
  Var i("i");
  Var x("x", DataType::float32());
  EXPECT_THROW(Add::make(i, x), InternalError);
  EXPECT_THROW(Ramp::make(i, i, 1), InternalError);
  EXPECT_THROW(Select::make(i, x, x), InternalError);
}

TEST(Expr, Float32ConstantsAreRoundedToFloat) {
  Expr c = FloatImm::make(DataType::float32(), 0.1);
  EXPECT_EQ(c.as<FloatImm>()->value, static_cast<double>(0.1f));
}

TEST(Ops, ConstantsAdoptTheOtherOperandsType) {
  Var x("x", DataType::float32());
  Expr e = x * 2;
  EXPECT_EQ(e.type(), DataType::float32());
  const auto* mul = e.as<Mul>();
  ASSERT_NE(mul, nullptr);
  EXPECT_NE(mul->b.as<FloatImm>(), nullptr);
}

TEST(Ops, ScalarsBroadcastAgainstVectors) {
  Var i("i");
  Expr r = Ramp::make(i, 1, 8);
  Expr e = r + 3;
  EXPECT_EQ(e.type(), DataType::int32(8));
  EXPECT_NE(e.as<Add>()->b.as<Broadcast>(), nullptr);
}

TEST(Ops, MismatchedVariablesAreUserErrors) {
  Var i("i");
  Var x("x", DataType::float32());
  try {
    (void)(i + x);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("int32 and float32"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)exp(i), UserError);
  EXPECT_THROW((void)(x && x), UserError);
}

TEST(Ops, ComparisonsAreBoolean) {
  Var i("i");
  EXPECT_EQ((i < 4).type(), DataType::boolean());
  EXPECT_EQ((Ramp::make(i, 1, 4) < 4).type(), DataType::boolean(4));
}

TEST(Ops, ReduceIdentities) {
  EXPECT_TRUE(is_const_int(reduce_identity(ReduceKind::Sum, DataType::int32()), 0));
  EXPECT_TRUE(is_const_int(reduce_identity(ReduceKind::Prod, DataType::int32()), 1));
  EXPECT_EQ(reduce_identity(ReduceKind::Maximum, DataType::float32()).as<FloatImm>()->value,
            -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(is_const_int(reduce_identity(ReduceKind::Minimum, DataType::int32()), 2147483647));
}

TEST(Stmt, SeqFlattensAndUnwrapsSingletons) {
  Buffer b("B", DataType::float32(), {4});
  Stmt s0 = Store::make(b, Expr(1.0f), {Expr(0)});
  Stmt s1 = Store::make(b, Expr(2.0f), {Expr(1)});
  Stmt inner = Seq::make({s0, s1});
  Stmt outer = Seq::make({inner, s0});
  ASSERT_NE(outer.as<Seq>(), nullptr);
  EXPECT_EQ(outer.as<Seq>()->stmts.size(), 3u);
  EXPECT_TRUE(Seq::make({s0}).same_as(s0));
}

TEST(Stmt, StoreChecksValueTypeAgainstBuffer) {
  Buffer b("B", DataType::float32(), {4});
  EXPECT_THROW(Store::make(b, Expr(1), {Expr(0)}), InternalError);
}

}  // namespace
}  // namespace tensortune::ir

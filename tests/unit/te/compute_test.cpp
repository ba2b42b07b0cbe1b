// SPDX-License-Identifier: Apache-2.0
// placeholder, compute and the reductions: axis naming, body checks, collected inputs.
#include "tensortune/te/compute.h"

#include "common/errors.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

namespace tensortune::te {
namespace {

using test::user_error;

using ir::DataType;
using ir::Expr;
using ir::Var;
using Vars = std::vector<Var>;

/// Runs `fn` and returns the UserError message it throws ("" when it does not throw).
TEST(Placeholder, HasShapeDtypeAndName) {
  Tensor a = placeholder({3, 4}, DataType::float32(), "A");
  EXPECT_TRUE(a.op()->is_placeholder());
  EXPECT_EQ(a.name(), "A");
  EXPECT_EQ(a.shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(a.dtype(), DataType::float32());
  EXPECT_EQ(a.buffer().name(), "A");
}

TEST(Placeholder, RejectsEmptyNameAndNonPositiveExtent) {
  EXPECT_NE(user_error([] { placeholder({3}, DataType::float32(), ""); }), "");
  std::string msg = user_error([] { placeholder({3, 0}, DataType::float32(), "A"); });
  EXPECT_NE(msg.find("placeholder 'A'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dimension 1"), std::string::npos) << msg;
}

// Found by the workload_spec fuzz target: "pad:N=1,C=1,H=2,W=3,pad=2147483647" overflowed the
// element count of a [1, 1, 2^32, 2^32 + 1] tensor.
TEST(Placeholder, RejectsAShapeWhoseElementCountOverflows) {
  int64_t big = int64_t{1} << 32;
  std::string msg = user_error([&] { placeholder({big, big + 1}, DataType::float32(), "A"); });
  EXPECT_NE(msg.find("placeholder 'A': more than 2^48 elements"), std::string::npos) << msg;
  msg = user_error([&] {
    compute(
        {big, big}, [](const Vars&) { return Expr(1.0f); }, "C");
  });
  EXPECT_NE(msg.find("compute 'C': more than 2^48 elements"), std::string::npos) << msg;
  EXPECT_NE(user_error([] { make_workload("pad:N=1,C=1,H=2,W=3,pad=2147483647"); }), "");
}

TEST(Tensor, ReadChecksIndexCountAndType) {
  Tensor a = placeholder({3, 4}, DataType::float32(), "A");
  std::string msg = user_error([&] { a(Expr(1)); });
  EXPECT_NE(msg.find("tensor 'A' has 2 dimensions but is read with 1 indices"), std::string::npos)
      << msg;
  msg = user_error([&] { a(Expr(1), Expr(1.0f)); });
  EXPECT_NE(msg.find("float32"), std::string::npos) << msg;
  Expr load = a(Expr(1), Expr(2));
  ASSERT_NE(load.as<ir::Load>(), nullptr);
  EXPECT_TRUE(load.as<ir::Load>()->buffer.same_as(a.buffer()));
}

TEST(Compute, NamesAxesIjkByDefaultAndA6Beyond) {
  Tensor a = placeholder({2, 2, 2, 2, 2, 2, 2}, DataType::float32(), "A");
  Tensor b = compute(
      a.shape(), [&](const Vars& v) { return a(std::vector<Expr>(v.begin(), v.end())); }, "B");
  std::vector<std::string> names;
  for (const ir::IterVar& axis : b.op()->axes) {
    names.push_back(axis.var.name());
    EXPECT_EQ(axis.kind, ir::IterKind::DataPar);
    EXPECT_EQ(axis.extent, 2);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"i", "j", "k", "l", "m", "n", "a6"}));
}

TEST(Compute, UsesGivenAxisNamesAndChecksTheirCount) {
  Tensor a = placeholder({4, 5}, DataType::float32(), "A");
  Tensor b = compute({4, 5}, [&](const Vars& v) { return a(v[0], v[1]); }, "B", "", {"x", "y"});
  EXPECT_EQ(b.op()->axes[0].var.name(), "x");
  EXPECT_EQ(b.op()->axes[1].var.name(), "y");
  std::string msg = user_error([&] {
    compute({4, 5}, [&](const Vars& v) { return a(v[0], v[1]); }, "B", "", {"x"});
  });
  EXPECT_NE(msg.find("compute 'B': 1 axis names for 2 dimensions"), std::string::npos) << msg;
  msg = user_error([&] {
    compute({4, 5}, [&](const Vars& v) { return a(v[0], v[1]); }, "B", "", {"x", "x"});
  });
  EXPECT_NE(msg.find("axis name 'x' is used twice"), std::string::npos) << msg;
}

TEST(Compute, RejectsReductionAxisNamedLikeAnAxis) {
  Tensor a = placeholder({4, 4, 4}, DataType::float32(), "A");
  ir::IterVar k = reduce_axis(4, "k");
  std::string msg = user_error([&] {
    compute(
        {4, 4, 4}, [&](const Vars& v) { return sum(a(v[0], v[1], k.var), {k}); }, "B");
  });
  EXPECT_NE(msg.find("reduction axis name 'k' is used twice"), std::string::npos) << msg;
}

TEST(Compute, RejectsOwnAxisAsReductionAxis) {
  Tensor a = placeholder({4}, DataType::float32(), "A");
  std::string msg = user_error([&] {
    compute(
        {4},
        [&](const Vars& v) {
          return sum(a(v[0]), {ir::IterVar{v[0], 4, ir::IterKind::Reduce}});
        },
        "B");
  });
  EXPECT_NE(msg.find("both a compute axis and a reduction axis"), std::string::npos) << msg;
}

TEST(Compute, RejectsReductionBelowTheTop) {
  Tensor a = placeholder({4, 4}, DataType::float32(), "A");
  ir::IterVar k = reduce_axis(4, "k");
  std::string msg = user_error([&] {
    compute(
        {4}, [&](const Vars& v) { return sum(a(v[0], k.var), {k}) * 2.0f; }, "B");
  });
  EXPECT_NE(msg.find("compute 'B': a reduction may only be the whole body"), std::string::npos)
      << msg;
}

TEST(Compute, RejectsFreeVariables) {
  Tensor a = placeholder({4}, DataType::float32(), "A");
  Var stray("t");
  std::string msg = user_error([&] {
    compute(
        {4}, [&](const Vars& v) { return a(v[0] + stray); }, "B");
  });
  EXPECT_NE(msg.find("body uses variable 't'"), std::string::npos) << msg;
}

TEST(Compute, RejectsBufferReadOutsideATensor) {
  ir::Buffer raw("raw", DataType::float32(), {4});
  std::string msg = user_error([&] {
    compute(
        {4}, [&](const Vars& v) { return ir::Load::make(raw, {v[0]}); }, "B");
  });
  EXPECT_NE(msg.find("buffer 'raw'"), std::string::npos) << msg;
}

TEST(Compute, RejectsBooleanBodyAndEmptyName) {
  Tensor a = placeholder({4}, DataType::float32(), "A");
  std::string msg = user_error([&] {
    compute(
        {4}, [&](const Vars& v) { return a(v[0]) > 0.0f; }, "B");
  });
  EXPECT_NE(msg.find("scalar number, got bool"), std::string::npos) << msg;
  EXPECT_NE(user_error([&] {
              compute(
                  {4}, [&](const Vars& v) { return a(v[0]); }, "");
            }),
            "");
}

TEST(Compute, CollectsInputsInFirstReadOrderWithoutDuplicates) {
  Tensor a = placeholder({4}, DataType::float32(), "A");
  Tensor b = placeholder({4}, DataType::float32(), "B");
  Tensor c = compute(
      {4}, [&](const Vars& v) { return b(v[0]) * a(v[0]) + b(v[0]); }, "C");
  ASSERT_EQ(c.op()->inputs.size(), 2u);
  EXPECT_EQ(c.op()->inputs[0], b.op());
  EXPECT_EQ(c.op()->inputs[1], a.op());
  // A tensor read inside the body function but not used in the body is not an input.
  Tensor d = compute(
      {4},
      [&](const Vars& v) {
        a(v[0]);
        return b(v[0]);
      },
      "D");
  ASSERT_EQ(d.op()->inputs.size(), 1u);
  EXPECT_EQ(d.op()->inputs[0], b.op());
}

TEST(Compute, ReductionBodyHasReduceAtTopAndTypedOutput) {
  Tensor a = placeholder({4, 6}, DataType::int32(), "A");
  ir::IterVar k = reduce_axis(6, "k");
  Tensor s = compute(
      {4}, [&](const Vars& v) { return max_reduce(a(v[0], k.var), {k}); }, "S", "reduction");
  ASSERT_NE(s.op()->reduce(), nullptr);
  EXPECT_EQ(s.op()->reduce()->reducer, ir::ReduceKind::Maximum);
  ASSERT_EQ(s.op()->reduce_axes().size(), 1u);
  EXPECT_EQ(s.op()->reduce_axes()[0].extent, 6);
  EXPECT_EQ(s.dtype(), DataType::int32());
  EXPECT_EQ(s.op()->tag, "reduction");
}

TEST(Compute, AllowsZeroDimensionalOutput) {
  Tensor a = placeholder({5}, DataType::float32(), "A");
  ir::IterVar k = reduce_axis(5, "k");
  Tensor s = compute(
      {}, [&](const Vars&) { return prod(a(k.var), {k}); }, "S");
  EXPECT_EQ(s.ndim(), 0u);
  EXPECT_EQ(s.op()->reduce()->reducer, ir::ReduceKind::Prod);
}

TEST(Placeholder, ARankZeroInputIsAUserError) {
  const std::string msg = user_error([] { placeholder({}, DataType::float32(), "P"); });
  EXPECT_NE(msg.find("'P' has no dimensions"), std::string::npos) << msg;
}

TEST(Reduce, ChecksAxesAndSource) {
  Tensor a = placeholder({5}, DataType::float32(), "A");
  ir::IterVar data_axis{Var("x"), 5, ir::IterKind::DataPar};
  EXPECT_NE(user_error([&] { sum(a(Expr(0)), {}); }), "");
  std::string msg = user_error([&] { min_reduce(a(data_axis.var), {data_axis}); });
  EXPECT_NE(msg.find("'x' is not a reduction axis"), std::string::npos) << msg;
  EXPECT_NE(user_error([] { reduce_axis(0, "k"); }), "");
  EXPECT_NE(user_error([] { reduce_axis(3, ""); }), "");
}

}  // namespace
}  // namespace tensortune::te

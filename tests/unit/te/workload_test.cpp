// SPDX-License-Identifier: Apache-2.0
// Workload: DAG checks, operation order, consumers, canonical text, key and flop count.
#include "tensortune/te/workload.h"

#include "common/errors.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

namespace tensortune::te {
namespace {

using test::user_error;

using ir::DataType;
using ir::Expr;
using Vars = std::vector<ir::Var>;

/// D = relu(A x B) + A  over [n, n] with user-chosen names.
Workload chain(int64_t n,
               const std::string& a_name,
               const std::string& b_name,
               const std::string& k_name) {
  Tensor a = placeholder({n, n}, DataType::float32(), a_name);
  Tensor b = placeholder({n, n}, DataType::float32(), b_name);
  ir::IterVar k = reduce_axis(n, k_name);
  Tensor c =
      compute({n, n}, [&](const Vars& v) { return sum(a(v[0], k.var) * b(k.var, v[1]), {k}); }, "C",
              "matmul", {"p", "q"});
  Tensor r = relu(c, "R");
  Tensor d = add(r, a, "D");
  return Workload("chain", {a, b}, {d});
}

std::vector<std::string> op_names(const Workload& w) {
  std::vector<std::string> names;
  for (const OperationRef& op : w.ops()) {
    names.push_back(op->name);
  }
  return names;
}

TEST(Workload, OrdersProducersBeforeConsumersDepthFirst) {
  Workload w = chain(8, "A", "B", "k");
  EXPECT_EQ(op_names(w), (std::vector<std::string>{"A", "B", "C", "R", "D"}));
  ASSERT_NE(w.find_op("R"), nullptr);
  EXPECT_EQ(w.find_op("R")->tag, "elemwise");
  EXPECT_EQ(w.find_op("nope"), nullptr);
}

TEST(Workload, ListsConsumers) {
  Workload w = chain(8, "A", "B", "k");
  std::vector<OperationRef> of_a = w.consumers(w.find_op("A"));
  ASSERT_EQ(of_a.size(), 2u);
  EXPECT_EQ(of_a[0]->name, "C");
  EXPECT_EQ(of_a[1]->name, "D");
  EXPECT_TRUE(w.consumers(w.find_op("D")).empty());
}

TEST(Workload, RejectsMissingUnusedAndMisplacedTensors) {
  Tensor a = placeholder({4}, DataType::float32(), "A");
  Tensor b = placeholder({4}, DataType::float32(), "B");
  Tensor c = add(a, b, "C");
  std::string msg = user_error([&] { Workload("w", {a}, {c}); });
  EXPECT_NE(msg.find("placeholder 'B' is read but not listed as an input"), std::string::npos)
      << msg;
  Tensor unused = placeholder({4}, DataType::float32(), "U");
  msg = user_error([&] { Workload("w", {a, b, unused}, {c}); });
  EXPECT_NE(msg.find("input 'U' is not read by any output"), std::string::npos) << msg;
  msg = user_error([&] { Workload("w", {a, b, c}, {c}); });
  EXPECT_NE(msg.find("input 'C' is not a placeholder"), std::string::npos) << msg;
  msg = user_error([&] { Workload("w", {a, b}, {a}); });
  EXPECT_NE(msg.find("output 'A' is a placeholder"), std::string::npos) << msg;
  msg = user_error([&] { Workload("w", {a, b, a}, {c}); });
  EXPECT_NE(msg.find("input 'A' is listed twice"), std::string::npos) << msg;
  EXPECT_NE(user_error([&] { Workload("", {a, b}, {c}); }), "");
  EXPECT_NE(user_error([&] { Workload("w", {a, b}, {}); }), "");
}

TEST(Workload, RejectsTwoOperationsWithOneName) {
  Tensor a = placeholder({4}, DataType::float32(), "A");
  Tensor b = relu(a, "X");
  Tensor c = relu(b, "X");
  std::string msg = user_error([&] { Workload("w", {a}, {c}); });
  EXPECT_NE(msg.find("two operations are named 'X'"), std::string::npos) << msg;
}

TEST(Workload, CanonicalTextIgnoresUserNamesOfTensorsAndAxes) {
  Workload w1 = chain(8, "A", "B", "k");
  Workload w2 = chain(8, "lhs", "rhs", "red");
  EXPECT_EQ(w1.canonical_text(), w2.canonical_text());
  EXPECT_EQ(w1.key(), w2.key());
  std::string text = w1.canonical_text();
  EXPECT_EQ(text.find("lhs"), std::string::npos);
  EXPECT_NE(text.find("T0 = placeholder float32 [8, 8]"), std::string::npos) << text;
  EXPECT_NE(text.find("tag=\"matmul\""), std::string::npos) << text;
  EXPECT_NE(text.find("ax0"), std::string::npos) << text;
  EXPECT_NE(text.find("r0"), std::string::npos) << text;
  EXPECT_NE(text.find("inputs T0, T1"), std::string::npos) << text;
  EXPECT_NE(text.find("outputs T4"), std::string::npos) << text;
}

TEST(Workload, KeyIsNamePlusSixteenHexDigitsAndStable) {
  Workload w1 = chain(8, "A", "B", "k");
  Workload w2 = chain(8, "A", "B", "k");
  EXPECT_EQ(w1.key(), w2.key());
  const std::string& key = w1.key();
  ASSERT_EQ(key.size(), std::string("chain_").size() + 16);
  EXPECT_EQ(key.substr(0, 6), "chain_");
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef", 6), std::string::npos) << key;
}

TEST(Workload, KeyChangesWithShapeDtypeBodyAndInputOrder) {
  std::string base = chain(8, "A", "B", "k").key();
  EXPECT_NE(chain(16, "A", "B", "k").key(), base);
  Tensor a = placeholder({8}, DataType::float32(), "A");
  Tensor b = placeholder({8}, DataType::float32(), "B");
  Tensor ai = placeholder({8}, DataType::int32(), "A");
  Tensor bi = placeholder({8}, DataType::int32(), "B");
  std::string sum_key = Workload("w", {a, b}, {add(a, b)}).key();
  EXPECT_NE(Workload("w", {a, b}, {multiply(a, b)}).key(), sum_key);
  EXPECT_NE(Workload("w", {ai, bi}, {add(ai, bi)}).key(), sum_key);
  EXPECT_NE(Workload("w", {b, a}, {add(a, b)}).key(), sum_key);
  Tensor c = compute(
      {8}, [&](const Vars& v) { return a(v[0]) + b(v[0]); }, "add", "other");
  EXPECT_NE(Workload("w", {a, b}, {c}).key(), sum_key);
}

TEST(Workload, CountsMultiplyAddAsTwoFlops) {
  // C = A x B: 2 flops per multiply-add; relu: 1 per element; add: 1 per element.
  Workload w = chain(8, "A", "B", "k");
  EXPECT_DOUBLE_EQ(w.flop_count(), 2.0 * 8 * 8 * 8 + 8 * 8 + 8 * 8);
}

TEST(Workload, FlopCountIgnoresIndexArithmeticSelectsAndCasts) {
  Tensor a = placeholder({10}, DataType::int32(), "A");
  Tensor b = compute(
      {8},
      [&](const Vars& v) {
        Expr x = a(v[0] * 2 % 10 + 1);
        return ir::select(x > 0, ir::cast(DataType::float32(), x) * 3.0f, ir::exp(1.0f));
      },
      "B");
  // Only the multiply counts: the index math, the comparison, the select, the cast and the
  // constant exp(1) do not.
  EXPECT_DOUBLE_EQ(Workload("w", {a}, {b}).flop_count(), 8.0);
}

// Listed together, workloads of one name and different keys are told apart by their keys'
// ends; a name of one key, however often listed, stays as it is.
TEST(DistinctNames, OnlyNamesSharedByDifferentKeysGetTheirKeysEnds) {
  const std::vector<std::string> got = distinct_names({{"conv_relu_1x8", "keyAAAAAA123456"},
                                                       {"conv_relu_1x8", "keyBBBBBB654321"},
                                                       {"gemm_1x10", "keyCCC"},
                                                       {"conv_relu_1x8", "keyAAAAAA123456"},
                                                       {"gemm_1x10", "keyCCC"},
                                                       {"x", "abc"},
                                                       {"x", "de"}});
  EXPECT_EQ(got,
            (std::vector<std::string>{"conv_relu_1x8_123456", "conv_relu_1x8_654321", "gemm_1x10",
                                      "conv_relu_1x8_123456", "gemm_1x10", "x_abc", "x_de"}));
  EXPECT_TRUE(distinct_names({}).empty());
}

}  // namespace
}  // namespace tensortune::te

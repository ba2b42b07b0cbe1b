// SPDX-License-Identifier: Apache-2.0
// The interpreter: exact float32 semantics, floor division, strict bounds checks, predication,
// select laziness, vector stores, poisoned locals, and whole loop nests against C++ references.
#include "tensortune/ir/eval.h"

#include "common/errors.h"
#include "ir_test_util.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"
#include "tensortune/support/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace tensortune::ir {
namespace {
using test::internal_error;
using test_util::f32;

LoweredFunc func(std::vector<Buffer> params, size_t num_inputs, Stmt body) {
  LoweredFunc f;
  f.name = "f";
  f.params = std::move(params);
  f.num_inputs = num_inputs;
  f.body = std::move(body);
  return f;
}

std::vector<float> random_floats(size_t n, uint64_t seed) {
  support::Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) {
    x = rng.uniform_float(-1.0f, 1.0f);
  }
  return v;
}

/// c = a*b for n x n matrices, accumulating in float in k order, without fused multiply-adds.
std::vector<float> reference_matmul(const std::vector<float>& a,
                                    const std::vector<float>& b,
                                    int n) {
  std::vector<float> c(static_cast<size_t>(n * n));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < n; ++k) {
        auto p = static_cast<float>(static_cast<double>(a[i * n + k]) * b[k * n + j]);
        acc = static_cast<float>(static_cast<double>(acc) + p);
      }
      c[i * n + j] = acc;
    }
  }
  return c;
}

/// C = A*B over n x n matrices; flattened indices when `flat`.
LoweredFunc matmul(int n, bool flat) {
  std::vector<int64_t> shape = flat ? std::vector<int64_t>{n * n} : std::vector<int64_t>{n, n};
  Buffer a("A", DataType::float32(), shape);
  Buffer b("B", DataType::float32(), shape);
  Buffer c("C", DataType::float32(), shape);
  Var i("i");
  Var j("j");
  Var k("k");
  auto at = [&](const Expr& r, const Expr& col) {
    return flat ? std::vector<Expr>{r * n + col} : std::vector<Expr>{r, col};
  };
  Stmt update = Store::make(
      c, Load::make(c, at(i, j)) + Load::make(a, at(i, k)) * Load::make(b, at(k, j)), at(i, j));
  Stmt body =
      Seq::make({Store::make(c, f32(0), at(i, j)), For::make(k, 0, n, ForKind::Serial, update)});
  return func({a, b, c}, 2,
              For::make(i, 0, n, ForKind::Parallel, For::make(j, 0, n, ForKind::Serial, body)));
}

TEST(Eval, MatmulMatchesAFloat32Reference) {
  const int n = 16;
  std::vector<float> a = random_floats(n * n, 1);
  std::vector<float> b = random_floats(n * n, 2);
  std::vector<float> expected = reference_matmul(a, b, n);
  for (bool flat : {false, true}) {
    std::vector<float> c(n * n, -1.0f);
    eval(matmul(n, flat), {a.data(), b.data(), c.data()});
    EXPECT_EQ(c, expected) << (flat ? "flattened" : "unflattened");
  }
}

TEST(Eval, InterpretsA64CubedMatmul) {
  const int n = 64;
  std::vector<float> a = random_floats(n * n, 3);
  std::vector<float> b = random_floats(n * n, 4);
  std::vector<float> c(n * n);
  eval(matmul(n, true), {a.data(), b.data(), c.data()});
  EXPECT_EQ(c, reference_matmul(a, b, n));
}

TEST(Eval, IntegerDivisionAndModuloFloor) {
  Var x("x");
  Var y("y");
  auto run = [&](const Expr& e, int64_t xv, int64_t yv) {
    return eval_int(e, {{x.get(), xv}, {y.get(), yv}});
  };
  EXPECT_EQ(run(x / y, -7, 2), -4);
  EXPECT_EQ(run(x % y, -7, 2), 1);
  EXPECT_EQ(run(x / y, 7, -2), -4);
  EXPECT_EQ(run(x % y, 7, -2), -1);
  EXPECT_EQ(run(x / y, 7, 2), 3);
  EXPECT_EQ(run(x % y, -8, 4), 0);
  EXPECT_NE(internal_error([&] { run(x / y, 1, 0); }).find("division by zero"), std::string::npos);
}

TEST(Eval, Int32ArithmeticWraps) {
  Var x("x");
  EXPECT_EQ(eval_int(x + 1, {{x.get(), 2147483647}}), -2147483648LL);
  EXPECT_EQ(eval_int(x * 2, {{x.get(), 1LL << 30}}), -2147483648LL);
}

TEST(Eval, Float32ResultsAreRoundedAfterEveryOperation) {
  // 1e8f + 1f is 1e8f in float; in double it would be 100000001.
  EXPECT_EQ(eval_float(f32(1e8) + f32(1), {}), 1e8);
  // (0.1f * 3f) rounded to float is not 0.1*3 in double.
  EXPECT_EQ(eval_float(f32(0.1) * f32(3), {}), static_cast<double>(0.1f * 3.0f));
  EXPECT_EQ(eval_float(f32(1) / f32(3), {}), static_cast<double>(1.0f / 3.0f));
  Expr d = FloatImm::make(DataType::float64(), 1e8) + FloatImm::make(DataType::float64(), 1);
  EXPECT_EQ(eval_float(d, {}), 100000001.0);
}

TEST(Eval, IntrinsicsUseFloatPrecision) {
  EXPECT_EQ(eval_float(exp(f32(0.5)), {}), static_cast<double>(std::exp(0.5f)));
  EXPECT_EQ(eval_float(erf(f32(0.3)), {}), static_cast<double>(std::erf(0.3f)));
  EXPECT_EQ(eval_float(pow(f32(1.7), f32(2.5)), {}), static_cast<double>(std::pow(1.7f, 2.5f)));
  EXPECT_EQ(eval_float(tanh(f32(-0.8)), {}), static_cast<double>(std::tanh(-0.8f)));
  EXPECT_EQ(eval_float(floor(f32(-1.5)), {}), -2.0);
  Var x("x");
  EXPECT_EQ(eval_int(abs(x), {{x.get(), -5}}), 5);
}

TEST(Eval, CastsTruncateAndRejectNan) {
  EXPECT_EQ(eval_int(cast(DataType::int32(), f32(-2.7)), {}), -2);
  EXPECT_EQ(eval_int(cast(DataType::int32(), f32(2.7)), {}), 2);
  EXPECT_EQ(eval_float(cast(DataType::float32(), Expr(16777217)), {}), 16777216.0);
  EXPECT_EQ(eval_int(cast(DataType::boolean(), Expr(3)), {}), 1);
  EXPECT_EQ(eval_int(cast(DataType(DataType::Code::Int, 8), Expr(300)), {}), 44);
  Expr nan_cast = cast(DataType::int32(), f32(std::nan("")));
  EXPECT_NE(internal_error([&] { eval_int(nan_cast, {}); }).find("cast of"), std::string::npos);
}

TEST(Eval, FloatMinMaxPropagateNan) {
  double nan = std::nan("");
  EXPECT_TRUE(std::isnan(eval_float(max(f32(nan), f32(1)), {})));
  EXPECT_TRUE(std::isnan(eval_float(min(f32(1), f32(nan)), {})));
  EXPECT_EQ(eval_float(max(f32(-1), f32(2)), {}), 2.0);
}

TEST(Eval, ReportsOutOfBoundsAccessesWithBufferAndIndex) {
  Buffer a("A", DataType::float32(), {4, 4});
  Buffer out("Out", DataType::float32(), {8});
  Var i("i");
  std::vector<float> av(16);
  std::vector<float> ov(8);
  LoweredFunc rows =
      func({a, out}, 1,
           For::make(i, 0, 5, ForKind::Serial, Store::make(out, Load::make(a, {i, 0}), {i})));
  std::string msg = internal_error([&] { eval(rows, {av.data(), ov.data()}); });
  EXPECT_NE(msg.find("load from 'A' out of bounds: index [4, 0] (shape [4, 4])"), std::string::npos)
      << msg;
  LoweredFunc flat =
      func({a, out}, 1, For::make(i, 0, 9, ForKind::Serial, Store::make(out, f32(0), {i})));
  msg = internal_error([&] { eval(flat, {av.data(), ov.data()}); });
  EXPECT_NE(msg.find("store to 'Out' out of bounds: index 8 (valid [0, 8))"), std::string::npos)
      << msg;
}

TEST(Eval, PredicatedLanesAreNotAccessed) {
  Buffer a("A", DataType::float32(), {6});
  Buffer out("Out", DataType::float32(), {6});
  Var i("i");
  Expr ramp = Ramp::make(i * 4, 1, 4);
  Expr pred = Lt::make(ramp, Broadcast::make(6, 4));
  Stmt store =
      Store::make(out, Load::make(a, {ramp}, pred) * Broadcast::make(f32(2), 4), {ramp}, pred);
  std::vector<float> av = {1, 2, 3, 4, 5, 6};
  std::vector<float> ov(6);
  eval(func({a, out}, 1, For::make(i, 0, 2, ForKind::Vectorized, store)), {av.data(), ov.data()});
  EXPECT_EQ(ov, (std::vector<float>{2, 4, 6, 8, 10, 12}));
}

TEST(Eval, SelectEvaluatesOnlyTheChosenArm) {
  Buffer a("A", DataType::float32(), {4});
  Buffer out("Out", DataType::float32(), {8});
  Var i("i");
  Stmt pad = Store::make(out, select(i < 4, Load::make(a, {i}), f32(0)), {i});
  std::vector<float> av = {1, 2, 3, 4};
  std::vector<float> ov(8, -1);
  eval(func({a, out}, 1, For::make(i, 0, 8, ForKind::Serial, pad)), {av.data(), ov.data()});
  EXPECT_EQ(ov, (std::vector<float>{1, 2, 3, 4, 0, 0, 0, 0}));
}

TEST(Eval, VectorStoresReadAllLanesBeforeWriting) {
  Buffer a("A", DataType::int32(), {5});
  Stmt shift = Store::make(a, Load::make(a, {Ramp::make(0, 1, 4)}), {Ramp::make(1, 1, 4)});
  std::vector<int32_t> av = {10, 20, 30, 40, 50};
  eval(func({a}, 0, shift), {av.data()});
  EXPECT_EQ(av, (std::vector<int32_t>{10, 10, 20, 30, 40}));
}

TEST(Eval, UnsetLocalMemoryReadsAsNan) {
  Buffer t("T", DataType::float32(), {2}, MemoryScope::Local);
  Buffer out("Out", DataType::float32(), {2});
  Stmt body = Allocate::make(
      t, Seq::make({Store::make(t, f32(5), {0}), Store::make(out, Load::make(t, {0}) + f32(1), {0}),
                    Store::make(out, Load::make(t, {1}) + f32(1), {1})}));
  std::vector<float> ov(2);
  eval(func({out}, 0, body), {ov.data()});
  EXPECT_EQ(ov[0], 6.0f);
  EXPECT_TRUE(std::isnan(ov[1]));
}

TEST(Eval, RunsLetsIfsAndEveryLoopKindSerially) {
  Buffer out("Out", DataType::int32(), {2, 3});
  Var i("i");
  Var j("j");
  Var x("x");
  Stmt store = LetStmt::make(
      x, i * 10 + j,
      IfThenElse::make(x % 2 == 0, Store::make(out, x, {i, j}), Store::make(out, 0 - x, {i, j})));
  Stmt nest = For::make(i, 0, 2, ForKind::BlockX, For::make(j, 0, 3, ForKind::ThreadX, store));
  std::vector<int32_t> ov(6);
  eval(func({out}, 0, nest), {ov.data()});
  EXPECT_EQ(ov, (std::vector<int32_t>{0, -1, 2, 10, -11, 12}));
}

TEST(Eval, LoopsWithANonZeroMinAndVectorLets) {
  Buffer out("Out", DataType::int32(), {8});
  Var i("i");
  Var v("v", DataType::int32(4));
  Stmt body =
      LetStmt::make(v, Ramp::make(i * 4, 1, 4), Store::make(out, v * Broadcast::make(3, 4), {v}));
  std::vector<int32_t> ov(8, -1);
  eval(func({out}, 0, For::make(i, 1, 1, ForKind::Serial, body)), {ov.data()});
  EXPECT_EQ(ov, (std::vector<int32_t>{-1, -1, -1, -1, 12, 15, 18, 21}));
}

TEST(Eval, RejectsUnboundVariablesAndReduce) {
  Var x("x");
  Var y("y");
  EXPECT_NE(internal_error([&] {
              eval_int(x + y, {{x.get(), 1}});
            }).find("'y'"),
            std::string::npos);
  Buffer a("A", DataType::float32(), {4});
  Var k("k");
  Expr sum = Reduce::make(ReduceKind::Sum, Load::make(a, {k}), {IterVar{k, 4, IterKind::Reduce}});
  EXPECT_NE(internal_error([&] { eval_float(sum, {}); }).find("Reduce"), std::string::npos);
}

TEST(Eval, ChecksTheArgumentCount) {
  LoweredFunc f = matmul(2, true);
  std::vector<float> a(4);
  EXPECT_NE(internal_error([&] { eval(f, {a.data()}); }).find("takes 3 buffers, got 1"),
            std::string::npos);
}

}  // namespace
}  // namespace tensortune::ir

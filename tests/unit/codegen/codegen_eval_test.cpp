// SPDX-License-Identifier: Apache-2.0
// Compiled kernels agree with ir::eval, the interpreter that defines the IR's semantics: the same
// random inputs go through both, and every buffer must match afterwards.
#include "codegen_test_util.h"
#include "tensortune/ir/eval.h"

#include <gtest/gtest.h>

#include <cstring>

namespace tensortune::codegen {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)
using ir::DataType;
using ir::Expr;

/// Raw storage for every param of `f`, filled from `seed` (floats in [-2, 2), ints in [-50, 50]).
std::vector<std::vector<uint8_t>> random_buffers(const ir::LoweredFunc& f, uint64_t seed) {
  support::Rng rng(seed);
  std::vector<std::vector<uint8_t>> data;
  for (const ir::Buffer& b : f.params) {
    auto n = static_cast<size_t>(b.num_elements());
    std::vector<uint8_t> bytes(n * static_cast<size_t>(b.dtype().bytes()));
    for (size_t i = 0; i < n; ++i) {
      if (b.dtype() == DataType::float32()) {
        float v = rng.uniform_float(-2.0f, 2.0f);
        std::memcpy(bytes.data() + 4 * i, &v, 4);
      } else if (b.dtype() == DataType::int32()) {
        auto v = static_cast<int32_t>(rng.uniform_int(-50, 50));
        std::memcpy(bytes.data() + 4 * i, &v, 4);
      } else {
        ADD_FAILURE() << "no random data for " << b.dtype().to_string();
      }
    }
    data.push_back(std::move(bytes));
  }
  return data;
}

std::vector<void*> pointers(std::vector<std::vector<uint8_t>>& data) {
  std::vector<void*> ptrs;
  for (auto& d : data) {
    ptrs.push_back(d.data());
  }
  return ptrs;
}

/// Runs `f` compiled and interpreted on the same inputs; compares every buffer (floats within
/// `rel`, which covers FMA contraction; everything else exactly).
void check_against_eval(const ir::LoweredFunc& f, uint64_t seed, double rel = 0.0) {
  std::vector<std::vector<uint8_t>> compiled = random_buffers(f, seed);
  std::vector<std::vector<uint8_t>> interpreted = compiled;
  Artifact k = build_cpu(f, host());
  ASSERT_EQ(call(k, pointers(compiled)), 0);
  ir::eval(f, pointers(interpreted));
  for (size_t p = 0; p < f.params.size(); ++p) {
    const ir::Buffer& b = f.params[p];
    for (int64_t i = 0; i < b.num_elements(); ++i) {
      if (b.dtype() == DataType::float32()) {
        float x = 0;
        float y = 0;
        std::memcpy(&x, compiled[p].data() + 4 * i, 4);
        std::memcpy(&y, interpreted[p].data() + 4 * i, 4);
        ASSERT_TRUE(close(x, y, rel, rel)) << f.name << ": " << b.name() << "[" << i << "] = " << x
                                           << " compiled, " << y << " interpreted";
      } else {
        int32_t x = 0;
        int32_t y = 0;
        std::memcpy(&x, compiled[p].data() + 4 * i, 4);
        std::memcpy(&y, interpreted[p].data() + 4 * i, 4);
        ASSERT_EQ(x, y) << f.name << ": " << b.name() << "[" << i << "]";
      }
    }
  }
}

TEST(CodegenAgreesWithEval, PredicatedVectorTail) {
  const int n = 37;
  ir::Buffer a = buffer("a", DataType::float32(), n);
  ir::Buffer b = buffer("b", DataType::float32(), n);
  ir::Buffer c = buffer("c", DataType::float32(), n);
  ir::Var io("io");
  Expr idx = ramp(io * 16, 1, 16);
  Expr active = idx < ir::Broadcast::make(Expr(n), 16);
  Expr sum = load(a, idx, active) - load(b, idx, active) * ir::Broadcast::make(Expr(0.5f), 16);
  ir::Stmt body = loop(io, 3, store(c, sum, idx, active));
  check_against_eval(make_func("tail", {a, b, c}, 2, body), 1);
}

TEST(CodegenAgreesWithEval, ParallelMatmulWithScratchAccumulator) {
  const int n = 9;
  ir::Buffer a = buffer("A", DataType::float32(), n * n);
  ir::Buffer b = buffer("B", DataType::float32(), n * n);
  ir::Buffer c = buffer("C", DataType::float32(), n * n);
  ir::Buffer acc = buffer("acc", DataType::float32(), 1, ir::MemoryScope::Local);
  ir::Var i("i");
  ir::Var j("j");
  ir::Var k("k");
  ir::Stmt update = store(acc, load(acc, 0) + load(a, i * n + k) * load(b, k * n + j), 0);
  ir::Stmt cell =
      ir::Allocate::make(acc, ir::Seq::make({store(acc, Expr(0.0f), 0), loop(k, n, update),
                                             store(c, load(acc, 0), i * n + j)}));
  ir::Stmt body = loop(i, n, loop(j, n, cell), ir::ForKind::Parallel);
  check_against_eval(make_func("mm", {a, b, c}, 2, body), 2, 1e-5);
}

TEST(CodegenAgreesWithEval, IntegerFloorDivisionAndModulo) {
  const int n = 64;
  ir::Buffer a = buffer("a", DataType::int32(), n);
  ir::Buffer b = buffer("b", DataType::int32(), n);
  ir::Buffer out = buffer("out", DataType::int32(), n);
  ir::Var i("i");
  ir::Var v("v");
  auto mix = [](Expr x, Expr y) {
    Expr d = ir::max(ir::abs(y), ir::make_const(y.type(), int64_t{1}));
    return x / d + (x % d) * 1000 + (x / 4) * 7 + (x % 3) * 13 + (x / -5) * 11 + x % 8;
  };
  Expr vidx = ramp(v * 16, 1, 16);
  ir::Stmt body =
      ir::Seq::make({loop(i, n / 2, store(out, mix(load(a, i), load(b, i)), i)),
                     ir::For::make(v, 2, 2, ir::ForKind::Serial,
                                   store(out, mix(load(a, vidx), load(b, vidx)), vidx))});
  check_against_eval(make_func("divmod", {a, b, out}, 2, body), 3);
}

TEST(CodegenAgreesWithEval, MathIntrinsicsScalarAndVector) {
  const int n = 32;
  ir::Buffer a = buffer("a", DataType::float32(), n);
  ir::Buffer out = buffer("out", DataType::float32(), n);
  auto math = [](Expr x) {
    Expr one = ir::make_const(x.type(), 1.0);
    Expr half = ir::make_const(x.type(), 0.5);
    return ir::tanh(x) + ir::exp(x * half) + ir::sqrt(ir::abs(x)) + ir::erf(x) + ir::floor(x) +
           ir::ceil(x) + ir::pow(ir::abs(x) + half, x) + ir::log(ir::abs(x) + one);
  };
  ir::Var i("i");
  ir::Var v("v");
  Expr vidx = ramp(v * 8, 1, 8);
  ir::Stmt body = ir::Seq::make(
      {loop(i, n / 2, store(out, math(load(a, i)), i)),
       ir::For::make(v, 2, 2, ir::ForKind::Serial, store(out, math(load(a, vidx)), vidx))});
  check_against_eval(make_func("math", {a, out}, 1, body), 4, 1e-6);
}

TEST(CodegenAgreesWithEval, SelectMinMaxCastsAndGathers) {
  const int n = 32;
  ir::Buffer a = buffer("a", DataType::float32(), n);
  ir::Buffer b = buffer("b", DataType::int32(), n);
  ir::Buffer f_out = buffer("f_out", DataType::float32(), n);
  ir::Buffer i_out = buffer("i_out", DataType::int32(), n);
  ir::Var i("i");
  ir::Var t("t", DataType::float32());
  Expr fa = load(a, i);
  Expr ib = load(b, i);
  Expr fb = ir::cast(DataType::float32(), ib) * 0.05f;
  Expr mirrored = load(a, Expr(n - 1) - i);
  ir::Stmt scalar =
      ir::LetStmt::make(t, ir::select(fa > fb, ir::max(fa, mirrored), ir::min(fb, fa)),
                        ir::Seq::make({store(f_out, t * 3.0f, i),
                                       store(i_out,
                                             ir::cast(DataType::int32(), t * 10.0f) +
                                                 ir::select(ib >= 0 && ib != 7, ib % 5, -ib),
                                             i)}));
  ir::Var v("v");
  Expr gather = ir::Ramp::make(v * 2, Expr(3), 8);  // indices 0, 3, 6, ... < 32
  ir::Stmt vector =
      loop(v, 2, store(f_out, load(a, gather) + load(f_out, ramp(v * 8, 1, 8)), ramp(v * 8, 1, 8)));
  ir::Stmt body = ir::Seq::make({loop(i, n, scalar), vector});
  check_against_eval(make_func("mixed", {a, b, f_out, i_out}, 2, body), 5);
}

}  // namespace
}  // namespace tensortune::codegen

// SPDX-License-Identifier: Apache-2.0
// CUDA C text of expressions: floor division, exact constants, intrinsics, min/max, selects,
// casts, predicates, and vector stores scalarised over their lanes.
#include "codegen_test_util.h"
#include "common/text.h"
#include "tensortune/codegen/cuda_codegen.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>

namespace tensortune::codegen {
namespace {
using ir::Expr;
using ir::ForKind;
using ir::Stmt;
using ir::Var;
using test::contains;
using testing::buffer;
using testing::kF32;
using testing::load;
using testing::loop;
using testing::make_func;
using testing::ramp;
using testing::store;

/// The source of `for (i, 0, 8) C[i] = value(i)` (C of value's type, A a float input).
std::string source_of(const std::function<Expr(const Var& i, const ir::Buffer& a)>& value) {
  Var i("i");
  ir::Buffer a = buffer("A", kF32, 64);
  Expr v = value(i, a);
  ir::Buffer c = buffer("C", v.type(), 64);
  ir::LoweredFunc f = make_func("f", {a, c}, 1, loop(i, 8, store(c, v, i)));
  return generate_cuda(f, target::Target::parse("cuda -arch=sm_80")).source;
}

TEST(CudaCodegenExpr, DivAndModArePlainOnlyForNonNegativeOperands) {
  std::string s = source_of([](const Var& i, const ir::Buffer&) {
    return i / 2 + i % 3 + (i - 4) / 2 + (i - 4) % 3 + i / (i - 9);
  });
  EXPECT_TRUE(contains(s, "(i / 2)")) << s;
  EXPECT_TRUE(contains(s, "(i % 3)")) << s;
  EXPECT_TRUE(contains(s, "tt_floordiv<int>((i - 4), 2)")) << s;
  EXPECT_TRUE(contains(s, "tt_floormod<int>((i - 4), 3)")) << s;
  EXPECT_TRUE(contains(s, "tt_floordiv<int>(i, (i - 9))")) << s;
  EXPECT_TRUE(contains(s, "__device__ __forceinline__ T tt_floordiv(T a, T b)")) << s;
  EXPECT_FALSE(contains(s, "tt_min")) << "only the helpers used are emitted\n" << s;
}

TEST(CudaCodegenExpr, FloatModIsAFloorModulo) {
  std::string s =
      source_of([](const Var&, const ir::Buffer& a) { return load(a, 0) % Expr(2.0f); });
  EXPECT_TRUE(contains(s, "tt_floormod_fp(A[0], 2.0f)")) << s;
  EXPECT_TRUE(contains(s, "fmodf(a, b)")) << s;
}

TEST(CudaCodegenExpr, FloatConstantsArePrintedExactly) {
  const float inf = std::numeric_limits<float>::infinity();
  std::string s = source_of([&](const Var&, const ir::Buffer& a) {
    return load(a, 0) * Expr(0.1f) + Expr(-2.5f) + ir::max(load(a, 1), Expr(-inf)) +
           ir::min(load(a, 2), Expr(inf)) + Expr(std::numeric_limits<float>::quiet_NaN());
  });
  EXPECT_TRUE(contains(s, "0.100000001f")) << s;
  EXPECT_TRUE(contains(s, "(-2.5f)")) << s;
  EXPECT_TRUE(contains(s, "tt_max<float>(A[1], __int_as_float(0xff800000))")) << s;
  EXPECT_TRUE(contains(s, "tt_min<float>(A[2], __int_as_float(0x7f800000))")) << s;
  EXPECT_TRUE(contains(s, "__int_as_float(0x7fc00000)")) << s;
  EXPECT_TRUE(contains(s, "(a < b || a != a) ? a : b")) << "min propagates NaN\n" << s;
}

TEST(CudaCodegenExpr, DoubleAndInt64ConstantsKeepTheirType) {
  std::string d = source_of(
      [](const Var&, const ir::Buffer&) { return ir::make_const(ir::DataType::float64(), 0.1); });
  EXPECT_TRUE(contains(d, "double* __restrict__ C")) << d;
  EXPECT_TRUE(contains(d, "C[i] = 0.10000000000000001;")) << d;
  std::string l = source_of([](const Var& i, const ir::Buffer&) {
    return ir::cast(ir::DataType::int64(), i) * ir::make_const(ir::DataType::int64(), int64_t{-3});
  });
  EXPECT_TRUE(contains(l, "long long* __restrict__ C")) << l;
  EXPECT_TRUE(contains(l, "(((long long)i) * (-3LL))")) << l;
}

TEST(CudaCodegenExpr, IntrinsicsUseTheFloatVersions) {
  std::string s = source_of([](const Var&, const ir::Buffer& a) {
    Expr x = load(a, 0);
    return ir::exp(x) + ir::log(x) + ir::sqrt(x) + ir::tanh(x) + ir::erf(x) + ir::abs(x) +
           ir::pow(x, Expr(2.0f)) + ir::floor(x) + ir::ceil(x);
  });
  for (const char* call : {"expf(A[0])", "logf(A[0])", "sqrtf(A[0])", "tanhf(A[0])", "erff(A[0])",
                           "fabsf(A[0])", "powf(A[0], 2.0f)", "floorf(A[0])", "ceilf(A[0])"}) {
    EXPECT_TRUE(contains(s, call)) << call << "\n" << s;
  }
  std::string d = source_of([](const Var&, const ir::Buffer& a) {
    return ir::exp(ir::cast(ir::DataType::float64(), load(a, 0)));
  });
  EXPECT_TRUE(contains(d, "exp(((double)A[0]))")) << d;
  std::string n = source_of([](const Var& i, const ir::Buffer&) { return ir::abs(i - 4); });
  EXPECT_TRUE(contains(n, "tt_abs<int>((i - 4))")) << n;
}

TEST(CudaCodegenExpr, SelectCastAndLogicAreCExpressions) {
  std::string s = source_of([](const Var& i, const ir::Buffer& a) {
    return ir::select(i < 4 && !(i == 2), load(a, i), Expr(0.0f)) +
           ir::cast(kF32, ir::cast(ir::DataType::int32(), load(a, 1))) +
           ir::cast(kF32, ir::cast(ir::DataType::boolean(), load(a, 2)));
  });
  EXPECT_TRUE(contains(s, "(((i < 4) && (!(i == 2))) ? A[i] : 0.0f)")) << s;
  EXPECT_TRUE(contains(s, "((float)((int)A[1]))")) << s;
  EXPECT_TRUE(contains(s, "((float)(A[2] != 0))")) << s;
}

TEST(CudaCodegenExpr, PredicatedLoadAndStore) {
  Var i("i");
  ir::Buffer a = buffer("A", kF32, 8);
  ir::Buffer c = buffer("C", kF32, 8);
  Expr in_bounds = i < 5;
  ir::LoweredFunc f =
      make_func("f", {a, c}, 1, loop(i, 8, store(c, load(a, i, in_bounds), i, i > 0)));
  std::string s = generate_cuda(f, target::Target::parse("cuda -arch=sm_80")).source;
  EXPECT_TRUE(contains(s, "if ((i > 0)) {\n      C[i] = ((i < 5) ? A[i] : ((float)0));")) << s;
}

// Rows of 3 floats: no vector access can be proven aligned (cuda/vector_test.cpp has
// the aligned ones).
TEST(CudaCodegenExpr, VectorStoreIsAnUnrolledLaneLoop) {
  Var i("i");
  ir::Buffer a = buffer("A", kF32, 32);
  ir::Buffer c = buffer("C", kF32, 32);
  Expr lanes = ramp(i * 3, 1, 4);
  Stmt body = store(c, ir::Load::make(a, {lanes}) + ir::Broadcast::make(Expr(1.0f), 4), lanes);
  ir::LoweredFunc f = make_func("f", {a, c}, 1, loop(i, 8, body, ForKind::ThreadX));
  std::string s = generate_cuda(f, target::Target::parse("cuda -arch=sm_80")).source;
  EXPECT_TRUE(contains(s,
                       "#pragma unroll\n  for (int tt_lane = 0; tt_lane < 4; ++tt_lane) {\n"
                       "    C[((i * 3) + tt_lane)] = (A[((i * 3) + tt_lane)] + 1.0f);"))
      << s;
}

TEST(CudaCodegenExpr, VectorStoreReadingItsBufferReadsAllLanesFirst) {
  Var i("i");
  ir::Buffer c = buffer("C", kF32, 32);
  Expr lanes = ramp(i * 3, 1, 4);
  Expr reversed = ir::Ramp::make(i * 4 + 3, Expr(-1), 4);
  Stmt body = store(c, ir::Load::make(c, {reversed}), lanes);
  ir::LoweredFunc f = make_func("f", {c}, 0, loop(i, 8, body));
  std::string s = generate_cuda(f, target::Target::parse("cuda -arch=sm_80")).source;
  EXPECT_TRUE(contains(s, "float tt_vec[4];")) << s;
  EXPECT_TRUE(contains(s, "tt_vec[tt_lane] = C[(((i * 4) + 3) + ((-1) * tt_lane))];")) << s;
  EXPECT_TRUE(contains(s, "C[((i * 3) + tt_lane)] = tt_vec[tt_lane];")) << s;
}

}  // namespace
}  // namespace tensortune::codegen

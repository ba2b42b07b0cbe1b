// SPDX-License-Identifier: Apache-2.0
// Codegen of expressions, checked against C++: floor division and modulo, math intrinsics,
// select, min/max, comparisons and casts, in scalar and vector form.
#include "codegen_test_util.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>

namespace tensortune::codegen {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)
using ir::DataType;
using ir::Expr;

int32_t floor_div(int32_t a, int32_t b) {
  int32_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int32_t floor_mod(int32_t a, int32_t b) {
  return a - floor_div(a, b) * b;
}

/// out[i] = f(in[i]) over int32 buffers, with `lanes` lanes per iteration (n % lanes == 0).
std::vector<int32_t> run_int(const std::function<Expr(Expr)>& f,
                             const std::vector<int32_t>& in,
                             int lanes) {
  int n = static_cast<int>(in.size());
  ir::Buffer a = buffer("a", DataType::int32(), n);
  ir::Buffer out = buffer("out", DataType::int32(), n);
  ir::Var i("i");
  Expr idx = lanes == 1 ? Expr(i) : ramp(i * lanes, 1, lanes);
  ir::Stmt body = loop(i, n / lanes, store(out, f(load(a, idx)), idx));
  Artifact k = build_cpu(make_func("int_op", {a, out}, 1, body), host());
  std::vector<int32_t> result(in.size(), 12345);
  std::vector<int32_t> input = in;
  EXPECT_EQ(call(k, {input.data(), result.data()}), 0);
  return result;
}

std::vector<int32_t> signed_inputs() {
  std::vector<int32_t> v;
  for (int32_t x = -20; x < 20; ++x) {
    v.push_back(x);
  }
  v.push_back(-1000001);
  v.push_back(999999);
  v.push_back(std::numeric_limits<int32_t>::min() + 7);
  v.push_back(std::numeric_limits<int32_t>::max() - 3);
  v.resize(48, -7);
  return v;
}

TEST(CodegenExpr, FloorDivAndModByConstantsMatchPython) {
  std::vector<int32_t> in = signed_inputs();
  for (int32_t d : {1, 2, 3, 4, 7, 16, -1, -3, -4}) {
    for (int lanes : {1, 16}) {
      std::vector<int32_t> q = run_int([d](Expr x) { return x / Expr(d); }, in, lanes);
      std::vector<int32_t> r = run_int([d](Expr x) { return x % Expr(d); }, in, lanes);
      for (size_t k = 0; k < in.size(); ++k) {
        EXPECT_EQ(q[k], floor_div(in[k], d)) << in[k] << " / " << d << " lanes " << lanes;
        EXPECT_EQ(r[k], floor_mod(in[k], d)) << in[k] << " % " << d << " lanes " << lanes;
      }
    }
  }
}

TEST(CodegenExpr, FloorDivAndModByVariablesMatchPython) {
  const int n = 64;
  ir::Buffer a = buffer("a", DataType::int32(), n);
  ir::Buffer b = buffer("b", DataType::int32(), n);
  ir::Buffer q = buffer("q", DataType::int32(), n);
  ir::Buffer r = buffer("r", DataType::int32(), n);
  ir::Var i("i");
  ir::Var v("v");
  Expr s = i;
  Expr vidx = ramp(v * 8, 1, 8);
  ir::Stmt body = ir::Seq::make({
      loop(i, n / 2,
           ir::Seq::make(
               {store(q, load(a, s) / load(b, s), s), store(r, load(a, s) % load(b, s), s)})),
      ir::For::make(v, 4, 4, ir::ForKind::Serial,
                    ir::Seq::make({store(q, load(a, vidx) / load(b, vidx), vidx),
                                   store(r, load(a, vidx) % load(b, vidx), vidx)})),
  });
  Artifact k = build_cpu(make_func("divmod", {a, b, q, r}, 2, body), host());
  support::Rng rng(11);
  std::vector<int32_t> va(n);
  std::vector<int32_t> vb(n);
  for (int x = 0; x < n; ++x) {
    va[x] = static_cast<int32_t>(rng.uniform_int(-100, 100));
    int64_t d = rng.uniform_int(1, 9);
    vb[x] = static_cast<int32_t>(rng.uniform_int(0, 1) != 0 ? d : -d);
  }
  std::vector<int32_t> vq(n);
  std::vector<int32_t> vr(n);
  ASSERT_EQ(call(k, {va.data(), vb.data(), vq.data(), vr.data()}), 0);
  for (int x = 0; x < n; ++x) {
    EXPECT_EQ(vq[x], floor_div(va[x], vb[x])) << va[x] << " / " << vb[x];
    EXPECT_EQ(vr[x], floor_mod(va[x], vb[x])) << va[x] << " % " << vb[x];
  }
}

/// out[i] = f(in[i]) (and g(in[i], in2[i]) for binary ops) over float buffers of type `t`.
template <class T>
std::vector<T> run_float(const std::function<Expr(Expr, Expr)>& f,
                         const std::vector<T>& in,
                         const std::vector<T>& in2,
                         int lanes) {
  DataType t = sizeof(T) == 4 ? DataType::float32() : DataType::float64();
  int n = static_cast<int>(in.size());
  ir::Buffer a = buffer("a", t, n);
  ir::Buffer b = buffer("b", t, n);
  ir::Buffer out = buffer("out", t, n);
  ir::Var i("i");
  Expr idx = lanes == 1 ? Expr(i) : ramp(i * lanes, 1, lanes);
  ir::Stmt body = loop(i, n / lanes, store(out, f(load(a, idx), load(b, idx)), idx));
  Artifact k = build_cpu(make_func("float_op", {a, b, out}, 2, body), host());
  std::vector<T> x = in;
  std::vector<T> y = in2;
  std::vector<T> result(in.size());
  EXPECT_EQ(call(k, {x.data(), y.data(), result.data()}), 0);
  return result;
}

struct UnaryCase {
  const char* name;
  std::function<Expr(Expr)> ir;
  std::function<double(double)> ref;
  float lo;
  float hi;
};

std::vector<UnaryCase> unary_cases() {
  return {
      {"exp", [](Expr x) { return ir::exp(x); }, [](double x) { return std::exp(x); }, -8, 8},
      {"log", [](Expr x) { return ir::log(x); }, [](double x) { return std::log(x); }, 0.01f, 50},
      {"sqrt", [](Expr x) { return ir::sqrt(x); }, [](double x) { return std::sqrt(x); }, 0, 50},
      {"tanh", [](Expr x) { return ir::tanh(x); }, [](double x) { return std::tanh(x); }, -6, 6},
      {"erf", [](Expr x) { return ir::erf(x); }, [](double x) { return std::erf(x); }, -3, 3},
      {"abs", [](Expr x) { return ir::abs(x); }, [](double x) { return std::fabs(x); }, -5, 5},
      {"floor", [](Expr x) { return ir::floor(x); }, [](double x) { return std::floor(x); }, -9, 9},
      {"ceil", [](Expr x) { return ir::ceil(x); }, [](double x) { return std::ceil(x); }, -9, 9},
  };
}

TEST(CodegenExpr, Float32IntrinsicsMatchCmath) {
  const size_t n = 64;
  for (const UnaryCase& c : unary_cases()) {
    std::vector<float> in = random_floats(n, 21, c.lo, c.hi);
    in[0] = c.lo;
    for (int lanes : {1, 16}) {
      std::vector<float> out =
          run_float<float>([&c](Expr x, Expr) { return c.ir(x); }, in, in, lanes);
      for (size_t k = 0; k < n; ++k) {
        double want = static_cast<float>(c.ref(static_cast<double>(in[k])));
        EXPECT_TRUE(close(out[k], want, 2e-6, 1e-7)) << c.name << "(" << in[k] << ") = " << out[k]
                                                     << ", want " << want << ", lanes " << lanes;
      }
    }
  }
}

TEST(CodegenExpr, VectorExpTanhErfAreAccurateOverTheirWholeRange) {
  // float32 vectors get exp, tanh and erf as vector arithmetic (llvm/math.cpp), not libm: a
  // dense sweep of each range, the ends of exp's range, huge and tiny inputs, -0, inf and NaN.
  std::vector<float> in;
  for (int k = -40000; k < 40000; ++k) {
    in.push_back(static_cast<float>(k) * 0.0025f);  // [-100, 100)
  }
  for (float v :
       {88.72f, 88.5f, 88.38f, 88.0f, -87.3f, -87.4f, -88.0f, -103.0f, 1e-5f, -3e-4f, 4e-4f, -0.0f,
        1e30f, -1e30f, std::numeric_limits<float>::infinity(),
        -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    in.push_back(v);
  }
  while (in.size() % 16 != 0) {
    in.push_back(0.5f);
  }
  struct Case {
    const char* name;
    std::function<Expr(Expr)> ir;
    double (*ref)(double);
  };
  for (const Case& c : {Case{"exp", [](Expr x) { return ir::exp(x); },
                             [](double x) {
                               return std::exp(x);
                             }},
                        Case{"tanh", [](Expr x) { return ir::tanh(x); },
                             [](double x) {
                               return std::tanh(x);
                             }},
                        Case{"erf", [](Expr x) { return ir::erf(x); },
                             [](double x) {
                               return std::erf(x);
                             }}}) {
    std::vector<float> out = run_float<float>([&c](Expr x, Expr) { return c.ir(x); }, in, in, 16);
    for (size_t k = 0; k < in.size(); ++k) {
      const double want = static_cast<float>(c.ref(static_cast<double>(in[k])));
      if (std::isinf(want) || std::isnan(want)) {
        EXPECT_TRUE(out[k] == want || (std::isnan(want) && std::isnan(out[k])))
            << c.name << "(" << in[k] << ") = " << out[k] << ", want " << want;
        continue;
      }
      // exp relative (its values span every exponent; below 2^-126 it gives 0), tanh and erf
      // within 2e-7 absolute in [-1, 1].
      EXPECT_TRUE(close(out[k], want, 3e-6, c.name[1] == 'x' ? 1.2e-38 : 2e-7))
          << c.name << "(" << in[k] << ") = " << out[k] << ", want " << want;
    }
  }
}

TEST(CodegenExpr, Float64IntrinsicsMatchCmath) {
  const size_t n = 32;
  for (const UnaryCase& c : unary_cases()) {
    std::vector<float> seeds = random_floats(n, 22, c.lo, c.hi);
    std::vector<double> in(seeds.begin(), seeds.end());
    for (int lanes : {1, 8}) {
      std::vector<double> out =
          run_float<double>([&c](Expr x, Expr) { return c.ir(x); }, in, in, lanes);
      for (size_t k = 0; k < n; ++k) {
        EXPECT_TRUE(close(out[k], c.ref(in[k]), 1e-14, 1e-15))
            << c.name << "(" << in[k] << ") = " << out[k] << ", lanes " << lanes;
      }
    }
  }
}

TEST(CodegenExpr, PowMatchesCmath) {
  const size_t n = 48;
  std::vector<float> base = random_floats(n, 23, 0.1f, 4.0f);
  std::vector<float> expo = random_floats(n, 24, -3.0f, 3.0f);
  for (int lanes : {1, 16}) {
    std::vector<float> out =
        run_float<float>([](Expr x, Expr y) { return ir::pow(x, y); }, base, expo, lanes);
    for (size_t k = 0; k < n; ++k) {
      EXPECT_TRUE(close(out[k], std::pow(base[k], expo[k]), 2e-6))
          << "pow(" << base[k] << ", " << expo[k] << ") = " << out[k];
    }
  }
}

TEST(CodegenExpr, IntegerAbsAndMinMax) {
  std::vector<int32_t> in = signed_inputs();
  in[47] = -5;
  for (int lanes : {1, 16}) {
    std::vector<int32_t> a = run_int([](Expr x) { return ir::abs(x); }, in, lanes);
    std::vector<int32_t> lo = run_int([](Expr x) { return ir::min(x, Expr(3)); }, in, lanes);
    std::vector<int32_t> hi = run_int([](Expr x) { return ir::max(x, Expr(-2)); }, in, lanes);
    for (size_t k = 0; k < in.size(); ++k) {
      EXPECT_EQ(a[k], std::abs(in[k])) << in[k];
      EXPECT_EQ(lo[k], std::min(in[k], 3)) << in[k];
      EXPECT_EQ(hi[k], std::max(in[k], -2)) << in[k];
    }
  }
}

TEST(CodegenExpr, SelectAndComparisons) {
  const size_t n = 64;
  std::vector<float> a = random_floats(n, 31);
  std::vector<float> b = random_floats(n, 32);
  b[3] = a[3];  // equal operands for == and <=
  auto f = [](Expr x, Expr y) {
    Expr lt = ir::select(x < y, x * 2.0f, y);
    Expr eq = ir::select(x == y, Expr(100.0f), Expr(0.0f));
    Expr ge = ir::select(x >= y && !(x != y), Expr(1000.0f), Expr(0.0f));
    return lt + eq + ge;
  };
  for (int lanes : {1, 16}) {
    std::vector<float> out = run_float<float>(f, a, b, lanes);
    for (size_t k = 0; k < n; ++k) {
      float want = (a[k] < b[k] ? a[k] * 2.0f : b[k]) + (a[k] == b[k] ? 100.0f : 0.0f) +
                   (a[k] >= b[k] && a[k] == b[k] ? 1000.0f : 0.0f);
      EXPECT_EQ(out[k], want) << "k = " << k << " lanes " << lanes;
    }
  }
}

TEST(CodegenExpr, FloatMinMaxPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a = {nan, 1.0f, -3.0f, 2.0f, nan, 0.5f, 7.0f, -1.0f};
  std::vector<float> b = {1.0f, nan, 4.0f, -2.0f, nan, 0.5f, 7.5f, -1.5f};
  for (int lanes : {1, 8}) {
    std::vector<float> mx =
        run_float<float>([](Expr x, Expr y) { return ir::max(x, y); }, a, b, lanes);
    std::vector<float> mn =
        run_float<float>([](Expr x, Expr y) { return ir::min(x, y); }, a, b, lanes);
    for (size_t k = 0; k < a.size(); ++k) {
      bool has_nan = std::isnan(a[k]) || std::isnan(b[k]);
      float want_max = has_nan ? a[k] + b[k] : std::max(a[k], b[k]);
      float want_min = has_nan ? a[k] + b[k] : std::min(a[k], b[k]);
      EXPECT_TRUE(close(mx[k], want_max)) << "max(" << a[k] << ", " << b[k] << ") = " << mx[k];
      EXPECT_TRUE(close(mn[k], want_min)) << "min(" << a[k] << ", " << b[k] << ") = " << mn[k];
    }
  }
}

TEST(CodegenExpr, FloatModIsFloorModulo) {
  std::vector<float> a = {5.5f, -5.5f, 5.5f, -5.5f, 6.0f, -6.0f, 0.25f, -7.75f};
  std::vector<float> b = {2.0f, 2.0f, -2.0f, -2.0f, 3.0f, 3.0f, 1.5f, 0.5f};
  for (int lanes : {1, 8}) {
    std::vector<float> out = run_float<float>([](Expr x, Expr y) { return x % y; }, a, b, lanes);
    for (size_t k = 0; k < a.size(); ++k) {
      float want = a[k] - b[k] * std::floor(a[k] / b[k]);
      EXPECT_EQ(out[k], want) << a[k] << " % " << b[k] << " lanes " << lanes;
    }
  }
}

TEST(CodegenExpr, CastsConvertLikeCpp) {
  const int n = 8;
  ir::Buffer f = buffer("f", DataType::float32(), n);
  ir::Buffer i = buffer("i", DataType::int32(), n);
  ir::Buffer to_int = buffer("to_int", DataType::int32(), n);
  ir::Buffer to_float = buffer("to_float", DataType::float32(), n);
  ir::Buffer round_trip = buffer("round_trip", DataType::float32(), n);
  ir::Buffer wide = buffer("wide", DataType::int64(), n);
  ir::Buffer truthy = buffer("truthy", DataType::int32(), n);
  ir::Var x("x");
  Expr fv = load(f, x);
  Expr iv = load(i, x);
  Expr as_bool = ir::cast(DataType::boolean(), fv);
  ir::Stmt body =
      loop(x, n,
           ir::Seq::make({
               store(to_int, ir::cast(DataType::int32(), fv), x),
               store(to_float, ir::cast(DataType::float32(), iv), x),
               store(round_trip,
                     ir::cast(DataType::float32(), ir::cast(DataType::float64(), fv) *
                                                       ir::make_const(DataType::float64(), 3.0)),
                     x),
               store(wide,
                     ir::cast(DataType::int64(), iv) *
                         ir::make_const(DataType::int64(), int64_t{1000000}),
                     x),
               store(truthy,
                     ir::cast(DataType::int32(), as_bool) +
                         ir::cast(DataType::int32(), ir::cast(DataType::boolean(), iv)) * 10,
                     x),
           }));
  Artifact k = build_cpu(
      make_func("casts", {f, i, to_int, to_float, round_trip, wide, truthy}, 2, body), host());
  std::vector<float> vf = {-2.7f, 2.7f, -0.5f, 0.0f, 1e6f, -1e6f, 0.25f, 3.0f};
  std::vector<int32_t> vi = {-7, 7, 0, 1, -2000000, 123456, 0, -1};
  std::vector<int32_t> o_int(n);
  std::vector<float> o_float(n);
  std::vector<float> o_rt(n);
  std::vector<int64_t> o_wide(n);
  std::vector<int32_t> o_truthy(n);
  ASSERT_EQ(call(k, {vf.data(), vi.data(), o_int.data(), o_float.data(), o_rt.data(), o_wide.data(),
                     o_truthy.data()}),
            0);
  for (int k2 = 0; k2 < n; ++k2) {
    EXPECT_EQ(o_int[k2], static_cast<int32_t>(vf[k2])) << vf[k2];
    EXPECT_EQ(o_float[k2], static_cast<float>(vi[k2])) << vi[k2];
    EXPECT_EQ(o_rt[k2], static_cast<float>(static_cast<double>(vf[k2]) * 3.0)) << vf[k2];
    EXPECT_EQ(o_wide[k2], static_cast<int64_t>(vi[k2]) * 1000000) << vi[k2];
    EXPECT_EQ(o_truthy[k2], (vf[k2] != 0.0f ? 1 : 0) + (vi[k2] != 0 ? 10 : 0)) << k2;
  }
}

TEST(CodegenExpr, LetBindsAValue) {
  ir::Buffer out = buffer("out", DataType::int32(), 10);
  ir::Var i("i");
  ir::Var t("t");
  ir::Stmt body = loop(i, 10, ir::LetStmt::make(t, i * i - 3, store(out, t * 2 + i, i)));
  Artifact k = build_cpu(make_func("let", {out}, 0, body), host());
  std::vector<int32_t> v(10);
  ASSERT_EQ(call(k, {v.data()}), 0);
  for (int x = 0; x < 10; ++x) {
    EXPECT_EQ(v[x], (x * x - 3) * 2 + x);
  }
}

TEST(CodegenExpr, ScalarSelectOverLoadsReadsOnlyTheChosenSide) {
  // out[i] = i < 4 ? in[i] : in[i - 100]: the false side would read far outside `in`.
  ir::Buffer in = buffer("in", DataType::float32(), 4);
  ir::Buffer out = buffer("out", DataType::float32(), 4);
  ir::Var i("i");
  Expr guarded = ir::select(i < 4, load(in, i), load(in, i - 100000000));
  Artifact k =
      build_cpu(make_func("guard", {in, out}, 1, loop(i, 4, store(out, guarded, i))), host());
  std::vector<float> vin = {1, 2, 3, 4};
  std::vector<float> vout(4);
  ASSERT_EQ(call(k, {vin.data(), vout.data()}), 0);
  EXPECT_EQ(vout, vin);
}

TEST(CodegenExpr, VectorSelectOverLoadsReadsOnlyTheChosenLanes) {
  // Lanes 0-4 take in[lane], lanes 5-7 take in[lane - 5] + in[0]; each arm's index is 10^8 past
  // the end of `in` in the lanes that do not choose it, so reading those lanes would fault.
  ir::Buffer in = buffer("in", DataType::float32(), 5);
  ir::Buffer out = buffer("out", DataType::float32(), 8);
  Expr lanes = ramp(Expr(0), 1, 8);
  Expr low = lanes < ir::Broadcast::make(Expr(5), 8);
  Expr far = ir::Broadcast::make(Expr(100000000), 8);
  Expr zero = ir::Broadcast::make(Expr(0), 8);
  Expr true_index = lanes + ir::select(low, zero, far);
  Expr false_index = lanes - ir::Broadcast::make(Expr(5), 8) + ir::select(low, far, zero);
  Expr first = ir::Broadcast::make(load(in, Expr(0)), 8);
  Expr value = ir::select(low, load(in, true_index), load(in, false_index) + first);
  Artifact k = build_cpu(make_func("vguard", {in, out}, 1, store(out, value, lanes)), host());
  std::vector<float> vin = {1, 2, 3, 4, 5};
  std::vector<float> vout(8, -1.0f);
  ASSERT_EQ(call(k, {vin.data(), vout.data()}), 0);
  EXPECT_EQ(vout, (std::vector<float>{1, 2, 3, 4, 5, 2, 3, 4}));
}

}  // namespace
}  // namespace tensortune::codegen

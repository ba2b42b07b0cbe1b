// SPDX-License-Identifier: Apache-2.0
// The naive reference interpreter (tests/common) checked against hand-written loops; this also
// pins down the semantics of the operators it evaluates.
#include "common/reference.h"

#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tensortune::te {
namespace {

using tensortune::testing::HostBuffers;

float* f32(HostBuffers& b, size_t i) {
  return static_cast<float*>(b.data(i));
}

/// Runs the reference on random inputs and returns the buffers.
HostBuffers run(const Workload& w, uint64_t seed) {
  HostBuffers b(w);
  b.fill_inputs(seed);
  tensortune::testing::reference_run(w, b.args());
  return b;
}

::testing::AssertionResult matches(const Workload& w,
                                   const HostBuffers& got,
                                   const std::vector<float>& want) {
  size_t out = got.num_inputs();
  if (got.num_elements(out) != want.size()) {
    return ::testing::AssertionFailure()
           << "size " << got.num_elements(out) << " vs " << want.size();
  }
  return tensortune::testing::close(got.data(out), want.data(), ir::DataType::float32(),
                                    want.size(),
                                    tensortune::testing::tolerance_for(w, ir::DataType::float32()));
}

TEST(Reference, MatmulMatchesTripleLoop) {
  for (bool tb : {false, true}) {
    const int m = 7, n = 5, k = 9;
    Workload w = make_workload("matmul:M=7,N=5,K=9,transpose_b=" + std::to_string(tb ? 1 : 0));
    HostBuffers b = run(w, 11);
    const float* a = f32(b, 0);
    const float* bb = f32(b, 1);
    std::vector<float> want(m * n);
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        float acc = 0;
        for (int r = 0; r < k; ++r) {
          acc += a[i * k + r] * (tb ? bb[j * k + r] : bb[r * n + j]);
        }
        want[i * n + j] = acc;
      }
    }
    EXPECT_TRUE(matches(w, b, want)) << "transpose_b=" << tb;
  }
}

TEST(Reference, Int32BatchMatmulIsExact) {
  Workload w = make_workload("batch_matmul:B=2,M=3,N=4,K=5,dtype=int32");
  HostBuffers b = run(w, 5);
  const auto* a = static_cast<const int32_t*>(b.data(0));
  const auto* bb = static_cast<const int32_t*>(b.data(1));
  const auto* c = static_cast<const int32_t*>(b.data(2));
  for (int p = 0; p < 2; ++p) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 4; ++j) {
        int32_t acc = 0;
        for (int r = 0; r < 5; ++r) {
          acc += a[(p * 3 + i) * 5 + r] * bb[(p * 5 + r) * 4 + j];
        }
        EXPECT_EQ(c[(p * 3 + i) * 4 + j], acc);
      }
    }
  }
}

struct ConvCase {
  int n, c, h, w, k, r, s, stride, pad, dilation, groups;
};

/// Direct convolution; `nhwc` selects NHWC data with HWIO weights, else NCHW with OIHW.
std::vector<float> direct_conv(const ConvCase& p, bool nhwc, const float* x, const float* wt) {
  int oh = (p.h + 2 * p.pad - p.dilation * (p.r - 1) - 1) / p.stride + 1;
  int ow = (p.w + 2 * p.pad - p.dilation * (p.s - 1) - 1) / p.stride + 1;
  int cg = p.c / p.groups, kg = p.k / p.groups;
  std::vector<float> out(static_cast<size_t>(p.n * p.k * oh * ow));
  for (int n = 0; n < p.n; ++n) {
    for (int f = 0; f < p.k; ++f) {
      for (int y = 0; y < oh; ++y) {
        for (int xo = 0; xo < ow; ++xo) {
          float acc = 0;
          for (int rc = 0; rc < cg; ++rc) {
            for (int ry = 0; ry < p.r; ++ry) {
              for (int rx = 0; rx < p.s; ++rx) {
                int ih = y * p.stride + ry * p.dilation - p.pad;
                int iw = xo * p.stride + rx * p.dilation - p.pad;
                int ch = (f / kg) * cg + rc;
                if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) {
                  continue;
                }
                float xv = nhwc ? x[((n * p.h + ih) * p.w + iw) * p.c + ch]
                                : x[((n * p.c + ch) * p.h + ih) * p.w + iw];
                float wv = nhwc ? wt[((ry * p.s + rx) * cg + rc) * p.k + f]
                                : wt[((f * cg + rc) * p.r + ry) * p.s + rx];
                acc += xv * wv;
              }
            }
          }
          size_t at = nhwc ? static_cast<size_t>(((n * oh + y) * ow + xo) * p.k + f)
                           : static_cast<size_t>(((n * p.k + f) * oh + y) * ow + xo);
          out[at] = acc;
        }
      }
    }
  }
  return out;
}

std::string conv_spec(const ConvCase& p, const char* layout) {
  return "conv2d:N=" + std::to_string(p.n) + ",C=" + std::to_string(p.c) +
         ",H=" + std::to_string(p.h) + ",W=" + std::to_string(p.w) + ",K=" + std::to_string(p.k) +
         ",R=" + std::to_string(p.r) + ",S=" + std::to_string(p.s) +
         ",stride=" + std::to_string(p.stride) + ",pad=" + std::to_string(p.pad) +
         ",dilation=" + std::to_string(p.dilation) + ",groups=" + std::to_string(p.groups) +
         ",layout=" + layout;
}

TEST(Reference, Conv2dMatchesDirectLoop) {
  for (const ConvCase& p :
       {ConvCase{2, 4, 7, 6, 6, 3, 3, 1, 1, 1, 1}, ConvCase{1, 4, 9, 8, 6, 3, 2, 2, 1, 1, 2},
        ConvCase{1, 3, 9, 9, 2, 3, 3, 1, 2, 2, 1}}) {
    for (bool nhwc : {false, true}) {
      Workload w = make_workload(conv_spec(p, nhwc ? "NHWC" : "NCHW"));
      HostBuffers b = run(w, 3);
      EXPECT_TRUE(matches(w, b, direct_conv(p, nhwc, f32(b, 0), f32(b, 1)))) << w.name();
    }
  }
}

TEST(Reference, DepthwiseConvIsGroupsEqualChannels) {
  Workload w = make_workload("depthwise_conv2d:N=1,C=3,H=6,W=5,R=3,S=3,stride=2,pad=1");
  HostBuffers b = run(w, 9);
  ConvCase p{1, 3, 6, 5, 3, 3, 3, 2, 1, 1, 3};
  EXPECT_TRUE(matches(w, b, direct_conv(p, false, f32(b, 0), f32(b, 1))));
}

/// Direct pooling over NCHW; avg divides by the number of in-bounds window elements.
std::vector<float> direct_pool(
    bool is_max, int c, int h, int w, int k, int stride, int pad, int dil, const float* x) {
  int oh = (h + 2 * pad - dil * (k - 1) - 1) / stride + 1;
  int ow = (w + 2 * pad - dil * (k - 1) - 1) / stride + 1;
  std::vector<float> out;
  for (int ch = 0; ch < c; ++ch) {
    for (int y = 0; y < oh; ++y) {
      for (int xo = 0; xo < ow; ++xo) {
        float acc = is_max ? -INFINITY : 0.0f;
        int count = 0;
        for (int ry = 0; ry < k; ++ry) {
          for (int rx = 0; rx < k; ++rx) {
            int ih = y * stride + ry * dil - pad, iw = xo * stride + rx * dil - pad;
            float v = is_max ? -INFINITY : 0.0f;
            if (ih >= 0 && ih < h && iw >= 0 && iw < w) {
              v = x[(ch * h + ih) * w + iw];
              ++count;
            }
            acc = is_max ? std::max(acc, v) : acc + v;
          }
        }
        out.push_back(is_max ? acc : acc / static_cast<float>(count));
      }
    }
  }
  return out;
}

TEST(Reference, PoolingMatchesDirectLoopAndAvgCountsOnlyRealElements) {
  struct Case {
    const char* kind;
    int k, stride, pad, dil;
  };
  for (const Case& c : {Case{"max", 3, 2, 1, 1}, Case{"avg", 3, 1, 1, 1}, Case{"avg", 3, 2, 2, 2},
                        Case{"avg", 2, 2, 0, 1}, Case{"max", 3, 1, 2, 2}}) {
    std::string spec = std::string("pool2d:kind=") + c.kind +
                       ",N=1,C=2,H=7,W=7,R=" + std::to_string(c.k) + ",S=" + std::to_string(c.k) +
                       ",stride=" + std::to_string(c.stride) + ",pad=" + std::to_string(c.pad) +
                       ",dilation=" + std::to_string(c.dil);
    Workload w = make_workload(spec);
    HostBuffers b = run(w, 21);
    bool is_max = std::string(c.kind) == "max";
    EXPECT_TRUE(matches(w, b, direct_pool(is_max, 2, 7, 7, c.k, c.stride, c.pad, c.dil, f32(b, 0))))
        << spec;
  }
}

TEST(Reference, SoftmaxRowsArePositiveAndSumToOne) {
  Workload w = make_workload("softmax:M=4,N=33");
  HostBuffers b = run(w, 7);
  const float* x = f32(b, 0);
  const float* y = f32(b, 1);
  for (int i = 0; i < 4; ++i) {
    double total = 0;
    int argmax_x = 0, argmax_y = 0;
    for (int j = 0; j < 33; ++j) {
      EXPECT_GT(y[i * 33 + j], 0.0f);
      total += y[i * 33 + j];
      argmax_x = x[i * 33 + j] > x[i * 33 + argmax_x] ? j : argmax_x;
      argmax_y = y[i * 33 + j] > y[i * 33 + argmax_y] ? j : argmax_y;
    }
    EXPECT_NEAR(total, 1.0, 1e-5);
    EXPECT_EQ(argmax_x, argmax_y);
  }
}

TEST(Reference, LayerNormMatchesFormula) {
  Workload w = make_workload("layer_norm:M=3,N=16");
  HostBuffers b(w);
  b.fill_inputs(4);
  tensortune::testing::reference_run(w, b.args());
  const float* x = f32(b, 0);
  const float* g = f32(b, 1);
  const float* be = f32(b, 2);
  std::vector<float> want;
  for (int i = 0; i < 3; ++i) {
    double mean = 0, var = 0;
    for (int j = 0; j < 16; ++j) {
      mean += x[i * 16 + j] / 16.0;
    }
    for (int j = 0; j < 16; ++j) {
      var += (x[i * 16 + j] - mean) * (x[i * 16 + j] - mean) / 16.0;
    }
    for (int j = 0; j < 16; ++j) {
      want.push_back(
          static_cast<float>((x[i * 16 + j] - mean) / std::sqrt(var + 1e-5) * g[j] + be[j]));
    }
  }
  EXPECT_TRUE(matches(w, b, want));
}

TEST(Reference, DenseBiasReluTransposePadAndBroadcastAdd) {
  Workload dense = make_workload("dense:M=3,N=4,K=5,bias=1,epilogue=relu");
  HostBuffers d = run(dense, 2);
  std::vector<float> want;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      float acc = 0;
      for (int r = 0; r < 5; ++r) {
        acc += f32(d, 0)[i * 5 + r] * f32(d, 1)[j * 5 + r];
      }
      want.push_back(std::max(acc + f32(d, 2)[j], 0.0f));
    }
  }
  EXPECT_TRUE(matches(dense, d, want));

  Workload tr = make_workload("transpose:M=3,N=4");
  HostBuffers t = run(tr, 2);
  want.clear();
  for (int j = 0; j < 4; ++j) {
    for (int i = 0; i < 3; ++i) {
      want.push_back(f32(t, 0)[i * 4 + j]);
    }
  }
  EXPECT_TRUE(matches(tr, t, want));

  Workload pd = make_workload("pad:N=1,C=1,H=2,W=3,pad=1");
  HostBuffers p = run(pd, 2);
  want.assign(4 * 5, 0.0f);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      want[static_cast<size_t>((i + 1) * 5 + j + 1)] = f32(p, 0)[i * 3 + j];
    }
  }
  EXPECT_TRUE(matches(pd, p, want));

  Workload add = make_workload("add:M=2,N=3,broadcast=1");
  HostBuffers a = run(add, 2);
  want.clear();
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      want.push_back(f32(a, 0)[i * 3 + j] + f32(a, 1)[j]);
    }
  }
  EXPECT_TRUE(matches(add, a, want));
}

TEST(Reference, GeluUsesExactErf) {
  Workload w = make_workload("gelu:M=2,N=8");
  HostBuffers b = run(w, 8);
  std::vector<float> want;
  for (size_t i = 0; i < 16; ++i) {
    double x = f32(b, 0)[i];
    want.push_back(static_cast<float>(0.5 * x * (1 + std::erf(x / std::sqrt(2.0)))));
  }
  EXPECT_TRUE(matches(w, b, want));
}

TEST(Reference, ThrowsOnOutOfBoundsRead) {
  Tensor a = placeholder({4}, ir::DataType::float32(), "A");
  Tensor c = compute(
      {4}, [&](const std::vector<ir::Var>& v) { return a(v[0] + 1); }, "C");
  Workload w("oob", {a}, {c});
  HostBuffers b(w);
  EXPECT_THROW(tensortune::testing::reference_run(w, b.args()), InternalError);
}

TEST(FillRandom, NeverZeroInRangeAndDeterministic) {
  std::vector<float> f(1000), g(1000);
  tensortune::testing::fill_random(f.data(), ir::DataType::float32(), f.size(), 42);
  tensortune::testing::fill_random(g.data(), ir::DataType::float32(), g.size(), 42);
  EXPECT_EQ(f, g);
  int negative = 0;
  for (float v : f) {
    EXPECT_GE(std::fabs(v), 0.1f);
    EXPECT_LE(std::fabs(v), 1.0f);
    negative += v < 0 ? 1 : 0;
  }
  EXPECT_GT(negative, 350);
  EXPECT_LT(negative, 650);
  std::vector<int32_t> ints(1000);
  tensortune::testing::fill_random(ints.data(), ir::DataType::int32(), ints.size(), 42);
  for (int32_t v : ints) {
    EXPECT_NE(v, 0);
    EXPECT_LE(std::abs(v), 9);
  }
}

TEST(AllClose, ReportsTheFirstMismatch) {
  std::vector<float> a = {1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> b = {1.0f, 2.00001f, 3.5f, 4.5f};
  std::string msg;
  tensortune::testing::Tolerance tol{1e-4, 1e-4};
  EXPECT_FALSE(
      tensortune::testing::all_close(a.data(), b.data(), ir::DataType::float32(), 4, tol, &msg));
  EXPECT_NE(msg.find("2 of 4 elements differ; first at flat index 2: got 3, expected 3.5"),
            std::string::npos)
      << msg;
  EXPECT_TRUE(tensortune::testing::all_close(a.data(), b.data(), ir::DataType::float32(), 2, tol));
  std::vector<int32_t> x = {1, 2}, y = {1, 3};
  EXPECT_FALSE(tensortune::testing::close(x.data(), y.data(), ir::DataType::int32(), 2, {}));
}

TEST(OutputsMatchReference, FlagsAWrongOutput) {
  Workload w = make_workload("relu:M=2,N=3");
  HostBuffers b = run(w, 1);
  EXPECT_TRUE(tensortune::testing::outputs_match_reference(w, b));
  f32(b, 1)[4] += 0.5f;
  ::testing::AssertionResult r = tensortune::testing::outputs_match_reference(w, b);
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("output 'relu'"), std::string::npos) << r.message();
}

}  // namespace
}  // namespace tensortune::te

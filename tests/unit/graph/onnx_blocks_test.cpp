// SPDX-License-Identifier: Apache-2.0
// Blocks of the model families users bring, built as ONNX graphs in C++ the way exporters write
// them: a MobileNet v3 squeeze-and-excitation block, a transformer attention head with Split
// and a Where mask, and RegNet's grouped convolution. Each is compiled whole, its new element-wise
// ops fused into their producers, and compared with a naive reference.
#include "tensortune/graph/onnx_import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#if defined(ONNX_NAMESPACE) && __has_include(<onnx/onnx_pb.h>)
#include "onnx_op_runner.h"
#include "tensortune/graph/partition.h"

namespace tensortune::graph {
namespace {

using test::add_float_attr;
using test::add_input;
using test::add_int_attr;
using test::add_node;
using test::add_output;
using test::wave;

/// y[o] = b[o] + sum_i w[o][i] x[i] at every pixel (a 1x1 convolution of one image).
std::vector<float> conv1x1(const std::vector<float>& x,
                           const std::vector<float>& w,
                           const std::vector<float>& b,
                           int64_t cin,
                           int64_t pixels) {
  int64_t cout = static_cast<int64_t>(b.size());
  std::vector<float> y(static_cast<size_t>(cout * pixels));
  for (int64_t o = 0; o < cout; ++o) {
    for (int64_t p = 0; p < pixels; ++p) {
      double s = b[o];
      for (int64_t i = 0; i < cin; ++i)
        s += w[o * cin + i] * x[i * pixels + p];
      y[o * pixels + p] = static_cast<float>(s);
    }
  }
  return y;
}

TEST(OnnxBlocks, MobileNetV3SqueezeExcitation) {
  const int64_t c = 8, r = 4, px = 16;
  onnx::ModelProto model = test::onnx_model("se", 14);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {1, c, 4, 4});
  std::vector<float> w1 = wave(c * c, 1.0, 0.4), b1 = wave(c, 2.0, 0.1);
  std::vector<float> w2 = wave(r * c, 3.0, 0.4), b2 = wave(r, 4.0, 0.1);
  std::vector<float> w3 = wave(c * r, 5.0, 0.4), b3 = wave(c, 6.0, 0.1);
  test::fill_float_tensor(g->add_initializer(), "w1", {c, c, 1, 1}, w1, true);
  test::fill_float_tensor(g->add_initializer(), "b1", {c}, b1, true);
  test::fill_float_tensor(g->add_initializer(), "w2", {r, c, 1, 1}, w2, true);
  test::fill_float_tensor(g->add_initializer(), "b2", {r}, b2, true);
  test::fill_float_tensor(g->add_initializer(), "w3", {c, r, 1, 1}, w3, true);
  test::fill_float_tensor(g->add_initializer(), "b3", {c}, b3, true);
  add_node(g, "Conv", {"x", "w1", "b1"}, {"c1"});
  add_node(g, "HardSwish", {"c1"}, {"h"});
  add_node(g, "GlobalAveragePool", {"h"}, {"p"});
  add_node(g, "Conv", {"p", "w2", "b2"}, {"s1"});
  add_node(g, "Relu", {"s1"}, {"sr"});
  add_node(g, "Conv", {"sr", "w3", "b3"}, {"s2"});
  onnx::NodeProto* hs = add_node(g, "HardSigmoid", {"s2"}, {"gate"});
  add_float_attr(hs, "alpha", 1.0f / 6.0f);  // PyTorch's hardsigmoid
  add_float_attr(hs, "beta", 0.5f);
  add_node(g, "Mul", {"h", "gate"}, {"m"});
  add_node(g, "Add", {"m", "x"}, {"y"});
  add_output(g, "y", {1, c, 4, 4});

  Graph graph = import_onnx_bytes(test::serialize(model), "se.onnx");
  optimize(graph);
  std::vector<std::string> labels;
  for (const Kernel& k : partition(graph).kernels)
    labels.push_back(k.label);
  // The activations join their convolutions; the gate's Mul and the residual Add join the last.
  EXPECT_EQ(labels, (std::vector<std::string>{"conv_hardswish", "gap", "conv_relu",
                                              "conv_hardsigmoid_mul_add"}));

  std::vector<float> x = wave(c * px);
  std::vector<float> h = conv1x1(x, w1, b1, c, px);
  for (float& v : h)
    v = v * std::clamp(v / 6 + 0.5f, 0.0f, 1.0f);
  std::vector<float> pooled(c, 0);
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t p = 0; p < px; ++p)
      pooled[ch] += h[ch * px + p] / px;
  }
  std::vector<float> s1 = conv1x1(pooled, w2, b2, c, 1);
  for (float& v : s1)
    v = std::max(v, 0.0f);
  std::vector<float> gate = conv1x1(s1, w3, b3, r, 1), want;
  for (int64_t i = 0; i < c * px; ++i) {
    float gv = std::clamp(gate[i / px] / 6 + 0.5f, 0.0f, 1.0f);
    want.push_back(h[i] * gv + x[i]);
  }
  test::expect_near_all(test::run_onnx(model, {x}).at(0), want, "se block");
}

TEST(OnnxBlocks, AttentionWithSplitHeadsAndACausalMask) {
  const int64_t seq = 4, dim = 8, heads = 2, hd = 4;
  onnx::ModelProto model = test::onnx_model("attention", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {1, seq, dim});
  std::vector<float> w = wave(dim * 3 * dim, 0.5, 0.5);
  test::fill_float_tensor(g->add_initializer(), "w", {dim, 3 * dim}, w, true);
  test::fill_int64_tensor(g->add_initializer(), "sizes", {3}, {dim, dim, dim});
  test::fill_int64_tensor(g->add_initializer(), "heads_shape", {4}, {1, seq, heads, hd});
  test::fill_int64_tensor(g->add_initializer(), "out_shape", {3}, {1, seq, dim});
  test::fill_float_tensor(g->add_initializer(), "scale", {}, {2.0f}, false);
  test::fill_float_tensor(g->add_initializer(), "masked", {}, {-1e4f}, false);
  onnx::TensorProto* mask = g->add_initializer();  // causal: key j visible from query i <= j
  mask->set_name("mask");
  mask->set_data_type(onnx::TensorProto::BOOL);
  mask->add_dims(seq);
  mask->add_dims(seq);
  for (int64_t i = 0; i < seq * seq; ++i)
    mask->add_int32_data(i % seq <= i / seq ? 1 : 0);
  add_node(g, "MatMul", {"x", "w"}, {"qkv"});
  add_int_attr(add_node(g, "Split", {"qkv", "sizes"}, {"q", "k", "v"}), "axis", 2);
  const std::vector<std::vector<int64_t>> perms = {{0, 2, 1, 3}, {0, 2, 3, 1}, {0, 2, 1, 3}};
  const char* names[] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    std::string n = names[i];
    add_node(g, "Reshape", {n, "heads_shape"}, {n + "4"});
    test::add_ints_attr(add_node(g, "Transpose", {n + "4"}, {n + "h"}), "perm", perms[i]);
  }
  add_node(g, "MatMul", {"qh", "kh"}, {"s"});
  add_node(g, "Div", {"s", "scale"}, {"ss"});
  add_node(g, "Where", {"mask", "ss", "masked"}, {"sm"});
  add_int_attr(add_node(g, "Softmax", {"sm"}, {"pr"}), "axis", -1);
  add_node(g, "MatMul", {"pr", "vh"}, {"o"});
  test::add_ints_attr(add_node(g, "Transpose", {"o"}, {"ot"}), "perm", {0, 2, 1, 3});
  add_node(g, "Reshape", {"ot", "out_shape"}, {"y"});
  add_output(g, "y", {1, seq, dim});

  std::vector<float> x = wave(seq * dim), want(static_cast<size_t>(seq * dim));
  std::vector<double> qkv(static_cast<size_t>(seq * 3 * dim), 0);
  for (int64_t t = 0; t < seq; ++t) {
    for (int64_t j = 0; j < 3 * dim; ++j) {
      for (int64_t i = 0; i < dim; ++i)
        qkv[t * 3 * dim + j] += x[t * dim + i] * w[i * 3 * dim + j];
    }
  }
  auto at = [&](int64_t part, int64_t t, int64_t head, int64_t e) {
    return qkv[t * 3 * dim + part * dim + head * hd + e];
  };
  for (int64_t head = 0; head < heads; ++head) {
    for (int64_t i = 0; i < seq; ++i) {
      std::vector<double> p(seq);
      double mx = -1e30, sum = 0;
      for (int64_t j = 0; j < seq; ++j) {
        double s = 0;
        for (int64_t e = 0; e < hd; ++e)
          s += at(0, i, head, e) * at(1, j, head, e);
        p[j] = j <= i ? s / 2 : -1e4;
        mx = std::max(mx, p[j]);
      }
      for (double& v : p)
        sum += (v = std::exp(v - mx));
      for (int64_t e = 0; e < hd; ++e) {
        double o = 0;
        for (int64_t j = 0; j < seq; ++j)
          o += p[j] / sum * at(2, j, head, e);
        want[i * dim + head * hd + e] = static_cast<float>(o);
      }
    }
  }
  test::expect_near_all(test::run_onnx(model, {x}).at(0), want, "attention");
}

TEST(OnnxBlocks, RegNetGroupedConvolutionWithStride) {
  // RegNet's 3x3 convolutions have groups of several channels (neither 1 nor depthwise).
  const int64_t c = 8, groups = 2, per = c / groups, h = 7;
  onnx::ModelProto model = test::onnx_model("grouped", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {1, c, h, h});
  std::vector<float> w = wave(c * per * 9, 1.0, 0.3);
  test::fill_float_tensor(g->add_initializer(), "w", {c, per, 3, 3}, w, true);
  onnx::NodeProto* conv = add_node(g, "Conv", {"x", "w"}, {"cv"});
  test::add_ints_attr(conv, "pads", {1, 1, 1, 1});
  test::add_ints_attr(conv, "strides", {2, 2});
  add_int_attr(conv, "group", groups);
  add_node(g, "Relu", {"cv"}, {"y"});
  add_output(g, "y", {1, c, 4, 4});
  std::vector<float> x = wave(c * h * h), want;
  for (int64_t o = 0; o < c; ++o) {
    for (int64_t oy = 0; oy < 4; ++oy) {
      for (int64_t ox = 0; ox < 4; ++ox) {
        double sum = 0;
        for (int64_t i = 0; i < per; ++i) {
          int64_t ch = (o / per) * per + i;
          for (int64_t dy = 0; dy < 3; ++dy) {
            for (int64_t dx = 0; dx < 3; ++dx) {
              int64_t y = oy * 2 + dy - 1, xx = ox * 2 + dx - 1;
              if (y >= 0 && y < h && xx >= 0 && xx < h)
                sum += x[(ch * h + y) * h + xx] * w[((o * per + i) * 3 + dy) * 3 + dx];
            }
          }
        }
        want.push_back(static_cast<float>(std::max(sum, 0.0)));
      }
    }
  }
  test::expect_near_all(test::run_onnx(model, {x}).at(0), want, "grouped conv");
}

}  // namespace
}  // namespace tensortune::graph

#endif  // ONNX headers

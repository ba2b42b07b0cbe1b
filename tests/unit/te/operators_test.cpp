// SPDX-License-Identifier: Apache-2.0
// The operator library: output shapes, stages and tags, flop counts, and shape errors.
// (Element values are checked against hand-written loops in reference_test.cpp.)
#include "tensortune/te/operators.h"

#include "common/errors.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"

#include <gtest/gtest.h>

namespace tensortune::te {
namespace {

using test::user_error;

using ir::DataType;
using Shape = std::vector<int64_t>;

Tensor f32(Shape shape, const std::string& name) {
  return placeholder(std::move(shape), DataType::float32(), name);
}

std::vector<std::string> stage_tags(const Workload& w) {
  std::vector<std::string> out;
  for (const OperationRef& op : w.ops()) {
    if (!op->is_placeholder()) {
      out.push_back(op->name + ":" + op->tag);
    }
  }
  return out;
}

TEST(Matmul, ShapesFlopsAndTransposedB) {
  Tensor a = f32({4, 6}, "A"), b = f32({6, 5}, "B"), bt = f32({5, 6}, "Bt");
  Tensor c = matmul(a, b);
  EXPECT_EQ(c.shape(), (Shape{4, 5}));
  EXPECT_EQ(c.op()->tag, "matmul");
  EXPECT_DOUBLE_EQ(Workload("mm", {a, b}, {c}).flop_count(), 2.0 * 4 * 5 * 6);
  Tensor ct = matmul(a, bt, true);
  EXPECT_EQ(ct.shape(), (Shape{4, 5}));
  EXPECT_DOUBLE_EQ(Workload("mm", {a, bt}, {ct}).flop_count(), 2.0 * 4 * 5 * 6);
}

TEST(Matmul, RejectsMismatchedReductionDims) {
  Tensor a = f32({4, 6}, "A"), b = f32({7, 5}, "B");
  std::string msg = user_error([&] { matmul(a, b); });
  EXPECT_NE(msg.find("matmul: reduction dims differ: A is [4, 6], B is [7, 5]"), std::string::npos)
      << msg;
  msg = user_error([&] { matmul(f32({4}, "V"), b); });
  EXPECT_NE(msg.find("matmul: A 'V' must have 2 dimensions, got [4]"), std::string::npos) << msg;
  msg = user_error([&] { matmul(a, placeholder({6, 5}, DataType::int32(), "I")); });
  EXPECT_NE(msg.find("element types differ"), std::string::npos) << msg;
}

TEST(BatchMatmul, ShapesAndFlops) {
  Tensor a = f32({2, 3, 4}, "A"), b = f32({2, 4, 5}, "B");
  Tensor c = batch_matmul(a, b);
  EXPECT_EQ(c.shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(c.op()->tag, "batch_matmul");
  EXPECT_EQ(c.op()->axes[0].var.name(), "b");
  EXPECT_DOUBLE_EQ(Workload("bmm", {a, b}, {c}).flop_count(), 2.0 * 2 * 3 * 5 * 4);
  EXPECT_EQ(batch_matmul(a, f32({2, 5, 4}, "Bt"), true).shape(), (Shape{2, 3, 5}));
  std::string msg = user_error([&] { batch_matmul(a, f32({3, 4, 5}, "X")); });
  EXPECT_NE(msg.find("batch_matmul: shapes do not match"), std::string::npos) << msg;
}

TEST(Dense, WithBiasAndEpiloguesAsSeparateStages) {
  Tensor x = f32({4, 6}, "data"), w = f32({5, 6}, "weight"), bias = f32({5}, "b");
  Tensor out = gelu(relu(bias_add(dense(x, w), bias, 1)));
  Workload wl("dense", {x, w, bias}, {out});
  EXPECT_EQ(out.shape(), (Shape{4, 5}));
  EXPECT_EQ(stage_tags(wl), (std::vector<std::string>{"dense:dense", "bias:broadcast",
                                                      "relu:elemwise", "gelu:elemwise"}));
  // dense 2/MAC; bias 1; relu 1; gelu 5 (two muls, erf, add, mul).
  EXPECT_DOUBLE_EQ(wl.flop_count(), 2.0 * 4 * 5 * 6 + 20 + 20 + 5 * 20);
  std::string msg = user_error([&] { dense(x, f32({5, 7}, "W")); });
  EXPECT_NE(msg.find("dense: reduction dims differ"), std::string::npos) << msg;
  msg = user_error([&] { bias_add(x, f32({5}, "b"), 1); });
  EXPECT_NE(msg.find("bias_add: bias [5] does not match dimension 1 of [4, 6]"), std::string::npos)
      << msg;
  EXPECT_EQ(bias_add(x, f32({4}, "b"), -2).shape(), (Shape{4, 6}));
  msg = user_error([&] { gelu(placeholder({3}, DataType::int32(), "I")); });
  EXPECT_NE(msg.find("gelu: needs a float tensor"), std::string::npos) << msg;
}

TEST(Elementwise, AddBroadcastsTrailingDimsOnly) {
  Tensor a = f32({2, 3}, "A");
  EXPECT_EQ(add(a, f32({2, 3}, "B")).op()->tag, "elemwise");
  Tensor bc = multiply(a, f32({3}, "B"));
  EXPECT_EQ(bc.op()->tag, "broadcast");
  EXPECT_EQ(bc.shape(), (Shape{2, 3}));
  std::string msg = user_error([&] { add(a, f32({2}, "B")); });
  EXPECT_NE(msg.find("add: shapes [2, 3] and [2]"), std::string::npos) << msg;
}

TEST(Transpose, PermutesShapeAndRejectsBadPermutations) {
  Tensor x = f32({2, 3, 4}, "X");
  Tensor t = transpose(x, {2, 0, 1});
  EXPECT_EQ(t.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(t.op()->tag, "injective");
  EXPECT_DOUBLE_EQ(Workload("t", {x}, {t}).flop_count(), 0.0);
  EXPECT_NE(user_error([&] { transpose(x, {0, 0, 1}); }), "");
  EXPECT_NE(user_error([&] { transpose(x, {0, 1}); }), "");
  EXPECT_NE(user_error([&] { transpose(x, {0, 1, 3}); }), "");
}

TEST(Pad, GrowsEachDimensionAndCostsNoFlops) {
  Tensor x = f32({2, 3}, "X");
  Tensor p = pad(x, {1, 0}, {2, 1});
  EXPECT_EQ(p.shape(), (Shape{5, 4}));
  EXPECT_EQ(p.op()->tag, "injective");
  EXPECT_DOUBLE_EQ(Workload("p", {x}, {p}).flop_count(), 0.0);
  EXPECT_NE(user_error([&] { pad(x, {1}, {1, 1}); }), "");
  EXPECT_NE(user_error([&] { pad(x, {-1, 0}, {0, 0}); }), "");
}

TEST(Conv2d, NchwWithStridePaddingAndGroups) {
  Tensor data = f32({1, 4, 7, 7}, "data"), weight = f32({6, 2, 3, 3}, "weight");
  Conv2dParams p;
  p.stride_h = p.stride_w = 2;
  p.pad_h = p.pad_w = 1;
  p.groups = 2;
  Tensor out = conv2d_nchw(data, weight, p);
  Workload w("conv", {data, weight}, {out});
  EXPECT_EQ(out.shape(), (Shape{1, 6, 4, 4}));
  EXPECT_EQ(stage_tags(w), (std::vector<std::string>{"conv_pad:injective", "conv:conv2d"}));
  EXPECT_EQ(w.find_op("conv_pad")->output.shape(), (Shape{1, 4, 9, 9}));
  EXPECT_DOUBLE_EQ(w.flop_count(), 2.0 * 6 * 4 * 4 * 2 * 3 * 3);
}

TEST(Conv2d, NhwcWithDilationAndNoPadStageWithoutPadding) {
  Tensor data = f32({2, 9, 9, 3}, "data"), weight = f32({3, 3, 3, 8}, "weight");
  Conv2dParams p;
  p.dilation_h = p.dilation_w = 2;
  Tensor out = conv2d_nhwc(data, weight, p);
  Workload w("conv", {data, weight}, {out});
  EXPECT_EQ(out.shape(), (Shape{2, 5, 5, 8}));
  EXPECT_EQ(stage_tags(w), (std::vector<std::string>{"conv:conv2d"}));
  EXPECT_DOUBLE_EQ(w.flop_count(), 2.0 * 2 * 5 * 5 * 8 * 3 * 3 * 3);
}

TEST(Conv2d, RejectsMismatchedShapesAndParams) {
  Tensor data = f32({1, 4, 7, 7}, "data");
  std::string msg = user_error([&] { conv2d_nchw(data, f32({6, 3, 3, 3}, "w"), {}); });
  EXPECT_NE(msg.find("conv2d_nchw: data [1, 4, 7, 7] and weight [6, 3, 3, 3] do not match"),
            std::string::npos)
      << msg;
  msg = user_error([&] { conv2d_nchw(data, f32({6, 4, 9, 3}, "w"), {}); });
  EXPECT_NE(msg.find("does not fit input H=7"), std::string::npos) << msg;
  Conv2dParams bad;
  bad.stride_h = 0;
  msg = user_error([&] { conv2d_nchw(data, f32({6, 4, 3, 3}, "w"), bad); });
  EXPECT_NE(msg.find("stride must be positive"), std::string::npos) << msg;
}

TEST(DepthwiseConv2d, ShapesAndFlops) {
  Tensor data = f32({1, 3, 8, 8}, "data"), weight = f32({3, 1, 3, 3}, "weight");
  Conv2dParams p;
  p.pad_h = p.pad_w = 1;
  Tensor out = depthwise_conv2d_nchw(data, weight, p);
  Workload w("dw", {data, weight}, {out});
  EXPECT_EQ(out.shape(), (Shape{1, 3, 8, 8}));
  EXPECT_EQ(out.op()->tag, "depthwise_conv2d");
  EXPECT_DOUBLE_EQ(w.flop_count(), 2.0 * 3 * 8 * 8 * 9);
  EXPECT_NE(user_error([&] { depthwise_conv2d_nchw(data, f32({4, 1, 3, 3}, "w"), p); }), "");
}

TEST(Pool2d, MaxAndAvgStages) {
  Tensor data = f32({1, 2, 6, 6}, "data");
  Conv2dParams s2;
  s2.stride_h = s2.stride_w = 2;
  Tensor mx = pool2d_nchw(data, PoolKind::Max, 2, 2, s2);
  Workload wm("max", {data}, {mx});
  EXPECT_EQ(mx.shape(), (Shape{1, 2, 3, 3}));
  EXPECT_EQ(stage_tags(wm), (std::vector<std::string>{"pool:pool"}));
  EXPECT_DOUBLE_EQ(wm.flop_count(), 2.0 * 9 * 4);
  Conv2dParams p1;
  p1.pad_h = p1.pad_w = 1;
  Tensor avg = pool2d_nchw(data, PoolKind::Avg, 3, 3, p1);
  Workload wa("avg", {data}, {avg});
  EXPECT_EQ(avg.shape(), (Shape{1, 2, 6, 6}));
  EXPECT_EQ(stage_tags(wa),
            (std::vector<std::string>{"pool_pad:injective", "pool_sum:pool", "pool:elemwise"}));
  EXPECT_DOUBLE_EQ(wa.flop_count(), 72.0 * 9 + 72.0);
  std::string msg = user_error([&] {
    pool2d_nchw(data, PoolKind::Avg, 2, 2, [] {
      Conv2dParams p;
      p.pad_h = 2;
      return p;
    }());
  });
  EXPECT_NE(msg.find("entirely in the padding"), std::string::npos) << msg;
}

TEST(Softmax, FourStagesOverTheLastAxis) {
  Tensor x = f32({3, 5}, "X");
  Tensor s = softmax(x);
  Workload w("softmax", {x}, {s});
  EXPECT_EQ(s.shape(), (Shape{3, 5}));
  EXPECT_EQ(stage_tags(w),
            (std::vector<std::string>{"softmax_max:reduction", "softmax_exp:broadcast",
                                      "softmax_sum:reduction", "softmax:broadcast"}));
  EXPECT_EQ(w.find_op("softmax_sum")->output.shape(), (Shape{3}));
  // max 1, exp (sub + exp) 2, sum 1, divide 1 per element.
  EXPECT_DOUBLE_EQ(w.flop_count(), 15.0 * 5);
  EXPECT_NE(user_error([] { softmax(placeholder({3}, DataType::int32(), "I")); }), "");
}

TEST(LayerNorm, ThreeStagesAndShapeChecks) {
  Tensor x = f32({3, 5}, "X"), gamma = f32({5}, "gamma"), beta = f32({5}, "beta");
  Tensor y = layer_norm(x, gamma, beta);
  Workload w("ln", {x, gamma, beta}, {y});
  EXPECT_EQ(stage_tags(w),
            (std::vector<std::string>{"layer_norm_mean:reduction", "layer_norm_var:reduction",
                                      "layer_norm:broadcast"}));
  // Per element: mean 2 (mul, add); var 5 (the body squares (x - mean) as a product of two
  // subtractions, times 1/n, add); normalise 6 (sub, add eps, sqrt, div, mul, add).
  EXPECT_DOUBLE_EQ(w.flop_count(), 15.0 * 13);
  std::string msg = user_error([&] { layer_norm(x, f32({4}, "g"), beta); });
  EXPECT_NE(msg.find("layer_norm: gamma [4] and beta [5] must match the last dimension of [3, 5]"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace tensortune::te

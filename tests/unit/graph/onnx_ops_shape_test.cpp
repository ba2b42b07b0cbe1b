// SPDX-License-Identifier: Apache-2.0
// Data movement operators of imported ONNX models (Split, Slice, Pad, Resize, DepthToSpace,
// SpaceToDepth, Expand, Tile), each run through the compiled executor and compared with a naive
// reference.
#include "tensortune/graph/onnx_import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#if defined(ONNX_NAMESPACE) && __has_include(<onnx/onnx_pb.h>)
#include "onnx_op_runner.h"

namespace tensortune::graph {
namespace {

using test::add_input;
using test::add_int_attr;
using test::add_node;
using test::add_output;
using test::add_string_attr;
using test::expect_near_all;
using test::unravel;
using test::wave;
using Shape = std::vector<int64_t>;

/// out[i] = x[src(index of i)] for every output element (src gives a flat input position).
std::vector<float> gather_ref(const std::vector<float>& x,
                              const Shape& out,
                              const std::function<int64_t(const Shape&)>& src) {
  std::vector<float> r;
  for (int64_t i = 0; i < test::numel(out); ++i)
    r.push_back(x[static_cast<size_t>(src(unravel(i, out)))]);
  return r;
}

TEST(OnnxOps, SplitBySizesAndEqually) {
  onnx::ModelProto model = test::onnx_model("split", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {2, 6, 3});
  test::fill_int64_tensor(g->add_initializer(), "sizes", {2}, {2, 4});
  add_int_attr(add_node(g, "Split", {"x", "sizes"}, {"a", "b"}, "split"), "axis", 1);
  add_int_attr(add_node(g, "Split", {"x"}, {"c", "d", "e"}, "thirds"), "axis", -1);
  add_output(g, "a", {2, 2, 3});
  add_output(g, "b", {2, 4, 3});
  add_output(g, "e", {2, 6, 1});
  std::vector<float> x = wave(36);
  std::vector<std::vector<float>> got = test::run_onnx(model, {x});
  expect_near_all(
      got.at(0),
      gather_ref(x, {2, 2, 3}, [](const Shape& i) { return (i[0] * 6 + i[1]) * 3 + i[2]; }), "a");
  expect_near_all(
      got.at(1),
      gather_ref(x, {2, 4, 3}, [](const Shape& i) { return (i[0] * 6 + i[1] + 2) * 3 + i[2]; }),
      "b");
  expect_near_all(
      got.at(2), gather_ref(x, {2, 6, 1}, [](const Shape& i) { return (i[0] * 6 + i[1]) * 3 + 2; }),
      "e");
}

TEST(OnnxOps, SliceWithNegativeIndicesAndSteps) {
  onnx::ModelProto model = test::onnx_model("slice", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {4, 10});
  test::fill_int64_tensor(g->add_initializer(), "starts", {2}, {-1, 1});
  test::fill_int64_tensor(g->add_initializer(), "ends", {2}, {-100, 1000});
  test::fill_int64_tensor(g->add_initializer(), "axes", {2}, {0, -1});
  test::fill_int64_tensor(g->add_initializer(), "steps", {2}, {-2, 3});
  add_node(g, "Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  add_output(g, "y", {2, 3});
  std::vector<float> x = wave(40);
  // Rows 3, 1 (backward by 2 from the last); columns 1, 4, 7.
  expect_near_all(
      test::run_onnx(model, {x}).at(0),
      gather_ref(x, {2, 3}, [](const Shape& i) { return (3 - 2 * i[0]) * 10 + 1 + 3 * i[1]; }),
      "slice");
}

TEST(OnnxOps, PadConstantReflectAndEdge) {
  for (const std::string mode : {"constant", "reflect", "edge"}) {
    onnx::ModelProto model = test::onnx_model("pad", 13);
    onnx::GraphProto* g = model.mutable_graph();
    add_input(g, "x", {1, 2, 3, 4});
    test::fill_int64_tensor(g->add_initializer(), "pads", {8}, {0, 0, 2, 1, 0, 0, 1, 3});
    test::fill_float_tensor(g->add_initializer(), "value", {}, {1.5f}, false);
    add_string_attr(add_node(g, "Pad", {"x", "pads", "value"}, {"y"}), "mode", mode);
    add_output(g, "y", {1, 2, 6, 8});
    std::vector<float> x = wave(24), want;
    for (int64_t i = 0; i < 2 * 6 * 8; ++i) {
      Shape ix = unravel(i, {1, 2, 6, 8});
      int64_t h = ix[2] - 2, w = ix[3] - 1;
      if (mode == "constant" && (h < 0 || h >= 3 || w < 0 || w >= 4)) {
        want.push_back(1.5f);
        continue;
      }
      if (mode == "reflect") {
        h = h < 0 ? -h : (h >= 3 ? 4 - h : h);
        w = w < 0 ? -w : (w >= 4 ? 6 - w : w);
      }
      h = std::clamp<int64_t>(h, 0, 2);
      w = std::clamp<int64_t>(w, 0, 3);
      want.push_back(x[static_cast<size_t>((ix[1] * 3 + h) * 4 + w)]);
    }
    expect_near_all(test::run_onnx(model, {x}).at(0), want, mode);
  }
}

/// The source coordinate of Resize, in float32 as the kernel computes it.
float resize_coordinate(const std::string& mode, int64_t x, int64_t in, int64_t out, float scale) {
  float xf = static_cast<float>(x);
  if (mode == "asymmetric")
    return xf * (1.0f / scale);
  if (mode == "align_corners")
    return out == 1 ? 0.0f : xf * (static_cast<float>(in - 1) / static_cast<float>(out - 1));
  if (mode == "pytorch_half_pixel" && out == 1)
    return 0.0f;
  return (xf + 0.5f) * (1.0f / scale) - 0.5f;
}

struct ResizeCase {
  std::string mode, transform, nearest_mode;
  Shape out;
  bool by_sizes;
};

TEST(OnnxOps, ResizeNearestAndLinearUnderEachCoordinateTransform) {
  std::vector<ResizeCase> cases = {
      {"nearest", "asymmetric", "floor", {1, 2, 6, 8}, false},
      {"nearest", "half_pixel", "round_prefer_floor", {1, 2, 6, 8}, false},
      {"nearest", "asymmetric", "round_prefer_ceil", {1, 2, 5, 2}, true},
      {"linear", "half_pixel", "", {1, 2, 6, 8}, false},
      {"linear", "align_corners", "", {1, 2, 7, 5}, true},
      {"linear", "pytorch_half_pixel", "", {1, 2, 1, 7}, true},
      {"linear", "asymmetric", "", {1, 2, 6, 8}, false},
  };
  const Shape in = {1, 2, 3, 4};
  for (const ResizeCase& c : cases) {
    onnx::ModelProto model = test::onnx_model("resize", 13);
    onnx::GraphProto* g = model.mutable_graph();
    add_input(g, "x", in);
    std::vector<float> scales = {1, 1, 2, 2};
    if (c.by_sizes) {
      test::fill_int64_tensor(g->add_initializer(), "sizes", {4}, c.out);
      add_node(g, "Resize", {"x", "", "", "sizes"}, {"y"}, "resize");
    } else {
      test::fill_float_tensor(g->add_initializer(), "scales", {4}, scales, false);
      add_node(g, "Resize", {"x", "", "scales"}, {"y"}, "resize");
    }
    onnx::NodeProto* node = g->mutable_node(0);
    add_string_attr(node, "mode", c.mode);
    add_string_attr(node, "coordinate_transformation_mode", c.transform);
    if (!c.nearest_mode.empty())
      add_string_attr(node, "nearest_mode", c.nearest_mode);
    add_output(g, "y", c.out);
    std::vector<float> x = wave(24), want;
    for (int64_t i = 0; i < test::numel(c.out); ++i) {
      Shape ix = unravel(i, c.out);
      double v = 0;
      std::vector<int64_t> lo(2), hi(2);
      std::vector<double> lam(2);
      for (int d = 0; d < 2; ++d) {
        int64_t n = in[2 + d], m = c.out[2 + d];
        float scale = c.by_sizes ? static_cast<float>(m) / static_cast<float>(n) : scales[2 + d];
        float s = resize_coordinate(c.transform, ix[2 + d], n, m, scale);
        if (c.mode == "nearest") {
          float r = c.nearest_mode == "floor"               ? std::floor(s)
                    : c.nearest_mode == "round_prefer_ceil" ? std::floor(s + 0.5f)
                                                            : std::ceil(s - 0.5f);
          lo[d] = hi[d] = std::clamp<int64_t>(static_cast<int64_t>(r), 0, n - 1);
          lam[d] = 0;
          continue;
        }
        float f = std::floor(s);
        lo[d] = std::clamp<int64_t>(static_cast<int64_t>(f), 0, n - 1);
        hi[d] = std::clamp<int64_t>(static_cast<int64_t>(f) + 1, 0, n - 1);
        lam[d] = s - f;
      }
      auto at = [&](int64_t h, int64_t w) {
        return x[static_cast<size_t>((ix[1] * 3 + h) * 4 + w)];
      };
      v = (1 - lam[0]) * (1 - lam[1]) * at(lo[0], lo[1]) +
          (1 - lam[0]) * lam[1] * at(lo[0], hi[1]) + lam[0] * (1 - lam[1]) * at(hi[0], lo[1]) +
          lam[0] * lam[1] * at(hi[0], hi[1]);
      want.push_back(static_cast<float>(v));
    }
    expect_near_all(test::run_onnx(model, {x}).at(0), want,
                    c.mode + " " + c.transform + " " + c.nearest_mode);
  }
}

TEST(OnnxOps, DepthToSpaceBothOrdersAndSpaceToDepth) {
  const int64_t b = 2, c_out = 3, h = 2, w = 3;
  for (const std::string mode : {"DCR", "CRD"}) {
    onnx::ModelProto model = test::onnx_model("d2s", 13);
    onnx::GraphProto* g = model.mutable_graph();
    add_input(g, "x", {1, c_out * b * b, h, w});
    onnx::NodeProto* node = add_node(g, "DepthToSpace", {"x"}, {"y"});
    add_int_attr(node, "blocksize", b);
    add_string_attr(node, "mode", mode);
    add_output(g, "y", {1, c_out, h * b, w * b});
    std::vector<float> x = wave(c_out * b * b * h * w);
    // The reshape-transpose-reshape definitions of the ONNX specification.
    expect_near_all(test::run_onnx(model, {x}).at(0),
                    gather_ref(x, {1, c_out, h * b, w * b},
                               [&](const Shape& i) {
                                 int64_t bi = i[2] % b, bj = i[3] % b;
                                 int64_t c = mode == "DCR" ? (bi * b + bj) * c_out + i[1]
                                                           : (i[1] * b + bi) * b + bj;
                                 return (c * h + i[2] / b) * w + i[3] / b;
                               }),
                    mode);
  }
  onnx::ModelProto model = test::onnx_model("s2d", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {1, 3, 4, 6});
  add_int_attr(add_node(g, "SpaceToDepth", {"x"}, {"y"}), "blocksize", 2);
  add_output(g, "y", {1, 12, 2, 3});
  std::vector<float> x = wave(72);
  expect_near_all(test::run_onnx(model, {x}).at(0),
                  gather_ref(x, {1, 12, 2, 3},
                             [](const Shape& i) {
                               int64_t c = i[1] % 3, bj = (i[1] / 3) % 2, bi = i[1] / 6;
                               return (c * 4 + i[2] * 2 + bi) * 6 + i[3] * 2 + bj;
                             }),
                  "SpaceToDepth");
}

TEST(OnnxOps, ExpandAndTile) {
  onnx::ModelProto model = test::onnx_model("expand", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {3, 1});
  test::fill_int64_tensor(g->add_initializer(), "shape", {3}, {2, 1, 4});
  test::fill_int64_tensor(g->add_initializer(), "repeats", {2}, {2, 3});
  add_node(g, "Expand", {"x", "shape"}, {"e"});
  add_node(g, "Tile", {"x", "repeats"}, {"t"});
  add_output(g, "e", {2, 3, 4});
  add_output(g, "t", {6, 3});
  std::vector<float> x = {1.5f, -2.0f, 0.25f};
  std::vector<std::vector<float>> got = test::run_onnx(model, {x});
  expect_near_all(got.at(0), gather_ref(x, {2, 3, 4}, [](const Shape& i) { return i[1]; }),
                  "Expand");
  expect_near_all(got.at(1), gather_ref(x, {6, 3}, [](const Shape& i) { return i[0] % 3; }),
                  "Tile");
}

TEST(OnnxOps, MaxPoolWithCeilModeAndAsymmetricPads) {
  // SqueezeNet pools 3x3 with stride 2 and ceil_mode=1: 6 -> 3 rather than 2.
  struct Case {
    int64_t ceil_mode;
    std::vector<int64_t> pads;
    Shape out;
  };
  for (const Case& c : {Case{1, {0, 0, 0, 0}, {1, 2, 3, 3}}, Case{0, {1, 0, 0, 1}, {1, 2, 3, 3}},
                        Case{1, {1, 0, 1, 0}, {1, 2, 4, 3}}}) {
    onnx::ModelProto model = test::onnx_model("pool", 13);
    onnx::GraphProto* g = model.mutable_graph();
    add_input(g, "x", {1, 2, 6, 6});
    onnx::NodeProto* node = add_node(g, "MaxPool", {"x"}, {"y"});
    test::add_ints_attr(node, "kernel_shape", {3, 3});
    test::add_ints_attr(node, "strides", {2, 2});
    test::add_ints_attr(node, "pads", c.pads);
    add_int_attr(node, "ceil_mode", c.ceil_mode);
    add_output(g, "y", c.out);
    std::vector<float> x = wave(72), want;
    for (int64_t i = 0; i < test::numel(c.out); ++i) {
      Shape ix = unravel(i, c.out);
      float m = -1e30f;
      for (int64_t dy = 0; dy < 3; ++dy) {
        for (int64_t dx = 0; dx < 3; ++dx) {
          int64_t h = ix[2] * 2 + dy - c.pads[0], w = ix[3] * 2 + dx - c.pads[1];
          if (h >= 0 && h < 6 && w >= 0 && w < 6)
            m = std::max(m, x[static_cast<size_t>((ix[1] * 6 + h) * 6 + w)]);
        }
      }
      want.push_back(m);
    }
    expect_near_all(test::run_onnx(model, {x}).at(0), want,
                    "ceil_mode " + std::to_string(c.ceil_mode));
  }
}

TEST(OnnxOps, AveragePoolWithCeilModeAndAsymmetricPads) {
  // 3x3 windows every 2 over 6x6: ceil_mode gives a last window hanging past the input, which
  // never counts; with count_include_pad the pads do.
  struct Case {
    int64_t ceil_mode, include_pad;
    std::vector<int64_t> pads;
    Shape out;
  };
  for (const Case& c :
       {Case{1, 0, {0, 0, 0, 0}, {1, 2, 3, 3}}, Case{1, 1, {1, 0, 1, 0}, {1, 2, 4, 3}},
        Case{0, 0, {1, 0, 0, 1}, {1, 2, 3, 3}}, Case{1, 1, {0, 1, 0, 0}, {1, 2, 3, 3}}}) {
    onnx::ModelProto model = test::onnx_model("avg", 13);
    onnx::GraphProto* g = model.mutable_graph();
    add_input(g, "x", {1, 2, 6, 6});
    onnx::NodeProto* node = add_node(g, "AveragePool", {"x"}, {"y"});
    test::add_ints_attr(node, "kernel_shape", {3, 3});
    test::add_ints_attr(node, "strides", {2, 2});
    test::add_ints_attr(node, "pads", c.pads);
    add_int_attr(node, "ceil_mode", c.ceil_mode);
    add_int_attr(node, "count_include_pad", c.include_pad);
    add_output(g, "y", c.out);
    std::vector<float> x = wave(72), want;
    for (int64_t i = 0; i < test::numel(c.out); ++i) {
      Shape ix = unravel(i, c.out);
      double sum = 0;
      int64_t count[2];
      for (int d = 0; d < 2; ++d) {
        int64_t start = ix[2 + d] * 2 - c.pads[d];
        count[d] = c.include_pad ? std::min<int64_t>(start + 3, 6 + c.pads[2 + d]) - start
                                 : std::min<int64_t>(start + 3, 6) - std::max<int64_t>(start, 0);
      }
      for (int64_t dy = 0; dy < 3; ++dy) {
        for (int64_t dx = 0; dx < 3; ++dx) {
          int64_t h = ix[2] * 2 + dy - c.pads[0], w = ix[3] * 2 + dx - c.pads[1];
          if (h >= 0 && h < 6 && w >= 0 && w < 6)
            sum += x[static_cast<size_t>((ix[1] * 6 + h) * 6 + w)];
        }
      }
      want.push_back(static_cast<float>(sum / static_cast<double>(count[0] * count[1])));
    }
    expect_near_all(test::run_onnx(model, {x}).at(0), want,
                    "ceil_mode " + std::to_string(c.ceil_mode) + " include_pad " +
                        std::to_string(c.include_pad));
  }
}

/// A 3x3, stride 2 Conv (or MaxPool) over [1,2,8,8] with auto_pad `mode`, or with explicit
/// `pads` when `mode` is empty.
onnx::ModelProto strided_window(const std::string& op,
                                const std::string& mode,
                                const std::vector<int64_t>& pads,
                                const Shape& out) {
  onnx::ModelProto model = test::onnx_model("auto_pad", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {1, 2, 8, 8});
  std::vector<std::string> inputs = {"x"};
  if (op == "Conv") {
    test::fill_float_tensor(g->add_initializer(), "w", {3, 2, 3, 3}, wave(54, 1.0), true);
    inputs.push_back("w");
  }
  onnx::NodeProto* node = add_node(g, op, inputs, {"y"}, "window");
  test::add_ints_attr(node, "kernel_shape", {3, 3});
  test::add_ints_attr(node, "strides", {2, 2});
  if (mode.empty())
    test::add_ints_attr(node, "pads", pads);
  else
    add_string_attr(node, "auto_pad", mode);
  add_output(g, "y", out);
  return model;
}

TEST(OnnxOps, AutoPadIsTheSameAsItsExplicitPads) {
  // 8 wide, 3 wide windows every 2: SAME needs 4 outputs and 1 pad, at the end for SAME_UPPER.
  struct Case {
    std::string mode;
    std::vector<int64_t> pads;
    Shape out_hw;
  };
  std::vector<float> x = wave(128);
  for (const char* op : {"Conv", "MaxPool"}) {
    for (const Case& c :
         {Case{"SAME_UPPER", {0, 0, 1, 1}, {4, 4}}, Case{"SAME_LOWER", {1, 1, 0, 0}, {4, 4}},
          Case{"VALID", {0, 0, 0, 0}, {3, 3}}}) {
      Shape out = {1, std::string(op) == "Conv" ? 3 : 2, c.out_hw[0], c.out_hw[1]};
      std::vector<float> got = test::run_onnx(strided_window(op, c.mode, {}, out), {x}).at(0);
      std::vector<float> want = test::run_onnx(strided_window(op, "", c.pads, out), {x}).at(0);
      expect_near_all(got, want, std::string(op) + " " + c.mode, 0.0);
    }
  }
}

}  // namespace
}  // namespace tensortune::graph

#endif  // ONNX headers

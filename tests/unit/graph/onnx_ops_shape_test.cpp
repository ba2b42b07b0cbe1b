// SPDX-License-Identifier: Apache-2.0
// Data movement operators of imported ONNX models (Split, Slice, Pad, DepthToSpace,
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

}  // namespace
}  // namespace tensortune::graph

#endif  // ONNX headers

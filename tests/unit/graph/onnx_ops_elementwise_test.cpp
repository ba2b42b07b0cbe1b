// SPDX-License-Identifier: Apache-2.0
// Element-wise, comparison, reduction and MatMul operators of imported ONNX models, each run
// through the compiled executor and compared with a naive reference; and the folding of shape
// chains and the single list of every unsupported operator.
#include "tensortune/graph/onnx_import.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
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
using test::expect_near_all;
using test::wave;

struct UnaryCase {
  std::string op;
  std::function<void(onnx::NodeProto*)> attrs;
  std::function<double(double)> reference;
  bool positive;  // the op needs positive inputs
};

TEST(OnnxOps, UnaryActivationsMatchTheReference) {
  auto none = [](onnx::NodeProto*) {
  };
  std::vector<UnaryCase> cases = {
      {"Sigmoid", none, [](double x) { return 1 / (1 + std::exp(-x)); }, false},
      {"Tanh", none, [](double x) { return std::tanh(x); }, false},
      {"HardSigmoid",
       [](onnx::NodeProto* n) {
         add_float_attr(n, "alpha", 0.3f);
         add_float_attr(n, "beta", 0.4f);
       },
       [](double x) { return std::clamp(0.3 * x + 0.4, 0.0, 1.0); }, false},
      {"HardSigmoid", none, [](double x) { return std::clamp(0.2 * x + 0.5, 0.0, 1.0); }, false},
      {"HardSwish", none, [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); }, false},
      {"LeakyRelu", [](onnx::NodeProto* n) { add_float_attr(n, "alpha", 0.1f); },
       [](double x) { return x < 0 ? 0.1 * x : x; }, false},
      {"LeakyRelu", none, [](double x) { return x < 0 ? 0.01 * x : x; }, false},
      {"Sqrt", none, [](double x) { return std::sqrt(x); }, true},
      {"Reciprocal", none, [](double x) { return 1 / x; }, true},
      {"Neg", none, [](double x) { return -x; }, false},
      {"Abs", none, [](double x) { return std::fabs(x); }, false},
      {"Log", none, [](double x) { return std::log(x); }, true},
      {"Softplus", none, [](double x) { return std::log1p(std::exp(x)); }, false},
      {"Elu", [](onnx::NodeProto* n) { add_float_attr(n, "alpha", 0.7f); },
       [](double x) { return x < 0 ? 0.7 * (std::exp(x) - 1) : x; }, false},
  };
  for (const UnaryCase& c : cases) {
    onnx::ModelProto model = test::onnx_model("unary", 14);
    onnx::GraphProto* g = model.mutable_graph();
    add_input(g, "x", {2, 3, 5});
    c.attrs(add_node(g, c.op, {"x"}, {"y"}, "op"));
    add_output(g, "y", {2, 3, 5});
    std::vector<float> x = wave(30, 0.3, 4.0, c.positive ? 4.5 : 0.0);
    std::vector<float> want;
    for (float v : x)
      want.push_back(static_cast<float>(c.reference(v)));
    expect_near_all(test::run_onnx(model, {x}).at(0), want, c.op, 1e-5);
  }
}

TEST(OnnxOps, PowPReluMinMaxBroadcast) {
  onnx::ModelProto model = test::onnx_model("binary", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {2, 3, 4});
  add_input(g, "y", {4});
  add_input(g, "z", {3, 1});
  test::fill_float_tensor(g->add_initializer(), "e", {}, {1.7f}, false);
  test::fill_float_tensor(g->add_initializer(), "slope", {3, 1}, {0.1f, 0.2f, 0.3f}, true);
  add_node(g, "Abs", {"x"}, {"ax"});
  add_node(g, "Pow", {"ax", "e"}, {"p"});       // constant exponent
  add_node(g, "Pow", {"ax", "y"}, {"q"});       // broadcast tensor exponent
  add_node(g, "PRelu", {"x", "slope"}, {"r"});  // per-channel slope
  add_node(g, "Min", {"x", "y", "z"}, {"mn"});  // n-ary, broadcasting
  add_node(g, "Max", {"x", "y", "z"}, {"mx"});
  for (const char* out : {"p", "q", "r", "mn", "mx"})
    add_output(g, out, {2, 3, 4});
  std::vector<float> x = wave(24, 0.3, 2.0), y = wave(4, 1.1), z = wave(3, 2.0);
  std::vector<std::vector<float>> got = test::run_onnx(model, {x, y, z});
  std::vector<std::vector<float>> want(5);
  for (int64_t i = 0; i < 24; ++i) {
    std::vector<int64_t> ix = test::unravel(i, {2, 3, 4});
    float xv = x[i], yv = y[ix[2]], zv = z[ix[1]];
    want[0].push_back(std::pow(std::fabs(xv), 1.7f));
    want[1].push_back(std::pow(std::fabs(xv), yv));
    want[2].push_back(xv < 0 ? xv * 0.1f * static_cast<float>(ix[1] + 1) : xv);
    want[3].push_back(std::min({xv, yv, zv}));
    want[4].push_back(std::max({xv, yv, zv}));
  }
  const char* names[] = {"Pow const", "Pow tensor", "PRelu", "Min", "Max"};
  for (size_t k = 0; k < 5; ++k)
    expect_near_all(got.at(k), want[k], names[k], 1e-5);
}

TEST(OnnxOps, ComparisonsFeedWhereAndNot) {
  onnx::ModelProto model = test::onnx_model("where", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {2, 6});
  add_input(g, "y", {6});
  test::fill_float_tensor(g->add_initializer(), "minus", {}, {-100.0f}, false);
  add_node(g, "Equal", {"x", "y"}, {"eq"});
  add_node(g, "Where", {"eq", "minus", "x"}, {"w_eq"});  // a masked fill, as attention does
  add_node(g, "Less", {"x", "y"}, {"lt"});
  add_node(g, "Not", {"lt"}, {"ge"});
  add_node(g, "Where", {"ge", "x", "y"}, {"w_max"});
  add_node(g, "Greater", {"x", "y"}, {"gt"});
  add_node(g, "Where", {"gt", "y", "x"}, {"w_min"});
  for (const char* out : {"w_eq", "w_max", "w_min"})
    add_output(g, out, {2, 6});
  std::vector<float> x = {1, 2, 3, 4, 5, 6, -1, 2, -3, 4, 0, 7};
  std::vector<float> y = {1, 0, 3, 5, 5, -6};
  std::vector<std::vector<float>> got = test::run_onnx(model, {x, y});
  std::vector<std::vector<float>> want(3);
  for (size_t i = 0; i < x.size(); ++i) {
    float yv = y[i % 6];
    want[0].push_back(x[i] == yv ? -100.0f : x[i]);
    want[1].push_back(std::max(x[i], yv));
    want[2].push_back(std::min(x[i], yv));
  }
  expect_near_all(got.at(0), want[0], "Equal + Where");
  expect_near_all(got.at(1), want[1], "Less + Not + Where");
  expect_near_all(got.at(2), want[2], "Greater + Where");
}

TEST(OnnxOps, LogicalOpsAndNArySum) {
  // And, Or, LessOrEqual and GreaterOrEqual through Where; Sum of three broadcast inputs.
  onnx::ModelProto model = test::onnx_model("logic", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {2, 6});
  add_input(g, "y", {6});
  add_input(g, "z", {2, 1});
  add_node(g, "LessOrEqual", {"x", "y"}, {"le"});
  add_node(g, "GreaterOrEqual", {"x", "z"}, {"ge"});
  add_node(g, "And", {"le", "ge"}, {"both"});
  add_node(g, "Or", {"le", "ge"}, {"either"});
  add_node(g, "Where", {"both", "x", "y"}, {"w_and"});
  add_node(g, "Where", {"either", "x", "z"}, {"w_or"});
  add_node(g, "Sum", {"x", "y", "z"}, {"sum"});
  for (const char* out : {"w_and", "w_or", "sum"})
    add_output(g, out, {2, 6});
  std::vector<float> x = {1, 2, 3, 4, 5, 6, -1, 2, -3, 4, 0, 7};
  std::vector<float> y = {1, 0, 3, 5, 5, -6}, z = {2, 0};
  std::vector<std::vector<float>> got = test::run_onnx(model, {x, y, z});
  std::vector<std::vector<float>> want(3);
  for (size_t i = 0; i < x.size(); ++i) {
    float yv = y[i % 6], zv = z[i / 6];
    bool le = x[i] <= yv, ge = x[i] >= zv;
    want[0].push_back(le && ge ? x[i] : yv);
    want[1].push_back(le || ge ? x[i] : zv);
    want[2].push_back(x[i] + yv + zv);
  }
  expect_near_all(got.at(0), want[0], "And");
  expect_near_all(got.at(1), want[1], "Or");
  expect_near_all(got.at(2), want[2], "Sum");
}

TEST(OnnxOps, ReductionsTakeAxesAsAttributeOrInput) {
  onnx::ModelProto model = test::onnx_model("reduce", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {2, 3, 4});
  test::fill_int64_tensor(g->add_initializer(), "axes", {1}, {1});
  test::fill_int64_tensor(g->add_initializer(), "as_image", {4}, {2, 3, 2, 2});
  add_node(g, "ReduceSum", {"x", "axes"}, {"sum"});  // opset 13: axes as input, keepdims 1
  onnx::NodeProto* mx = add_node(g, "ReduceMax", {"x"}, {"max"});
  test::add_ints_attr(mx, "axes", {-1});
  add_int_attr(mx, "keepdims", 0);
  test::add_ints_attr(add_node(g, "ReduceMean", {"x"}, {"mean"}), "axes", {0, 2});
  add_node(g, "Reshape", {"x", "as_image"}, {"image"});
  add_node(g, "GlobalMaxPool", {"image"}, {"gmp"});
  add_output(g, "sum", {2, 1, 4});
  add_output(g, "max", {2, 3});
  add_output(g, "mean", {1, 3, 1});
  add_output(g, "gmp", {2, 3, 1, 1});
  std::vector<float> x = wave(24);
  std::vector<std::vector<float>> got = test::run_onnx(model, {x});
  std::vector<float> sum(8, 0), max(6, -1e30f), mean(3, 0);
  for (int64_t i = 0; i < 24; ++i) {
    std::vector<int64_t> ix = test::unravel(i, {2, 3, 4});
    sum[ix[0] * 4 + ix[2]] += x[i];
    max[ix[0] * 3 + ix[1]] = std::max(max[ix[0] * 3 + ix[1]], x[i]);
    mean[ix[1]] += x[i] / 8;
  }
  expect_near_all(got.at(0), sum, "ReduceSum");
  expect_near_all(got.at(1), max, "ReduceMax");
  expect_near_all(got.at(2), mean, "ReduceMean");
  expect_near_all(got.at(3), std::vector<float>(max.begin(), max.end()), "GlobalMaxPool");
}

TEST(OnnxOps, MatMulBroadcastsBatchDimensions) {
  onnx::ModelProto model = test::onnx_model("bmm", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "a", {2, 1, 3, 4});
  add_input(g, "b", {3, 4, 5});
  add_node(g, "MatMul", {"a", "b"}, {"y"});
  add_output(g, "y", {2, 3, 3, 5});
  std::vector<float> a = wave(24), b = wave(60, 1.0);
  std::vector<float> want;
  for (int64_t i = 0; i < 2 * 3 * 3 * 5; ++i) {
    std::vector<int64_t> ix = test::unravel(i, {2, 3, 3, 5});
    double s = 0;
    for (int64_t k = 0; k < 4; ++k)
      s += a[(ix[0] * 3 + ix[2]) * 4 + k] * b[(ix[1] * 4 + k) * 5 + ix[3]];
    want.push_back(static_cast<float>(s));
  }
  expect_near_all(test::run_onnx(model, {a, b}).at(0), want, "MatMul");
}

TEST(OnnxOps, MatMulWithOneDimensionalOperands) {
  // A row [4] times [3,4,5] is [3,5]; [2,3,4] times a column [4] is [2,3].
  onnx::ModelProto model = test::onnx_model("mv", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "row", {4});
  add_input(g, "b", {3, 4, 5});
  add_input(g, "a", {2, 3, 4});
  add_input(g, "column", {4});
  add_node(g, "MatMul", {"row", "b"}, {"vm"});
  add_node(g, "MatMul", {"a", "column"}, {"mv"});
  add_output(g, "vm", {3, 5});
  add_output(g, "mv", {2, 3});
  std::vector<float> row = wave(4), b = wave(60, 1.0), a = wave(24, 2.0), column = wave(4, 3.0);
  std::vector<std::vector<float>> got = test::run_onnx(model, {row, b, a, column});
  std::vector<float> vm, mv;
  for (int64_t i = 0; i < 15; ++i) {
    double s = 0;
    for (int64_t k = 0; k < 4; ++k)
      s += row[k] * b[(i / 5 * 4 + k) * 5 + i % 5];
    vm.push_back(static_cast<float>(s));
  }
  for (int64_t i = 0; i < 6; ++i) {
    double s = 0;
    for (int64_t k = 0; k < 4; ++k)
      s += a[i * 4 + k] * column[k];
    mv.push_back(static_cast<float>(s));
  }
  expect_near_all(got.at(0), vm, "row x batch");
  expect_near_all(got.at(1), mv, "batch x column");
}

TEST(OnnxOps, SoftmaxAndLogSoftmaxOverAnyAxis) {
  // Opset 13: over one axis. Opset 11: over the axes from `axis` on, flattened into one.
  struct Case {
    std::string op;
    int64_t axis, opset;
  };
  const std::vector<int64_t> shape = {2, 3, 4};
  std::vector<float> x = wave(24, 0.3, 3.0);
  for (const Case& c :
       {Case{"Softmax", 1, 13}, Case{"LogSoftmax", -1, 13}, Case{"LogSoftmax", 0, 13},
        Case{"Softmax", 1, 11}, Case{"LogSoftmax", 0, 11}}) {
    onnx::ModelProto model = test::onnx_model("softmax", c.opset);
    onnx::GraphProto* g = model.mutable_graph();
    add_input(g, "x", shape);
    add_int_attr(add_node(g, c.op, {"x"}, {"y"}), "axis", c.axis);
    add_output(g, "y", shape);
    int64_t axis = c.axis < 0 ? c.axis + 3 : c.axis;
    // Elements i and j share a softmax when they differ in the reduced axes only.
    auto group = [&](int64_t i) {
      std::vector<int64_t> ix = test::unravel(i, shape);
      for (int64_t d = axis; d < (c.opset < 13 ? 3 : axis + 1); ++d)
        ix[static_cast<size_t>(d)] = 0;
      return ix;
    };
    std::vector<float> want;
    for (int64_t i = 0; i < 24; ++i) {
      double mx = -1e30, sum = 0;
      for (int64_t j = 0; j < 24; ++j) {
        if (group(j) == group(i))
          mx = std::max(mx, static_cast<double>(x[j]));
      }
      for (int64_t j = 0; j < 24; ++j) {
        if (group(j) == group(i))
          sum += std::exp(x[j] - mx);
      }
      double v = x[i] - mx - std::log(sum);
      want.push_back(static_cast<float>(c.op == "Softmax" ? std::exp(v) : v));
    }
    expect_near_all(test::run_onnx(model, {x}).at(0), want,
                    c.op + " axis " + std::to_string(c.axis) + " opset " + std::to_string(c.opset));
  }
}

/// Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])), or with Slice(Shape(x), 0, 1), then
/// a Sigmoid: [2,3,4] -> [2,12].
onnx::ModelProto shape_chain_model(int64_t opset, bool with_slice) {
  onnx::ModelProto model = test::onnx_model("shape_chain", opset);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {2, 3, 4});
  test::fill_int64_tensor(g->add_initializer(), "zero", {}, {0});
  test::fill_int64_tensor(g->add_initializer(), "zeros", {1}, {0});
  test::fill_int64_tensor(g->add_initializer(), "one", {1}, {1});
  test::fill_int64_tensor(g->add_initializer(), "minus_one", {1}, {-1});
  add_node(g, "Shape", {"x"}, {"s"});
  if (with_slice) {
    add_node(g, "Slice", {"s", "zeros", "one"}, {"n1"});
  } else {
    add_node(g, "Gather", {"s", "zero"}, {"n"});
    if (opset >= 13) {
      add_node(g, "Unsqueeze", {"n", "zeros"}, {"n1"});
    } else {
      test::add_ints_attr(add_node(g, "Unsqueeze", {"n"}, {"n1"}), "axes", {0});
    }
  }
  add_int_attr(add_node(g, "Concat", {"n1", "minus_one"}, {"shape"}), "axis", 0);
  add_node(g, "Reshape", {"x", "shape"}, {"r"}, "reshape");
  add_node(g, "Sigmoid", {"r"}, {"y"}, "sigmoid");
  add_output(g, "y", {-1, -1});
  return model;
}

TEST(OnnxOps, ShapeChainsFoldToConstantsAtEveryOpset) {
  // ONNX 1.12's own data propagation resolves these chains from opset 14 only.
  for (int64_t opset : {11, 13, 14, 17}) {
    for (bool with_slice : {false, true}) {
      std::string what = "opset " + std::to_string(opset) + (with_slice ? " slice" : " gather");
      onnx::ModelProto model = shape_chain_model(opset, with_slice);
      Graph graph = import_onnx_bytes(test::serialize(model), "chain.onnx");
      optimize(graph);
      EXPECT_EQ(graph.to_string(),
                "reshape: Reshape(x, shape) -> r float32[2,12]\n"
                "sigmoid: Sigmoid(r) -> y float32[2,12]\n")
          << what;
      EXPECT_EQ(graph.value("shape").data->ints, (std::vector<int64_t>{2, -1})) << what;
      std::vector<float> x = wave(24), want;
      for (float v : x)
        want.push_back(1 / (1 + std::exp(-v)));
      expect_near_all(test::run_onnx(model, {x}).at(0), want, what);
    }
  }
}

TEST(OnnxOps, ConstantOfShapeAndRangeBecomeConstants) {
  // y = x + ConstantOfShape(Shape(x), 2.5) + Range(0, 4, 1): masks and position ids as exporters
  // write them, constants once shapes are static.
  onnx::ModelProto model = test::onnx_model("consts", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {2, 4});
  test::fill_float_tensor(g->add_initializer(), "start", {}, {0.0f}, false);
  test::fill_float_tensor(g->add_initializer(), "limit", {}, {4.0f}, false);
  test::fill_float_tensor(g->add_initializer(), "delta", {}, {1.0f}, false);
  add_node(g, "Shape", {"x"}, {"s"});
  onnx::NodeProto* fill = add_node(g, "ConstantOfShape", {"s"}, {"c"});
  test::fill_float_tensor(test::add_attr(fill, "value", onnx::AttributeProto::TENSOR)->mutable_t(),
                          "", {1}, {2.5f}, false);
  add_node(g, "Range", {"start", "limit", "delta"}, {"r"});
  add_node(g, "Add", {"x", "c"}, {"a"});
  add_node(g, "Add", {"a", "r"}, {"y"});
  add_output(g, "y", {2, 4});
  std::vector<float> x = wave(8), want;
  for (size_t i = 0; i < x.size(); ++i)
    want.push_back(x[i] + 2.5f + static_cast<float>(i % 4));
  expect_near_all(test::run_onnx(model, {x}).at(0), want, "consts");
}

TEST(OnnxOps, EveryMissingOperatorIsListedInOneError) {
  onnx::ModelProto model = test::onnx_model("missing", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {2, 3});
  test::fill_int64_tensor(g->add_initializer(), "axis", {}, {1});
  add_node(g, "Sigmoid", {"x"}, {"s"}, "ok");
  add_node(g, "CumSum", {"s", "axis"}, {"c"}, "cumsum");
  add_node(g, "Softsign", {"c"}, {"t"}, "softsign");
  add_node(g, "Hardmax", {"t"}, {"y"});
  add_output(g, "y", {2, 3});
  try {
    import_onnx_bytes(test::serialize(model), "m.onnx");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("'m.onnx': 3 unsupported node(s)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("\n  node 'cumsum' (CumSum)\n  node 'softsign' (Softsign)\n"
                       "  node '#3' (Hardmax)"),
              std::string::npos)
        << msg;
  }
}

TEST(OnnxOps, EveryNodeThatCannotBeCompiledIsListedInOneError) {
  onnx::ModelProto model = test::onnx_model("uncompilable", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {1, 2, 4, 4});
  test::fill_float_tensor(g->add_initializer(), "scales", {4}, {1, 1, 2, 2}, false);
  test::add_string_attr(add_node(g, "Resize", {"x", "", "scales"}, {"r"}, "cubic"), "mode",
                        "cubic");
  test::fill_int64_tensor(g->add_initializer(), "pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  test::add_string_attr(add_node(g, "Pad", {"r", "pads"}, {"p"}, "wrap"), "mode", "wrap");
  add_int_attr(add_node(g, "Softmax", {"p"}, {"s"}, "softmax"), "axis", 1);
  test::add_string_attr(add_node(g, "Resize", {"s", "", "scales"}, {"y"}, "cubic2"), "mode",
                        "cubic");
  add_output(g, "y", {1, 2, 20, 20});
  Graph graph = import_onnx_bytes(test::serialize(model), "u.onnx");
  optimize(graph);
  try {
    extract_tasks(graph, partition(graph));
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("model 'uncompilable': 3 node(s) cannot be compiled:\n  node 'cubic'"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("\n  node 'wrap' (Pad): pad mode 'wrap'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("\n  node 'cubic2' (Resize): mode 'cubic'"), std::string::npos) << msg;
  }
}

TEST(OnnxOps, ABoolOrIntegerOutputIsRefusedByTheFloatRun) {
  for (int type : {onnx::TensorProto::BOOL, onnx::TensorProto::INT64}) {
    onnx::ModelProto model = test::onnx_model("int_out", 13);
    onnx::GraphProto* g = model.mutable_graph();
    add_input(g, "x", {2, 3});
    add_input(g, "y", {2, 3});
    if (type == onnx::TensorProto::BOOL)
      add_node(g, "Less", {"x", "y"}, {"out"});
    else
      add_int_attr(add_node(g, "Cast", {"x"}, {"out"}), "to", type);
    add_output(g, "out", {2, 3}, type);
    try {
      test::run_onnx(model, {wave(6), wave(6, 1.0)});
      FAIL() << "expected a UserError";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("output 'out' is "), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tensortune::graph

#endif  // ONNX headers

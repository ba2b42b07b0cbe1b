// SPDX-License-Identifier: Apache-2.0
// Tests of the ONNX importer on ModelProtos built in C++ (see onnx_test_models.h): values,
// constants, attributes, inferred shapes, and one test per way a model is rejected.
#include "tensortune/graph/onnx_import.h"

#include "common/temp_dir.h"
#include "common/text.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#if defined(ONNX_NAMESPACE) && __has_include(<onnx/onnx_pb.h>)
#include "onnx_test_models.h"
#endif

namespace tensortune::graph {
namespace {
using test::contains;

/// The message of the UserError that `fn` throws; fails the test when it throws nothing.
template <class Fn>
std::string user_error_of(Fn fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UserError";
  return "";
}

TEST(OnnxImport, SupportedOpsAreSortedAndComplete) {
  std::vector<std::string> ops = supported_onnx_ops();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  EXPECT_EQ(ops.size(), 72u);
  for (const char* op : {"Add", "Constant", "Conv", "Gemm", "LayerNormalization", "Resize", "Split",
                         "Unsqueeze", "Where"}) {
    EXPECT_TRUE(std::binary_search(ops.begin(), ops.end(), op)) << op;
  }
}

TEST(OnnxImport, WithoutOnnxEveryImportFails) {
  if (onnx_available()) {
    GTEST_SKIP() << "built with ONNX";
  }
  EXPECT_TRUE(contains(user_error_of([] { import_onnx_bytes("", "m.onnx"); }),
                       "built without ONNX support"));
  EXPECT_TRUE(contains(user_error_of([] { import_onnx("m.onnx"); }), "libonnx-dev"));
}

TEST(OnnxImport, RejectsBytesThatAreNotProtobuf) {
  if (!onnx_available()) {
    GTEST_SKIP() << "built without ONNX";
  }
  EXPECT_EQ(user_error_of([] { import_onnx_bytes("this is not a model", "junk.onnx"); }),
            "'junk.onnx' is not an ONNX model (protobuf parse failed)");
}

TEST(OnnxImport, RejectsAMissingFile) {
  if (!onnx_available()) {
    GTEST_SKIP() << "built without ONNX";
  }
  test::TempDir dir("onnx_missing");
  std::string path = dir.file("missing.onnx");
  EXPECT_EQ(user_error_of([&] { import_onnx(path); }),
            "cannot read ONNX model '" + path + "': no such file");
}

#if defined(ONNX_NAMESPACE) && __has_include(<onnx/onnx_pb.h>)

using test::add_attr;
using test::add_input;
using test::add_node;
using test::add_output;
using test::serialize;

TEST(OnnxImport, ImportsConvReluWithInitializers) {
  Graph g = import_onnx_bytes(serialize(test::conv_relu_model()), "conv.onnx");
  EXPECT_EQ(g.name, "conv_relu");
  EXPECT_EQ(g.inputs, (std::vector<std::string>{"x"}));
  EXPECT_EQ(g.outputs, (std::vector<std::string>{"y"}));
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].name, "conv1");
  EXPECT_EQ(g.nodes[0].op, "Conv");
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "w", "b"}));
  EXPECT_EQ(g.nodes[1].name, "Relu_1");  // unnamed: op type and index
  EXPECT_EQ(g.nodes[1].outputs, (std::vector<std::string>{"y"}));

  const Value& w = g.value("w");  // raw_data
  ASSERT_TRUE(w.is_constant());
  EXPECT_EQ(w.describe(), "float32[4,3,3,3]");
  EXPECT_EQ(w.data->floats, test::ramp(108));
  EXPECT_TRUE(w.data->ints.empty());
  const Value& b = g.value("b");  // float_data
  ASSERT_TRUE(b.is_constant());
  EXPECT_EQ(b.data->floats, (std::vector<float>{0.5f, -0.5f, 1.0f, -1.0f}));
  EXPECT_FALSE(g.value("x").is_constant());
  EXPECT_EQ(g.value("x").describe(), "float32[1,3,8,8]");
}

TEST(OnnxImport, FillsShapesFromShapeInference) {
  Graph g = import_onnx_bytes(serialize(test::conv_relu_model()), "conv.onnx");
  // Neither "c" (no value_info) nor "y" (no declared dimensions) had a shape in the model.
  EXPECT_EQ(g.value("c").describe(), "float32[1,4,8,8]");
  EXPECT_EQ(g.value("y").describe(), "float32[1,4,8,8]");
  EXPECT_EQ(g.to_string(),
            "conv1: Conv(x, w, b) -> c float32[1,4,8,8]\n"
            "Relu_1: Relu(c) -> y float32[1,4,8,8]\n");
}

TEST(OnnxImport, ConvertsAttributeKinds) {
  Graph g = import_onnx_bytes(serialize(test::conv_relu_model()), "conv.onnx");
  const Node& conv = g.nodes[0];
  EXPECT_EQ(conv.attr_ints("pads", {}), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv.attr_ints("kernel_shape", {}), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(conv.attr_int("group", 0), 1);
  EXPECT_EQ(conv.attr_string("auto_pad", ""), "NOTSET");
  EXPECT_FALSE(conv.has_attr("dilations"));
  EXPECT_THROW(conv.attr_float("pads", 0), UserError);

  Graph gemm = import_onnx_bytes(serialize(test::gemm_model()), "gemm.onnx");
  ASSERT_EQ(gemm.nodes.size(), 1u);
  EXPECT_EQ(gemm.nodes[0].attr_int("transB", 0), 1);
  EXPECT_DOUBLE_EQ(gemm.nodes[0].attr_float("alpha", 1.0), 0.5);
  EXPECT_EQ(gemm.value("y").describe(), "float32[2,8]");
  EXPECT_EQ(gemm.value("w").data->floats, test::ramp(128));
}

TEST(OnnxImport, ImportsFromAFile) {
  test::TempDir dir("onnx_file");
  std::string path = dir.file("gemm.onnx");
  std::ofstream(path, std::ios::binary) << serialize(test::gemm_model());
  Graph from_file = import_onnx(path);
  Graph from_bytes = import_onnx_bytes(serialize(test::gemm_model()), "gemm.onnx");
  EXPECT_EQ(from_file.to_string(), from_bytes.to_string());
  EXPECT_EQ(from_file.to_string(), "fc: Gemm(x, w, b) -> y float32[2,8]\n");
  EXPECT_EQ(from_file.values().size(), 4u);
}

TEST(OnnxImport, ConstantNodesBecomeConstantValues) {
  onnx::ModelProto model = test::onnx_model("consts");
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {2, 3, 4});
  test::fill_int64_tensor(
      add_attr(add_node(g, "Constant", {}, {"shape"}, "c0"), "value", onnx::AttributeProto::TENSOR)
          ->mutable_t(),
      "", {2}, {2, 12});
  add_node(g, "Reshape", {"x", "shape"}, {"r"}, "reshape");
  add_attr(add_node(g, "Constant", {}, {"half"}), "value_float", onnx::AttributeProto::FLOAT)
      ->set_f(0.5f);
  add_node(g, "Mul", {"r", "half"}, {"m"}, "mul");
  test::add_ints_attr(add_node(g, "Constant", {}, {"perm_shape"}), "value_ints", {12, 2});
  add_node(g, "Reshape", {"m", "perm_shape"}, {"y"}, "reshape2");
  add_output(g, "y", {-1, -1});

  Graph graph = import_onnx_bytes(serialize(model), "consts.onnx");
  ASSERT_EQ(graph.nodes.size(), 3u);  // the Constant nodes are values, not nodes
  EXPECT_EQ(graph.nodes[0].name, "reshape");
  EXPECT_EQ(graph.value("shape").describe(), "int64[2]");
  EXPECT_EQ(graph.value("shape").data->ints, (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(graph.value("half").describe(), "float32[]");
  EXPECT_EQ(graph.value("half").data->floats, (std::vector<float>{0.5f}));
  EXPECT_EQ(graph.value("perm_shape").data->ints, (std::vector<int64_t>{12, 2}));
  EXPECT_EQ(graph.value("r").describe(), "float32[2,12]");
  EXPECT_EQ(graph.value("y").describe(), "float32[12,2]");
  EXPECT_EQ(graph.inputs, (std::vector<std::string>{"x"}));
}

TEST(OnnxImport, InitializerListedAsGraphInputIsAConstant) {
  onnx::ModelProto model = test::gemm_model();
  add_input(model.mutable_graph(), "w", {8, 16});  // the IR version 3 convention
  add_input(model.mutable_graph(), "b", {8});
  Graph g = import_onnx_bytes(serialize(model), "gemm.onnx");
  EXPECT_EQ(g.inputs, (std::vector<std::string>{"x"}));
  EXPECT_TRUE(g.value("w").is_constant());
  EXPECT_TRUE(g.value("b").is_constant());
}

TEST(OnnxImport, ResolvesReshapeShapesComputedByShapeOps) {
  // Flatten as exporters write it: Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])).
  onnx::ModelProto model = test::onnx_model("flatten");
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {2, 3, 4});
  test::fill_int64_tensor(g->add_initializer(), "zero", {}, {0});
  test::fill_int64_tensor(g->add_initializer(), "axes", {1}, {0});
  test::fill_int64_tensor(g->add_initializer(), "minus_one", {1}, {-1});
  add_node(g, "Shape", {"x"}, {"s"});
  add_node(g, "Gather", {"s", "zero"}, {"n"});
  add_node(g, "Unsqueeze", {"n", "axes"}, {"n1"});
  add_attr(add_node(g, "Concat", {"n1", "minus_one"}, {"shape"}), "axis", onnx::AttributeProto::INT)
      ->set_i(0);
  add_node(g, "Reshape", {"x", "shape"}, {"y"});
  add_output(g, "y", {-1, -1});
  Graph graph = import_onnx_bytes(serialize(model), "flatten.onnx");
  EXPECT_EQ(graph.value("s").describe(), "int64[3]");
  EXPECT_EQ(graph.value("n").describe(), "int64[]");
  EXPECT_EQ(graph.value("shape").describe(), "int64[2]");
  EXPECT_EQ(graph.value("y").describe(), "float32[2,12]");
}

TEST(OnnxImport, SanitizesTheGraphName) {
  onnx::ModelProto model = test::gemm_model();
  model.mutable_graph()->set_name("3-layer net");
  EXPECT_EQ(import_onnx_bytes(serialize(model), "m.onnx").name, "m_3_layer_net");
  model.mutable_graph()->set_name("torch-jit.v2");
  EXPECT_EQ(import_onnx_bytes(serialize(model), "m.onnx").name, "torch_jit_v2");
}

TEST(OnnxImport, RejectsAModelFailingTheChecker) {
  onnx::ModelProto model = test::gemm_model();
  add_node(model.mutable_graph(), "Relu", {"never_produced"}, {"z"}, "dangling");
  std::string msg = user_error_of([&] { import_onnx_bytes(serialize(model), "bad.onnx"); });
  EXPECT_TRUE(contains(msg, "'bad.onnx' fails the ONNX checker: ")) << msg;
  EXPECT_TRUE(contains(msg, "never_produced")) << msg;
}

TEST(OnnxImport, ListsEveryUnsupportedNode) {
  onnx::ModelProto model = test::onnx_model("unsupported");
  onnx::OperatorSetIdProto* custom = model.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {1, 8});
  test::fill_int64_tensor(g->add_initializer(), "k", {1}, {3});
  add_node(g, "Relu", {"x"}, {"r"}, "relu");
  add_node(g, "TopK", {"r", "k"}, {"values", "indices"}, "topk");
  add_node(g, "NonZero", {"r"}, {"nz"});
  add_node(g, "Frobnicate", {"r"}, {"f"}, "frob")->set_domain("com.example");
  add_output(g, "values", {-1, -1});
  add_output(g, "nz", {-1, -1}, onnx::TensorProto::INT64);
  add_output(g, "f", {-1, -1});
  std::string msg = user_error_of([&] { import_onnx_bytes(serialize(model), "u.onnx"); });
  EXPECT_TRUE(contains(msg, "'u.onnx': 3 unsupported node(s) (supported: Abs, Add, And, ")) << msg;
  EXPECT_TRUE(contains(msg,
                       ", Where):\n  node 'topk' (TopK)\n  node '#2' (NonZero)\n"
                       "  node 'frob' (com.example.Frobnicate)"))
      << msg;
  EXPECT_FALSE(contains(msg, "'relu'")) << msg;
}

TEST(OnnxImport, RejectsASymbolicBatchDimension) {
  onnx::ModelProto model = test::conv_relu_model({"N"});
  std::string msg = user_error_of([&] { import_onnx_bytes(serialize(model), "dyn.onnx"); });
  EXPECT_TRUE(contains(msg, "'dyn.onnx': dynamic or unknown shapes: 'x' [N,3,8,8]")) << msg;
  EXPECT_TRUE(contains(msg, "'c' [N,4,8,8]")) << msg;  // every such value, not only the first
  EXPECT_TRUE(contains(msg, "'y' [N,4,8,8]")) << msg;
}

TEST(OnnxImport, RejectsUnknownDimensionsAndUnsupportedDtypes) {
  onnx::ModelProto unknown = test::gemm_model();
  unknown.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->clear_dim_value();
  std::string msg = user_error_of([&] { import_onnx_bytes(serialize(unknown), "u.onnx"); });
  // Shape inference names the unknown batch of "y" with a fresh symbol ("unk__0").
  EXPECT_TRUE(contains(msg, "'u.onnx': dynamic or unknown shapes: 'x' [?,16], 'y' [")) << msg;

  onnx::ModelProto half = test::onnx_model("half");
  add_input(half.mutable_graph(), "x", {4}, {}, onnx::TensorProto::FLOAT16);
  add_node(half.mutable_graph(), "Relu", {"x"}, {"y"});
  add_output(half.mutable_graph(), "y", {4}, onnx::TensorProto::FLOAT16);
  msg = user_error_of([&] { import_onnx_bytes(serialize(half), "h.onnx"); });
  EXPECT_EQ(msg, "'h.onnx': unsupported data types: 'x' FLOAT16, 'y' FLOAT16");
}

TEST(OnnxImport, RejectsExternalData) {
  onnx::ModelProto model = test::gemm_model();
  onnx::TensorProto* w = model.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = w->add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  std::string msg = user_error_of([&] { import_onnx_bytes(serialize(model), "ext.onnx"); });
  EXPECT_TRUE(contains(msg, "'ext.onnx': initializer 'w' keeps its data in an external file"))
      << msg;
}

TEST(OnnxImport, RejectsRawDataOfTheWrongSize) {
  onnx::ModelProto model = test::conv_relu_model();
  onnx::TensorProto* w = model.mutable_graph()->mutable_initializer(0);
  w->set_raw_data(w->raw_data().substr(4));
  std::string msg = user_error_of([&] { import_onnx_bytes(serialize(model), "short.onnx"); });
  EXPECT_TRUE(contains(msg, "'w'")) << msg;
}

TEST(OnnxImport, SoftmaxWithoutAnAxisTakesItsOpsetsDefault) {
  for (int64_t opset : {11, 13}) {
    onnx::ModelProto model = test::onnx_model("softmax", opset);
    onnx::GraphProto* g = model.mutable_graph();
    test::add_input(g, "x", {2, 3, 4});
    test::add_node(g, "Softmax", {"x"}, {"y"}, "s");
    test::add_output(g, "y", {2, 3, 4});
    const Graph graph = import_onnx_bytes(model.SerializeAsString(), "softmax.onnx");
    // Opset 11: axis 1, flattening axes 1 and 2, so the Softmax runs on a [2,12] reshape; opset
    // 13: none, the last axis.
    ASSERT_EQ(graph.nodes.size(), opset < 13 ? 3U : 1U) << opset;
    const Node& softmax = graph.nodes[opset < 13 ? 1 : 0];
    EXPECT_EQ(softmax.op, "Softmax");
    EXPECT_EQ(softmax.attr_int("axis", -1), -1) << opset;
    EXPECT_EQ(graph.value(softmax.inputs[0]).describe(),
              opset < 13 ? "float32[2,12]" : "float32[2,3,4]");
  }
}

TEST(OnnxImport, AGemmWithBetaZeroDropsItsC) {
  for (float beta : {0.0f, 1.0f}) {
    onnx::ModelProto model = test::gemm_model();
    onnx::NodeProto* gemm = model.mutable_graph()->mutable_node(0);
    test::add_attr(gemm, "beta", onnx::AttributeProto::FLOAT)->set_f(beta);
    const Graph graph = import_onnx_bytes(test::serialize(model), "gemm.onnx");
    ASSERT_EQ(graph.nodes.size(), 1U);
    // beta 0: C is never read, so no kernel may take it as an input.
    EXPECT_EQ(graph.nodes[0].inputs.size(), beta == 0.0f ? 2U : 3U) << beta;
  }
}

#endif  // ONNX headers

}  // namespace
}  // namespace tensortune::graph

// SPDX-License-Identifier: Apache-2.0
// Window attributes that ONNX's shape inference cannot take (a stride of 0 divides by zero in
// libonnx) are refused by the importer, naming the node, before inference runs; and other
// hostile attribute values are user errors, never crashes or internal errors.
#include "tensortune/graph/onnx_import.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <string>

#if defined(ONNX_NAMESPACE) && __has_include(<onnx/onnx_pb.h>)
#include "onnx_test_models.h"

namespace tensortune::graph {
namespace {

std::string import_error(const onnx::ModelProto& model) {
  try {
    import_onnx_bytes(test::serialize(model), "w.onnx");
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UserError";
  return "";
}

/// conv_relu_model with the Conv's attribute `key` set to `values`.
onnx::ModelProto conv_with(const std::string& key, const std::vector<int64_t>& values) {
  onnx::ModelProto model = test::conv_relu_model();
  onnx::NodeProto* conv = model.mutable_graph()->mutable_node(0);
  for (int i = 0; i < conv->attribute_size(); ++i) {
    if (conv->attribute(i).name() == key)
      conv->mutable_attribute()->DeleteSubrange(i, 1);
  }
  if (key == "group") {
    test::add_attr(conv, key, onnx::AttributeProto::INT)->set_i(values.at(0));
  } else {
    test::add_ints_attr(conv, key, values);
  }
  return model;
}

onnx::ModelProto max_pool(const std::vector<int64_t>& strides) {
  onnx::ModelProto model = test::onnx_model("pool");
  onnx::GraphProto* g = model.mutable_graph();
  test::add_input(g, "x", {1, 2, 8, 8});
  onnx::NodeProto* pool = test::add_node(g, "MaxPool", {"x"}, {"y"}, "pool1");
  test::add_ints_attr(pool, "kernel_shape", {2, 2});
  test::add_ints_attr(pool, "strides", strides);
  test::add_output(g, "y", {-1, -1, -1, -1});
  return model;
}

TEST(OnnxWindowAttributes, ZeroStridesAreAUserErrorNotACrash) {
  EXPECT_EQ(import_error(conv_with("strides", {0, 0})),
            "'w.onnx': 1 invalid window attribute(s):\n"
            "  node 'conv1' (Conv): strides [0,0] (each must be >= 1)");
  EXPECT_EQ(import_error(max_pool({0, 0})),
            "'w.onnx': 1 invalid window attribute(s):\n"
            "  node 'pool1' (MaxPool): strides [0,0] (each must be >= 1)");
  EXPECT_NO_THROW(import_onnx_bytes(test::serialize(max_pool({2, 2})), "w.onnx"));
}

TEST(OnnxWindowAttributes, RefusesEveryBadValueAndLength) {
  struct Case {
    std::string key;
    std::vector<int64_t> values;
    std::string words;
  };
  std::vector<Case> cases = {
      {"dilations", {0, 1}, "dilations [0,1] (each must be >= 1)"},
      {"kernel_shape", {3, -3}, "kernel_shape [3,-3] (each must be >= 1)"},
      {"pads", {1, -1, 1, 1}, "pads [1,-1,1,1] (each must be >= 0)"},
      {"pads", {1, 1}, "pads [1,1] (expected 4 values for a 2-D window)"},
      {"strides", {1, 1, 1}, "strides [1,1,1] (expected 2 values for a 2-D window)"},
      {"kernel_shape", {3, 3, 3}, "kernel_shape [3,3,3] does not match weight shape [4,3,3,3]"},
      {"group", {0}, "group 0 (must be >= 1)"},
      {"group", {-2}, "group -2 (must be >= 1)"},
      {"group", {2}, "group 2 does not divide the 3 input channels"},
      {"group", {3}, "weight [4,3,3,3] expects 9 input channels with group 3, the input has 3"},
  };
  for (const Case& c : cases) {
    std::string msg = import_error(conv_with(c.key, c.values));
    EXPECT_NE(msg.find("node 'conv1' (Conv): " + c.words), std::string::npos) << msg;
  }
}

TEST(OnnxWindowAttributes, ListsEveryBadNodeInOneError) {
  onnx::ModelProto model = conv_with("strides", {0, 1});
  onnx::GraphProto* g = model.mutable_graph();
  onnx::NodeProto* pool = test::add_node(g, "AveragePool", {"y"}, {"p"});
  test::add_ints_attr(pool, "kernel_shape", {2, 2});
  test::add_ints_attr(pool, "pads", {-1, 0, 0, 0});
  g->mutable_output(0)->set_name("p");
  std::string msg = import_error(model);
  EXPECT_NE(msg.find("2 invalid window attribute(s):\n  node 'conv1' (Conv): strides [0,1]"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("\n  node '#2' (AveragePool): pads [-1,0,0,0]"), std::string::npos) << msg;
}

TEST(OnnxHostileValues, SplitWithNegativeSizesIsAUserError) {
  onnx::ModelProto model = test::onnx_model("split");
  onnx::GraphProto* g = model.mutable_graph();
  test::add_input(g, "x", {1, 4});
  test::fill_int64_tensor(g->add_initializer(), "sizes", {2}, {-1, 5});
  test::add_attr(test::add_node(g, "Split", {"x", "sizes"}, {"a", "b"}, "split"), "axis",
                 onnx::AttributeProto::INT)
      ->set_i(1);
  test::add_output(g, "a", {-1, -1});
  test::add_output(g, "b", {-1, -1});
  std::string msg = import_error(model);
  EXPECT_NE(msg.find("'w.onnx': dynamic or unknown shapes: 'a' [1,-1]"), std::string::npos) << msg;
}

TEST(OnnxHostileValues, AHugeConstantOfShapeIsAUserError) {
  onnx::ModelProto model = test::onnx_model("huge");
  onnx::GraphProto* g = model.mutable_graph();
  test::add_input(g, "x", {2});
  test::fill_int64_tensor(g->add_initializer(), "shape", {3}, {1000000, 1000000, 2});
  test::add_node(g, "ConstantOfShape", {"shape"}, {"c"}, "fill");
  test::add_output(g, "c", {-1, -1, -1});
  EXPECT_EQ(import_error(model),
            "'w.onnx': values of more than 2^32 elements: 'c' [1000000,1000000,2]");
}

}  // namespace
}  // namespace tensortune::graph

#endif  // ONNX headers

// SPDX-License-Identifier: Apache-2.0
// Tests of the model graph: values, typed attribute access, lookups and the invariant check.
#include "tensortune/graph/graph.h"

#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace tensortune::graph {
namespace {

Value tensor(const std::string& name, std::vector<int64_t> shape) {
  Value v;
  v.name = name;
  v.shape = std::move(shape);
  return v;
}

Value constant(const std::string& name, std::vector<int64_t> shape) {
  Value v = tensor(name, std::move(shape));
  auto data = std::make_shared<ConstantData>();
  data->floats.assign(static_cast<size_t>(v.numel()), 1.0f);
  v.data = data;
  return v;
}

Node node(const std::string& name,
          const std::string& op,
          std::vector<std::string> inputs,
          std::vector<std::string> outputs) {
  Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

/// x -> conv1(x, w, b) -> c -> relu1 -> y, with w and b constant.
Graph conv_relu() {
  Graph g;
  g.set_value(tensor("x", {1, 3, 8, 8}));
  g.set_value(constant("w", {4, 3, 3, 3}));
  g.set_value(constant("b", {4}));
  g.set_value(tensor("c", {1, 4, 8, 8}));
  g.set_value(tensor("y", {1, 4, 8, 8}));
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.nodes.push_back(node("conv1", "Conv", {"x", "w", "b"}, {"c"}));
  g.nodes.push_back(node("relu1", "Relu", {"c"}, {"y"}));
  return g;
}

std::string internal_error_of(const Graph& g) {
  try {
    g.validate();
  } catch (const InternalError& e) {
    return e.what();
  }
  return "";
}

TEST(Value, NumelAndDescribe) {
  Value v = tensor("x", {1, 64, 56, 56});
  EXPECT_EQ(v.numel(), 64 * 56 * 56);
  EXPECT_EQ(v.describe(), "float32[1,64,56,56]");
  EXPECT_FALSE(v.is_constant());
  Value scalar = tensor("s", {});
  scalar.dtype = ir::DataType::int64();
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.describe(), "int64[]");
  EXPECT_TRUE(constant("w", {2, 3}).is_constant());
  EXPECT_EQ(tensor("e", {2, 0, 3}).numel(), 0);
}

TEST(Node, AttributeAccessorsReturnValuesOrFallbacks) {
  Node n = node("conv1", "Conv", {"x"}, {"y"});
  Attribute pads;
  pads.kind = Attribute::Kind::Ints;
  pads.ints = {1, 1, 1, 1};
  n.attrs["pads"] = pads;
  Attribute group;
  group.i = 2;
  n.attrs["group"] = group;
  Attribute eps;
  eps.kind = Attribute::Kind::Float;
  eps.f = 1e-5;
  n.attrs["epsilon"] = eps;
  Attribute pad_mode;
  pad_mode.kind = Attribute::Kind::String;
  pad_mode.s = "SAME_UPPER";
  n.attrs["auto_pad"] = pad_mode;

  EXPECT_TRUE(n.has_attr("pads"));
  EXPECT_FALSE(n.has_attr("strides"));
  EXPECT_EQ(n.attr_ints("pads", {}), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(n.attr_ints("strides", {1, 1}), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(n.attr_int("group", 1), 2);
  EXPECT_EQ(n.attr_int("axis", -1), -1);
  EXPECT_DOUBLE_EQ(n.attr_float("epsilon", 0.0), 1e-5);
  EXPECT_DOUBLE_EQ(n.attr_float("alpha", 0.25), 0.25);
  EXPECT_EQ(n.attr_string("auto_pad", "NOTSET"), "SAME_UPPER");
  EXPECT_EQ(n.attr_string("mode", "constant"), "constant");
  EXPECT_EQ(n.describe(), "node 'conv1' (Conv)");
}

TEST(Node, AttributeOfAnotherKindIsAUserErrorNamingTheNode) {
  Node n = node("conv1", "Conv", {"x"}, {"y"});
  Attribute pads;
  pads.kind = Attribute::Kind::Float;
  pads.f = 1.0;
  n.attrs["pads"] = pads;
  try {
    n.attr_ints("pads", {});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "node 'conv1' (Conv): attribute 'pads' is a Float, expected Ints");
  }
  EXPECT_THROW(n.attr_int("pads", 0), UserError);
  EXPECT_THROW(n.attr_string("pads", ""), UserError);
  EXPECT_NO_THROW(n.attr_float("pads", 0.0));
}

TEST(Graph, LooksUpValuesProducersAndUses) {
  Graph g = conv_relu();
  EXPECT_TRUE(g.has_value("c"));
  EXPECT_EQ(g.value("w").shape, (std::vector<int64_t>{4, 3, 3, 3}));
  EXPECT_THROW(g.value("nope"), InternalError);
  EXPECT_EQ(g.producer("c"), 0);
  EXPECT_EQ(g.producer("y"), 1);
  EXPECT_EQ(g.producer("x"), -1);
  EXPECT_EQ(g.producer("w"), -1);
  EXPECT_EQ(g.use_count("c"), 1);
  EXPECT_EQ(g.use_count("y"), 1);  // the graph output
  EXPECT_EQ(g.use_count("x"), 1);
  g.nodes.push_back(node("relu2", "Relu", {"c"}, {"z"}));
  EXPECT_EQ(g.use_count("c"), 2);
  EXPECT_EQ(g.use_count("unused"), 0);
}

TEST(Graph, SetValueReplacesAndEraseRemoves) {
  Graph g = conv_relu();
  g.set_value(tensor("c", {1, 4, 4, 4}));
  EXPECT_EQ(g.value("c").shape, (std::vector<int64_t>{1, 4, 4, 4}));
  EXPECT_EQ(g.values().size(), 5u);
  g.erase_value("c");
  EXPECT_FALSE(g.has_value("c"));
  EXPECT_EQ(g.values().size(), 4u);
}

TEST(Graph, FreshNameAvoidsValuesAndNodeOutputs) {
  Graph g = conv_relu();
  EXPECT_EQ(g.fresh_name("t"), "t");
  EXPECT_EQ(g.fresh_name("c"), "c_1");
  g.set_value(tensor("c_1", {1}));
  EXPECT_EQ(g.fresh_name("c"), "c_2");
  g.nodes.push_back(node("relu2", "Relu", {"c"}, {"z"}));  // "z" has no value yet
  EXPECT_EQ(g.fresh_name("z"), "z_1");
}

TEST(Graph, ValidateAcceptsAWellFormedGraph) {
  Graph g = conv_relu();
  EXPECT_NO_THROW(g.validate());
  g.nodes.push_back(node("clip", "Clip", {"y", "", "b"}, {"z"}));  // an omitted optional input
  g.set_value(tensor("z", {1, 4, 8, 8}));
  g.outputs.push_back("w");  // a constant can be an output
  EXPECT_NO_THROW(g.validate());
}

TEST(Graph, ValidateNamesTheNodeReadingAnUndefinedValue) {
  Graph g = conv_relu();
  std::swap(g.nodes[0], g.nodes[1]);  // relu1 now reads "c" before conv1 writes it
  EXPECT_NE(internal_error_of(g).find("node 'relu1' (Relu) reads 'c'"), std::string::npos)
      << internal_error_of(g);
}

TEST(Graph, ValidateRejectsBrokenInvariants) {
  Graph twice = conv_relu();
  twice.nodes.push_back(node("relu2", "Relu", {"c"}, {"y"}));
  EXPECT_NE(internal_error_of(twice).find("node 'relu2' (Relu) writes 'y', which is already"),
            std::string::npos);

  Graph no_value = conv_relu();
  no_value.erase_value("c");
  EXPECT_NE(internal_error_of(no_value).find("writes 'c', which has no value"), std::string::npos);

  Graph bad_output = conv_relu();
  bad_output.outputs.push_back("q");
  EXPECT_NE(internal_error_of(bad_output).find("output 'q'"), std::string::npos);

  Graph bad_input = conv_relu();
  bad_input.inputs.push_back("w");
  EXPECT_NE(internal_error_of(bad_input).find("input 'w' is a constant"), std::string::npos);

  Graph missing_input = conv_relu();
  missing_input.inputs.push_back("q");
  EXPECT_NE(internal_error_of(missing_input).find("input 'q' has no value"), std::string::npos);
}

TEST(Graph, ToStringPrintsOneLinePerNode) {
  Graph g = conv_relu();
  g.nodes.push_back(node("clip", "Clip", {"y", "", "b"}, {"z"}));
  g.set_value(tensor("z", {1, 4, 8, 8}));
  EXPECT_EQ(g.to_string(),
            "conv1: Conv(x, w, b) -> c float32[1,4,8,8]\n"
            "relu1: Relu(c) -> y float32[1,4,8,8]\n"
            "clip: Clip(y, _, b) -> z float32[1,4,8,8]\n");
}

}  // namespace
}  // namespace tensortune::graph

// SPDX-License-Identifier: Apache-2.0
// The ONNX importer on the committed PyTorch-exported models of tests/models (see its README):
// node counts, inputs, output shapes, and the bad models' messages.
#include "common/text.h"
#include "model_files.h"
#include "tensortune/graph/onnx_import.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace tensortune::graph {
namespace {
using test::contains;
using testing::model_path;

std::map<std::string, int> op_counts(const Graph& g) {
  std::map<std::string, int> counts;
  for (const Node& node : g.nodes) {
    ++counts[node.op];
  }
  return counts;
}

std::string import_error_of(const std::string& path) {
  try {
    import_onnx(path);
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UserError for " << path;
  return "";
}

struct ModelCase {
  const char* file;
  std::vector<int64_t> input_shape;
  std::vector<int64_t> output_shape;
  size_t nodes;  ///< without the Constant nodes, which become values
  std::map<std::string, int> some_ops;
};

TEST(OnnxModels, ImportsTheExportedModels) {
  if (!onnx_available()) {
    GTEST_SKIP() << "built without ONNX";
  }
  const std::vector<ModelCase> cases = {
      {"mlp.onnx", {2, 64}, {2, 10}, 10, {{"Gemm", 3}, {"Erf", 1}, {"Softmax", 1}}},
      {"cnn.onnx", {1, 3, 16, 16}, {1, 10}, 17, {{"Conv", 4}, {"BatchNormalization", 3}}},
      {"encoder.onnx",
       {1, 16, 32},
       {1, 16, 32},
       33,
       {{"MatMul", 8}, {"LayerNormalization", 2}, {"Reshape", 4}}},
      {"ln_decomposed.onnx", {4, 32}, {4, 32}, 10, {{"ReduceMean", 2}, {"Pow", 1}}},
  };
  for (const ModelCase& c : cases) {
    SCOPED_TRACE(c.file);
    std::string path = model_path(c.file);
    if (path.empty()) {
      GTEST_SKIP() << c.file << " not found";
    }
    Graph g = import_onnx(path);
    ASSERT_EQ(g.inputs, (std::vector<std::string>{"x"}));
    ASSERT_EQ(g.outputs, (std::vector<std::string>{"y"}));
    EXPECT_EQ(g.value("x").shape, c.input_shape);
    EXPECT_EQ(g.value("y").shape, c.output_shape);
    EXPECT_EQ(g.value("y").dtype, ir::DataType::float32());
    EXPECT_EQ(g.nodes.size(), c.nodes);
    std::map<std::string, int> counts = op_counts(g);
    EXPECT_EQ(counts.count("Constant"), 0u);
    for (const auto& [op, n] : c.some_ops) {
      EXPECT_EQ(counts[op], n) << op;
    }
    for (const Node& node : g.nodes) {
      for (const std::string& in : node.inputs) {
        EXPECT_TRUE(in.empty() || g.has_value(in)) << node.describe() << " reads " << in;
      }
    }
  }
}

TEST(OnnxModels, RejectsTheBadModels) {
  if (!onnx_available()) {
    GTEST_SKIP() << "built without ONNX";
  }
  std::string unsupported = model_path("unsupported.onnx");
  std::string dynamic = model_path("dynamic.onnx");
  std::string truncated = model_path("truncated.onnx");
  std::string not_onnx = model_path("not_onnx.onnx");
  if (unsupported.empty() || dynamic.empty() || truncated.empty() || not_onnx.empty()) {
    GTEST_SKIP() << "bad models not found";
  }
  std::string msg = import_error_of(unsupported);
  EXPECT_TRUE(contains(msg, "2 unsupported node(s)")) << msg;
  EXPECT_TRUE(contains(msg, "(TopK)")) << msg;
  EXPECT_TRUE(contains(msg, "(Hardmax)")) << msg;
  msg = import_error_of(dynamic);
  EXPECT_TRUE(contains(msg, "dynamic or unknown shapes: 'x' [N,16]")) << msg;
  msg = import_error_of(truncated);
  EXPECT_TRUE(contains(msg, "'" + truncated + "' ")) << msg;
  msg = import_error_of(not_onnx);
  EXPECT_TRUE(contains(msg, "'" + not_onnx + "' ")) << msg;
}

}  // namespace
}  // namespace tensortune::graph

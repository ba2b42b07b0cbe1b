// SPDX-License-Identifier: Apache-2.0
// run-model's output files: outputs whose names sanitize to the same file name (`a/b`, `a_b`)
// are written to distinct files, named in --json, and neither is lost; outputs that are not
// float32 are refused before the run.
#include "cli_runner.h"
#include "tensortune/graph/npy.h"
#include "tensortune/graph/onnx_import.h"
#include "tensortune/support/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#if defined(ONNX_NAMESPACE) && __has_include(<onnx/onnx_pb.h>)
#include "unit/graph/onnx_test_models.h"

namespace tensortune {
namespace {

using e2e::CliResult;
using e2e::run_cli;
using e2e::temp_path;

TEST(ModelOutputs, CollidingNamesAreWrittenToDistinctFiles) {
  onnx::ModelProto model = test::onnx_model("two_outputs");
  onnx::GraphProto* g = model.mutable_graph();
  test::add_input(g, "x", {2, 3});
  test::add_node(g, "Relu", {"x"}, {"a/b"}, "relu");
  test::add_node(g, "Neg", {"x"}, {"a_b"}, "neg");
  test::add_output(g, "a/b", {2, 3});
  test::add_output(g, "a_b", {2, 3});
  const std::string onnx_file = temp_path("two_outputs.onnx");
  std::ofstream(onnx_file, std::ios::binary) << test::serialize(model);
  const std::string dir = temp_path("two_outputs_model");
  const std::string out = temp_path("two_outputs_out");
  CliResult c = run_cli("compile-model " + onnx_file + " --target native --out " + dir);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  CliResult r = run_cli("run-model " + dir + " --output-dir " + out + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const support::Json outputs = support::Json::parse(r.out).at("outputs");
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs.as_array()[0].at("name").as_string(), "a/b");
  EXPECT_EQ(outputs.as_array()[0].at("file").as_string(), out + "/a_b_1.npy");
  EXPECT_EQ(outputs.as_array()[1].at("name").as_string(), "a_b");
  EXPECT_EQ(outputs.as_array()[1].at("file").as_string(), out + "/a_b.npy");
  std::vector<float> relu = graph::read_npy(out + "/a_b_1.npy").to_floats();
  std::vector<float> neg = graph::read_npy(out + "/a_b.npy").to_floats();
  ASSERT_EQ(relu.size(), 6u);
  ASSERT_EQ(neg.size(), 6u);
  for (size_t i = 0; i < relu.size(); ++i) {
    // relu(x) = max(x, 0) and neg = -x: the two files hold the two different outputs.
    EXPECT_FLOAT_EQ(relu[i], std::max(-neg[i], 0.0f)) << i;
  }
  CliResult text = run_cli("run-model " + dir + " --output-dir " + out);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("output a/b [2,3] -> " + out + "/a_b_1.npy"), std::string::npos)
      << text.out;
}

TEST(ModelOutputs, AnInt64OutputIsRefusedWhenCompiled) {
  // The outputs are run into float32 buffers: an int64 one would overflow its buffer. It is
  // refused by compile-model, before any folder is written (run-model refuses it too).
  onnx::ModelProto model = test::onnx_model("int_output");
  onnx::GraphProto* g = model.mutable_graph();
  test::add_input(g, "x", {64});
  test::add_attr(test::add_node(g, "Cast", {"x"}, {"ids"}), "to", onnx::AttributeProto::INT)
      ->set_i(onnx::TensorProto::INT64);
  test::add_output(g, "ids", {64}, onnx::TensorProto::INT64);
  const std::string onnx_file = temp_path("int_output.onnx");
  std::ofstream(onnx_file, std::ios::binary) << test::serialize(model);
  const std::string dir = temp_path("int_output_model");
  CliResult c = run_cli("compile-model " + onnx_file + " --target native --out " + dir);
  EXPECT_EQ(c.exit_code, 1) << c.err;
  EXPECT_NE(c.err.find("model output 'ids' is int64"), std::string::npos) << c.err;
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace tensortune

#endif  // ONNX headers

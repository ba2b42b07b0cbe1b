// SPDX-License-Identifier: Apache-2.0
// Whole models end to end: the committed ONNX models (scripts/make_models.py) imported,
// optimized, partitioned, compiled with default schedules and run on their committed inputs;
// outputs must match PyTorch's. Plus the run-time input checks.
#include "tensortune/graph/executor.h"

#include "graph_builder.h"
#include "model_files.h"
#include "tensortune/driver/compile.h"
#include "tensortune/graph/npy.h"
#include "tensortune/graph/onnx_import.h"
#include "tensortune/graph/passes.h"
#include "tensortune/support/error.h"
#include "tensortune/target/target.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tensortune::graph {
namespace {

using testing::Builder;
using testing::model_path;

class RealModel : public ::testing::TestWithParam<std::string> {};

TEST_P(RealModel, MatchesPyTorch) {
  if (!onnx_available())
    GTEST_SKIP() << "built without ONNX";
  const std::string m = GetParam();
  Graph g = import_onnx(model_path(m + ".onnx"));
  optimize(g);
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  Executable exe = Executable::build(g, compiler);
  ASSERT_EQ(exe.inputs().size(), 1u);
  NpyArray in = read_npy(model_path(m + ".input.0.npy"));
  NpyArray want = read_npy(model_path(m + ".output.0.npy"));
  ASSERT_EQ(in.shape, exe.inputs()[0].shape);
  ASSERT_EQ(want.shape, exe.outputs()[0].shape);
  std::vector<float> got = exe.run({in.to_floats()}).at(0);
  std::vector<float> ref = want.to_floats();
  double max_ref = 0;
  for (float v : ref)
    max_ref = std::max(max_ref, std::fabs(double(v)));
  for (size_t i = 0; i < ref.size(); ++i) {
    EXPECT_NEAR(got[i], ref[i], 1e-4 * std::max(1.0, max_ref)) << m << " element " << i;
  }
  // Activations are reused: the arena is never larger than all intermediates together.
  EXPECT_LE(exe.memory_plan().arena_bytes, exe.memory_plan().activation_bytes) << m;
}

INSTANTIATE_TEST_SUITE_P(Models,
                         RealModel,
                         ::testing::Values("mlp", "cnn", "encoder", "ln_decomposed"));

TEST(Executable, TheCnnFoldsItsBatchNormsAndFusesTheResidualAdd) {
  if (!onnx_available())
    GTEST_SKIP() << "built without ONNX";
  Graph g = import_onnx(model_path("cnn.onnx"));
  PassReport r = optimize(g);
  EXPECT_EQ(r.folded_batch_norms, 3);
  Partition p = partition(g);
  bool residual = false;
  for (const Kernel& k : p.kernels)
    residual = residual || k.label == "conv_add_relu";
  EXPECT_TRUE(residual) << g.to_string();
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  MemoryPlan plan = Executable::build(g, compiler).memory_plan();
  EXPECT_LT(plan.arena_bytes, plan.activation_bytes);
}

TEST(Executable, WrongInputsAreUserErrors) {
  if (!onnx_available())
    GTEST_SKIP() << "built without ONNX";
  Graph g = import_onnx(model_path("mlp.onnx"));
  optimize(g);
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  Executable exe = Executable::build(g, compiler);
  EXPECT_THROW(exe.run(std::vector<std::vector<float>>{}), UserError);
  try {
    exe.run({std::vector<float>(7)});
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("needs 128"), std::string::npos) << e.what();
  }
}

TEST(Executable, AScalarOutputIsAUserErrorNamingTheNode) {
  Builder b;
  b.input("x", {2, 3});
  b.output(b.node("ReduceMean", {"x"}, "m", {}));  // every axis, keepdims=0: rank 0
  b.g.nodes.back().name = "mean_all";
  b.g.nodes.back().attrs["keepdims"].i = 0;
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  try {
    Executable::build(b.g, compiler);
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'mean_all'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("scalar (rank 0)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tensortune::graph

// SPDX-License-Identifier: Apache-2.0
// A model exported to a folder (library + plan + weights) and loaded back computes what the
// in-process executable computes; broken folders are clear errors.
#include "tensortune/graph/model_library.h"

#include "common/temp_dir.h"
#include "graph_builder.h"
#include "tensortune/support/error.h"
#include "tensortune/target/target.h"

#include <gtest/gtest.h>

#include <fstream>

namespace tensortune::graph {
namespace {

using testing::Builder;

/// x[4,16] -> gemm+relu -> reshape -> softmax: weights, a view, two kernels.
Graph small_model() {
  Builder b;
  b.input("x", {4, 16});
  b.constant("w", {8, 16});
  b.constant("bias", {8}, 0.1);
  b.node("Gemm", {"x", "w", "bias"}, "h", {4, 8}, {{"transB", testing::int_attr(1)}});
  b.node("Relu", {"h"}, "r", {4, 8});
  b.ints("shape", {2, 16});
  b.node("Reshape", {"r", "shape"}, "v", {2, 16});
  b.output(b.node("Softmax", {"v"}, "y", {2, 16}));
  return b.g;
}

void expect_error(const std::function<void()>& f, const std::string& part) {
  try {
    f();
    FAIL() << "expected an error mentioning '" << part << "'";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(ModelLibrary, AnExportedModelRunsLikeTheInProcessOne) {
  Graph g = small_model();
  tensortune::test::TempDir dir("tt_model_library");
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  ExportedModel m = export_model(g, compiler, dir.file("m"));
  EXPECT_EQ(m.plan.calls.size(), 2u);
  EXPECT_EQ(m.functions.size(), 2u);
  LoadedModel loaded = LoadedModel::load(dir.file("m"));
  ASSERT_EQ(loaded.plan().inputs.size(), 1u);
  EXPECT_EQ(loaded.plan().outputs[0].shape, (std::vector<int64_t>{2, 16}));
  std::vector<float> x = testing::wave(64), y(32);
  loaded.run({x.data()}, {y.data()});
  std::vector<float> want = Executable::build(g, compiler).run({x}).at(0);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_FLOAT_EQ(y[i], want[i]) << i;
}

TEST(ModelLibrary, BrokenFoldersAreUserErrors) {
  tensortune::test::TempDir dir("tt_model_library_bad");
  std::string d = dir.file("m");
  expect_error([&] { LoadedModel::load(d + "/missing"); }, "not a compiled model folder");
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  export_model(small_model(), compiler, d);
  { std::ofstream(d + "/weights.bin", std::ios::app) << "extra"; }
  expect_error([&] { LoadedModel::load(d); }, "the plan expects");
  { std::ofstream(d + "/model.json") << "{\"format\": \"something-else\"}"; }
  expect_error([&] { LoadedModel::load(d); }, "tensortune-run-plan-1");
}

}  // namespace
}  // namespace tensortune::graph

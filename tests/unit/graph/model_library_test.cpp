// SPDX-License-Identifier: Apache-2.0
// A model exported to a folder (library + plan + weights) and loaded back computes what the
// in-process executable computes; broken folders are clear errors.
#include "tensortune/graph/model_library.h"

#include "common/temp_dir.h"
#include "graph_builder.h"
#include "tensortune/schedule/serialize.h"
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

TEST(ModelLibrary, WeightsInAKernelsOwnLayoutArePreparedWhenTheModelIsCompiled) {
  // A record whose schedule copies the Gemm's weights at the root: that copy is the kernel's
  // prepare function, run by export_model; the folder stores its result as a weight.
  Graph g = small_model();
  tensortune::test::TempDir dir("tt_model_prepack");
  database::Database db = database::Database::open(dir.file("t.db"));
  driver::Compiler compiler(&db, target::Target::parse("llvm"));
  Partition p = partition(g);
  te::Workload w = kernel_workload(g, p.kernels.at(0));
  std::string weight;
  for (size_t i = 0; i < w.inputs().size(); ++i) {
    if (w.constant_inputs()[i] && w.inputs()[i].shape().size() == 2)
      weight = w.inputs()[i].name();
  }
  ASSERT_FALSE(weight.empty()) << w.canonical_text();
  database::WorkloadInfo info;
  info.key = w.key();
  info.name = w.name();
  info.canonical_text = w.canonical_text();
  info.flop_count = w.flop_count();
  db.put_workload(info);
  database::Record r;
  r.workload_key = w.key();
  r.target = compiler.identity();
  r.schedule =
      schedule::to_json(
          schedule::Schedule{w.key(),
                             {schedule::CacheRead{weight, ir::MemoryScope::Local, {}, {{0, 4}}}}})
          .dump();
  r.knobs = "{}";
  r.repeats = {1e-3};
  r.median_seconds = 1e-3;
  r.timestamp = 1700000000;
  db.add_records({r});

  ExportedModel m = export_model(g, compiler, dir.file("m"));
  ASSERT_EQ(m.functions.at(0).func.prepacked.size(), 1u);
  // inputs, output, then the prepacked weights (stored in weights.bin).
  const PlanCall& call = m.plan.calls.at(0);
  EXPECT_EQ(call.args.size(), p.kernels[0].inputs.size() + 2);
  EXPECT_EQ(call.args.back().kind, PlanArg::Kind::Weight);
  LoadedModel loaded = LoadedModel::load(dir.file("m"));
  std::vector<float> x = testing::wave(64), y(32);
  loaded.run({x.data()}, {y.data()});
  driver::Compiler untuned(nullptr, target::Target::parse("llvm"));
  std::vector<float> want = Executable::build(g, untuned).run({x}).at(0);
  std::vector<float> in_process = Executable::build(g, compiler).run({x}).at(0);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(y[i], want[i], 1e-5) << i;
    EXPECT_NEAR(in_process[i], want[i], 1e-5) << i;
  }
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

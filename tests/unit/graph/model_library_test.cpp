// SPDX-License-Identifier: Apache-2.0
// A model exported to a folder (library + plan + weights) and loaded back, or run through the
// library's C entry point, computes what the in-process executable computes; broken folders are
// clear errors.
#include "tensortune/graph/model_library.h"

#include "common/db_records.h"
#include "common/temp_dir.h"
#include "graph_builder.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "tensortune/target/target.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <iterator>

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

TEST(ModelLibrary, AProfileTimesEveryCallAndComputesWhatARunComputes) {
  Graph g = small_model();
  tensortune::test::TempDir dir("tt_model_profile");
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  export_model(g, compiler, dir.file("m"));
  LoadedModel loaded = LoadedModel::load(dir.file("m"));
  std::vector<float> x = testing::wave(64), y(32), z(32);
  loaded.run({x.data()}, {y.data()});
  const std::vector<double> seconds = loaded.profile({x.data()}, {z.data()}, 3);
  ASSERT_EQ(seconds.size(), loaded.plan().calls.size());
  for (double s : seconds)
    EXPECT_GT(s, 0.0);
  EXPECT_EQ(y, z);
  expect_error([&] { loaded.profile({x.data()}, {z.data()}, 0); }, "runs must be >= 1");
  expect_error([&] { loaded.profile({}, {z.data()}, 1); }, "takes 1 input(s)");
}

/// The bytes of the file at `path`.
std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(ModelLibrary, TheLibrarysCEntryPointRunsTheWholeModel) {
  Graph g = small_model();
  tensortune::test::TempDir dir("tt_model_entry");
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  ExportedModel m = export_model(g, compiler, dir.file("m"));
  void* lib = dlopen(m.library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto size = [&](const char* name) {
    return reinterpret_cast<int64_t (*)()>(dlsym(lib, name))();
  };
  auto count = [&](const char* name) {
    return reinterpret_cast<int32_t (*)()>(dlsym(lib, name))();
  };
  EXPECT_EQ(size("tt_model_arena_bytes"), m.plan.arena_bytes);
  EXPECT_EQ(size("tt_model_weight_bytes"), static_cast<int64_t>(m.plan.weights.size()));
  EXPECT_EQ(count("tt_model_num_inputs"), 1);
  EXPECT_EQ(count("tt_model_num_outputs"), 1);
  EXPECT_EQ(reinterpret_cast<int64_t (*)(int32_t)>(dlsym(lib, "tt_model_input_bytes"))(0), 256);
  EXPECT_EQ(reinterpret_cast<int64_t (*)(int32_t)>(dlsym(lib, "tt_model_output_bytes"))(0), 128);
  auto run = reinterpret_cast<int32_t (*)(void* const*, void* const*, void*, const void*)>(
      dlsym(lib, "tt_model_run"));
  ASSERT_NE(run, nullptr);
  std::vector<uint8_t> weights = file_bytes(m.weights_path);
  EXPECT_TRUE(
      std::equal(weights.begin(), weights.end(), m.plan.weights.begin(), m.plan.weights.end()));
  std::vector<uint8_t> arena(static_cast<size_t>(m.plan.arena_bytes));
  std::vector<float> x = testing::wave(64), y(32);
  void* inputs[] = {x.data()};
  void* outputs[] = {y.data()};
  ASSERT_EQ(run(inputs, outputs, arena.data(), weights.data()), 0);
  std::vector<float> want = Executable::build(g, compiler).run({x}).at(0);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_FLOAT_EQ(y[i], want[i]) << i;
  dlclose(lib);
  // The header declares the entry point and says how to call it.
  std::string header;
  {
    std::ifstream in(m.header_path);
    header.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  EXPECT_NE(header.find("int32_t tt_model_run(void* const* inputs, void* const* outputs, "
                        "void* arena, const void* weights);"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("inputs[0]   float x[4, 16]"), std::string::npos) << header;
  EXPECT_NE(header.find("outputs[0]  float y[2, 16]"), std::string::npos) << header;
  EXPECT_NE(header.find("weights.bin"), std::string::npos) << header;
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
  tensortune::test::register_workload(db, w);
  db.add_records({tensortune::test::record(
      w, compiler.identity(), {schedule::CacheRead{weight, ir::MemoryScope::Local, {}, {{0, 4}}}},
      1e-3)});

  ExportedModel m = export_model(g, compiler, dir.file("m"));
  ASSERT_EQ(m.functions.at(0).func.prepacked.size(), 1u);
  // Weights start on a cache line, as the tuner's measurement buffers do.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m.plan.weights.data()) % 64, 0u);
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
  // A library from another model beside this model's plan and weights.
  export_model(small_model(), compiler, d);
  Builder b;
  b.input("x", {4, 16});
  b.output(b.node("Relu", {"x"}, "y", {4, 16}));
  export_model(b.g, compiler, dir.file("other"));
  std::filesystem::copy_file(dir.file("other") + "/model.so", d + "/model.so",
                             std::filesystem::copy_options::overwrite_existing);
  expect_error([&] { LoadedModel::load(d); }, "do not belong together");
  // A plan whose sizes match but whose calls were edited (one argument fewer): --profile would
  // call the kernel with a buffer array one short.
  export_model(small_model(), compiler, d);
  std::ifstream in(d + "/model.json");
  const support::Json plan = support::Json::parse(
      std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
  support::Json edited = plan;
  edited["calls"].as_array_mut()[0]["args"].as_array_mut().pop_back();
  { std::ofstream(d + "/model.json") << edited.dump(); }
  expect_error([&] { LoadedModel::load(d); }, "their kernel calls differ");
  { std::ofstream(d + "/model.json") << plan.dump(); }
  LoadedModel::load(d);  // the plan as written loads
}

TEST(ModelLibrary, AFloat64ModelIsRefusedWhenCompiledNotWhenRun) {
  tensortune::test::TempDir dir("tt_model_library_f64");
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  Builder b;
  b.input("x", {4, 16});
  b.output(b.node("Relu", {"x"}, "r", {4, 16}));
  Value x = b.g.value("x");
  x.dtype = ir::DataType::float64();
  b.g.set_value(x);
  expect_error([&] { export_model(b.g, compiler, dir.file("f64")); },
               "model input 'x' is float64; compiled models take and return float32 tensors");
  EXPECT_FALSE(std::filesystem::exists(dir.file("f64")));
  x.dtype = ir::DataType::float32();
  b.g.set_value(x);
  Value r = b.g.value("r");
  r.dtype = ir::DataType::float64();
  b.g.set_value(r);
  expect_error([&] { export_model(b.g, compiler, dir.file("f64")); },
               "model output 'r' is float64");
}

TEST(ModelLibrary, AModelWithNoKernelIsAClearErrorAndWritesNothing) {
  tensortune::test::TempDir dir("tt_model_library_empty");
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  Builder constant;  // the output is a weight: nothing is computed from the input
  constant.input("x", {4, 16});
  constant.output(constant.constant("w", {8, 16}));
  expect_error([&] { export_model(constant.g, compiler, dir.file("constant")); },
               "no kernel to build");
  EXPECT_FALSE(std::filesystem::exists(dir.file("constant")));
  Builder passthrough;  // the output is the input
  passthrough.output(passthrough.input("x", {4, 16}));
  expect_error([&] { export_model(passthrough.g, compiler, dir.file("passthrough")); },
               "no kernel to build");
  // Beside a computed output, a constant one is filled from the weights.
  Builder both;
  both.input("x", {4, 16});
  both.output(both.node("Relu", {"x"}, "r", {4, 16}));
  both.output(both.constant("w", {8, 16}));
  export_model(both.g, compiler, dir.file("both"));
  LoadedModel loaded = LoadedModel::load(dir.file("both"));
  std::vector<float> x = testing::wave(64), r(64), w(128);
  loaded.run({x.data()}, {r.data(), w.data()});
  std::vector<std::vector<float>> want = Executable::build(both.g, compiler).run({x});
  ASSERT_EQ(want.size(), 2U);
  EXPECT_EQ(want[0], r);
  EXPECT_EQ(want[1], w);
}

}  // namespace
}  // namespace tensortune::graph

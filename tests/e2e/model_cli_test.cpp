// SPDX-License-Identifier: Apache-2.0
// The model commands as users run them: tune-model a tiny CNN into a database, compile-model it
// with those records, run-model on the committed input, and compare with PyTorch's output; and
// every model mistake (malformed file, unsupported ops, dynamic shapes, wrong inputs) is a clear
// error with exit code 1 that leaves the database intact.
#include "cli_runner.h"
#include "tensortune/graph/npy.h"
#include "tensortune/graph/onnx_import.h"
#include "tensortune/support/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <utility>
#include <vector>

namespace tensortune {
namespace {

using e2e::CliResult;
using e2e::run_cli;
using e2e::temp_path;

std::string model(const std::string& file) {
  return std::string(TT_SOURCE_DIR) + "/tests/models/" + file;
}

TEST(ModelCli, ATimeBudgetAloneShowsTheClockInsteadOfATrialBudget) {
  if (!graph::onnx_available())
    GTEST_SKIP() << "built without ONNX";
  const std::string db = temp_path("budget.db");
  CliResult t = run_cli("tune-model " + model("cnn.onnx") +
                        " --target native --time-budget 3s --batch 4 --confirm 0 --no-shipped "
                        "--db " +
                        db + " --json");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.err.find(" trials, "), std::string::npos) << t.err;  // "[12 trials, 2s of 3s]"
  EXPECT_EQ(t.err.find("/1099511627776"), std::string::npos) << t.err;
  EXPECT_GT(support::Json::parse(t.out).at("trials").as_int(), 0);
}

TEST(ModelCli, TuneCompileAndRunAModel) {
  if (!graph::onnx_available())
    GTEST_SKIP() << "built without ONNX";
  std::string db = temp_path("model.db");
  std::string dir = temp_path("cnn_model");
  std::string out = temp_path("cnn_out");
  CliResult t = run_cli("tune-model " + model("cnn.onnx") +
                        " --target native --trials 16 --batch 4 --db " + db + " --json");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  support::Json tj = support::Json::parse(t.out);
  EXPECT_EQ(tj.at("tasks").size(), 8u);
  EXPECT_GT(tj.at("estimated_seconds").as_double(), 0.0);
  EXPECT_NE(t.err.find("model estimate"), std::string::npos) << t.err;
  // compile-model only reads the database: a file in rollback-journal mode (as the shipped logs
  // are) is left as it was, byte for byte, with no WAL beside it.
  ASSERT_EQ(run_cli("db vacuum --db " + db).exit_code, 0);
  auto bytes = [](const std::string& path) {
    std::stringstream text;
    text << std::ifstream(path, std::ios::binary).rdbuf();
    return text.str();
  };
  const std::string stored = bytes(db);
  CliResult c = run_cli("compile-model " + model("cnn.onnx") + " --target native --db " + db +
                        " --out " + dir + " --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_TRUE(bytes(db) == stored) << "compile-model changed " << db;
  EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
  support::Json cj = support::Json::parse(c.out);
  EXPECT_EQ(cj.at("kernels").as_int(), 8);
  EXPECT_LT(cj.at("untuned").size(), 8u);  // the tuned tasks come from records
  // Any untuned kernel is named in the one summary warning stderr gave too.
  EXPECT_EQ(cj.at("warnings").size(), cj.at("untuned").size() > 0 ? 1u : 0u) << c.out;
  EXPECT_LT(cj.at("arena_bytes").as_int(), cj.at("activation_bytes").as_int());
  // model.json carries each kernel's provenance, the same as compile-model --json says.
  std::stringstream plan_text;
  plan_text << std::ifstream(dir + "/model.json").rdbuf();
  const support::Json plan = support::Json::parse(plan_text.str());
  const support::Json::Array& kernels = plan.at("kernels").as_array();
  const support::Json::Array& functions = cj.at("functions").as_array();
  ASSERT_EQ(kernels.size(), functions.size());
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (const char* key : {"name", "source", "provenance", "record_id"})
      EXPECT_EQ(kernels[k].at(key).dump(), functions[k].at(key).dump()) << key;
    EXPECT_FALSE(kernels[k].at("provenance").as_string().empty());
  }
  CliResult r = run_cli("run-model " + dir + " --input x=" + model("cnn.input.0.npy") +
                        " --output-dir " + out + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(support::Json::parse(r.out).at("seconds").as_double(), 0.0);
  std::vector<float> got = graph::read_npy(out + "/y.npy").to_floats();
  std::vector<float> want = graph::read_npy(model("cnn.output.0.npy")).to_floats();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-4) << i;
  // Random inputs when none are given.
  EXPECT_EQ(run_cli("run-model " + dir).exit_code, 0);
  // A profile names every call once, in the JSON and in the table.
  // The folder may come anywhere among the options, as in the other commands.
  CliResult prof = run_cli("run-model --profile --repeat 2 " + dir + " --json");
  ASSERT_EQ(prof.exit_code, 0) << prof.err;
  const support::Json calls = support::Json::parse(prof.out).at("profile");
  ASSERT_EQ(static_cast<int64_t>(calls.size()), cj.at("calls").as_int());
  std::map<std::string, std::string> function_of;  // workload name -> its function
  for (const support::Json& call : calls.as_array()) {
    EXPECT_NE(call.at("workload").as_string().find("_float32"), std::string::npos);  // full name
    EXPECT_GT(call.at("seconds").as_double(), 0.0);
    EXPECT_GT(call.at("gflops").as_double(), 0.0);
    EXPECT_FALSE(call.at("schedule").as_string().empty());
    // One name, one kernel: the 3->8 and 8->8 convolutions no longer share a name.
    const std::string function = call.at("function").as_string();
    const auto [it, fresh] = function_of.emplace(call.at("workload").as_string(), function);
    EXPECT_EQ(it->second, function) << it->first << " names two kernels";
  }
  CliResult table = run_cli("run-model " + dir + " --profile --repeat 2");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("sum of the " + std::to_string(calls.size()) + " calls"),
            std::string::npos)
      << table.out;
}

TEST(ModelCli, WithWinogradBothFormsOfA3x3ConvAreTunedAndTheModelStillMatches) {
  if (!graph::onnx_available())
    GTEST_SKIP() << "built without ONNX";
  std::string db = temp_path("winograd.db");
  std::string dir = temp_path("cnn_winograd");
  std::string out = temp_path("cnn_winograd_out");
  CliResult t = run_cli("tune-model " + model("cnn.onnx") +
                        " --target native --winograd --trials 48 --batch 4 --db " + db + " --json");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const support::Json tasks = support::Json::parse(t.out).at("tasks");
  EXPECT_GT(tasks.size(), 8u);  // the 8 kernels, and the Winograd forms of the 3x3 convs
  int64_t winograd_trials = 0;
  for (const support::Json& task : tasks.as_array()) {
    if (task.at("workload").as_string().find("_winograd") != std::string::npos)
      winograd_trials += task.at("trials").as_int();
  }
  EXPECT_GT(winograd_trials, 0) << t.out;
  // compile-model builds the faster form of each layer; either way the model computes the same.
  ASSERT_EQ(run_cli("compile-model " + model("cnn.onnx") + " --target native --db " + db +
                    " --out " + dir)
                .exit_code,
            0);
  CliResult r = run_cli("run-model " + dir + " --input x=" + model("cnn.input.0.npy") +
                        " --output-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<float> got = graph::read_npy(out + "/y.npy").to_floats();
  std::vector<float> want = graph::read_npy(model("cnn.output.0.npy")).to_floats();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-4) << i;
}

TEST(ModelCli, TrainModelRebuildsAModelsKernelsOnlyFromTheModel) {
  if (!graph::onnx_available())
    GTEST_SKIP() << "built without ONNX";
  const std::string db = temp_path("kernels.db");
  const std::string out = temp_path("kernels_model.json");
  ASSERT_EQ(run_cli("tune-model " + model("cnn.onnx") +
                    " --target native --trials 24 --batch 4 --confirm 0 --no-shipped "
                    "--scheduler round-robin --db " +
                    db)
                .exit_code,
            0);
  // A kernel has no workload spec: without its model, none of the records can be used.
  CliResult bare = run_cli("train-model --db " + db + " --out " + out);
  EXPECT_EQ(bare.exit_code, 1);
  EXPECT_NE(bare.err.find("without a spec left out"), std::string::npos) << bare.err;
  EXPECT_NE(bare.err.find("--model"), std::string::npos) << bare.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  CliResult trained = run_cli("train-model --db " + db + " --model " + model("cnn.onnx") +
                              " --out " + out + " --json");
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  const support::Json j = support::Json::parse(trained.out);
  EXPECT_EQ(j.at("unknown_workloads").as_int(), 0);
  EXPECT_GE(j.at("workloads").as_int(), 2);
  EXPECT_GT(j.at("samples").as_int(), j.at("workloads").as_int());
  // The model it wrote ranks zero-shot schedules.
  CliResult c =
      run_cli("compile-model " + model("cnn.onnx") + " --target native --no-shipped " +
              "--zero-shot-model " + out + " --out " + temp_path("kernels_out") + " --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const support::Json built = support::Json::parse(c.out);
  for (const support::Json& f : built.at("functions").as_array()) {
    if (f.at("source").as_string() == "zero-shot") {
      EXPECT_EQ(f.at("provenance").as_string(), "zero-shot (cost model)");
    }
  }
  EXPECT_EQ(
      run_cli("train-model --db " + db + " --model " + temp_path("absent.onnx") + " --out " + out)
          .exit_code,
      1);
}

TEST(ModelCli, ModelMistakesAreClearErrors) {
  if (!graph::onnx_available())
    GTEST_SKIP() << "built without ONNX";
  std::string dir = temp_path("bad_model");
  struct Case {
    std::string args, words;
  };
  const std::string compile = " --target native --out " + dir;
  const std::string tune = " --target native --trials 4 --db " + temp_path("x.db");
  std::vector<Case> cases = {
      {"compile-model " + model("truncated.onnx") + compile, "not an ONNX model"},
      {"compile-model " + model("not_onnx.onnx") + compile, "not an ONNX model"},
      {"compile-model " + model("unsupported.onnx") + compile, "(TopK)"},
      {"compile-model " + model("unsupported.onnx") + compile, "(Hardmax)"},
      {"compile-model " + model("dynamic.onnx") + compile, "dynamic"},
      {"compile-model " + model("missing.onnx") + compile, "missing.onnx"},
      {"compile-model " + model("mlp.onnx") + compile + " --db " + temp_path("none.db"),
       "does not exist"},
      {"tune-model " + model("unsupported.onnx") + tune, "unsupported"},
  };
  for (const Case& c : cases) {
    CliResult r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << c.args << ": " << r.err;
  }
  // A bad target is refused before the model is read (an import can take seconds).
  for (const std::string& command :
       {"compile-model " + model("missing.onnx") + " --out " + dir,
        "tune-model " + model("missing.onnx") + " --trials 4 --db " + temp_path("x.db")}) {
    CliResult r = run_cli(command + " --target 'cuda -arch=sm_20'");
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.err;
    EXPECT_NE(r.err.find("expects 'sm_XY' with XY >= 75"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("missing.onnx"), std::string::npos) << r.err;
  }
  ASSERT_EQ(
      run_cli("compile-model " + model("mlp.onnx") + " --target native --out " + dir).exit_code, 0);
  CliResult wrong = run_cli("run-model " + dir + " --input x=" + model("cnn.input.0.npy"));
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("has shape [2,64]"), std::string::npos) << wrong.err;
  CliResult unknown = run_cli("run-model " + dir + " --input nope=" + model("mlp.input.0.npy"));
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no input 'nope'"), std::string::npos) << unknown.err;
  EXPECT_EQ(run_cli("run-model " + temp_path("nothing")).exit_code, 1);
  // Inputs that never end or are far larger than the tensor: refused before they are read (they
  // used to be read until std::bad_alloc, exit 70).
  const std::string fifo = temp_path("fifo.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string big = temp_path("big.npy");
  std::ofstream(big) << std::string(size_t{3} << 20, 'x');
  for (const auto& [file, words] : std::vector<std::pair<std::string, std::string>>{
           {"/dev/zero", "is a device, not a regular file"},
           {fifo, "is a FIFO, not a regular file"},
           {big, "more than the limit of"}}) {
    CliResult r = run_cli("run-model " + dir + " --input x=" + file);
    EXPECT_EQ(r.exit_code, 1) << file << ": " << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << file << ": " << r.err;
  }
  CliResult zero_model = run_cli("compile-model /dev/zero" + compile);
  EXPECT_EQ(zero_model.exit_code, 1) << zero_model.err;
  EXPECT_NE(zero_model.err.find("is a device"), std::string::npos) << zero_model.err;
  EXPECT_EQ(run_cli("compile-model --target native --out " + dir).exit_code, 2);
}

// A CUDA target builds a GPU model folder (gpu_model_test checks its kernels under emulation);
// run-model runs it on a device, or says clearly why it cannot without one.
TEST(ModelCli, ACudaTargetBuildsAGpuModelThatRunModelRunsOrRefusesClearly) {
  const std::string gpu_dir = temp_path("gpu_model");
  CliResult gpu = run_cli("compile-model " + model("mlp.onnx") +
                          " --target 'cuda -arch=sm_80' --json --out " + gpu_dir);
  ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
  const support::Json out = support::Json::parse(gpu.out);
  EXPECT_EQ(out.at("device").as_string(), "cuda");
  EXPECT_GE(out.at("launches").as_int(), out.at("calls").as_int());
  for (const char* file : {"libmodel.so", "model.h", "model.json", "weights.bin"})
    EXPECT_TRUE(std::filesystem::exists(gpu_dir + "/" + file)) << file;
  EXPECT_TRUE(std::filesystem::exists(gpu_dir + "/kernels/kernel_0.cu"));
  // No database: every kernel is a zero-shot pick, ranked by the GPU prior.
  for (const support::Json& f : out.at("functions").as_array())
    EXPECT_EQ(f.at("provenance").as_string(), "zero-shot (GPU sketch prior)") << gpu.out;
  CliResult run = run_cli("run-model " + gpu_dir);
  if (run.exit_code == 0) {
    EXPECT_NE(run.out.find("CUDA events"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("launches: "), std::string::npos) << run.out;
    // Forced to one CUDA graph, the model says so.
    CliResult graph = run_cli("run-model " + gpu_dir + " --cuda-graph on --json");
    ASSERT_EQ(graph.exit_code, 0) << graph.err;
    EXPECT_TRUE(support::Json::parse(graph.out).at("gpu").at("cuda_graph").as_bool()) << graph.out;
  } else {
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find("is a model for a CUDA device and cannot run here"), std::string::npos)
        << run.err;
  }
  std::filesystem::remove_all(gpu_dir);
  // --cuda-graph is for GPU models, and takes on, off or auto.
  const std::string cpu_dir = temp_path("cpu_model");
  ASSERT_EQ(
      run_cli("compile-model " + model("mlp.onnx") + " --target native --out " + cpu_dir).exit_code,
      0);
  CliResult cpu = run_cli("run-model " + cpu_dir + " --cuda-graph on");
  EXPECT_EQ(cpu.exit_code, 1);
  EXPECT_NE(cpu.err.find("--cuda-graph is for a model compiled for a GPU"), std::string::npos)
      << cpu.err;
  EXPECT_EQ(run_cli("run-model " + cpu_dir + " --cuda-graph sometimes").exit_code, 2);
}

}  // namespace
}  // namespace tensortune

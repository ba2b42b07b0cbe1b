// SPDX-License-Identifier: Apache-2.0
// A compiled model run from C without tensortune: run_model (a C program linking only libc and
// libdl) dlopens DIR/model.so, reads weights.bin and calls tt_model_run; and a C program written
// as model.h's usage comment says, compiled against model.h and linked with model.so. Both give
// what the in-process Executable and PyTorch give.
#include "cli_runner.h"
#include "tensortune/driver/compile.h"
#include "tensortune/graph/executor.h"
#include "tensortune/graph/model_library.h"
#include "tensortune/graph/npy.h"
#include "tensortune/graph/onnx_import.h"
#include "tensortune/graph/passes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/wait.h>

namespace tensortune {
namespace {

using e2e::read_text;
using e2e::temp_path;
using e2e::write_text;

std::string model_file(const std::string& file) {
  return std::string(TT_SOURCE_DIR) + "/tests/models/" + file;
}

std::string raw_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

std::vector<float> floats_of(const std::string& bytes) {
  std::vector<float> v(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(v.size() * sizeof(float)),
            reinterpret_cast<char*>(v.data()));
  return v;
}

/// Exit status of a shell command.
int shell(const std::string& command) {
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// `model`.onnx imported and optimized as compile-model does it, with its committed input and
/// PyTorch's output.
struct Model {
  graph::Graph graph;
  std::vector<float> input, expected;
};

Model load(const std::string& name) {
  Model m;
  m.graph = graph::import_onnx(model_file(name + ".onnx"));
  graph::optimize(m.graph);
  m.input = graph::read_npy(model_file(name + ".input.0.npy")).to_floats();
  m.expected = graph::read_npy(model_file(name + ".output.0.npy")).to_floats();
  return m;
}

void expect_outputs(const std::vector<float>& got,
                    const std::vector<float>& in_process,
                    const std::vector<float>& pytorch,
                    const std::string& what) {
  ASSERT_EQ(got.size(), in_process.size()) << what;
  ASSERT_EQ(got.size(), pytorch.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], in_process[i], 1e-5 * (1 + std::fabs(in_process[i]))) << what << " " << i;
    EXPECT_NEAR(got[i], pytorch[i], 1e-4) << what << " " << i;
  }
}

TEST(ModelEntryPoint, ACProgramRunsEachModelLikeTheExecutable) {
  if (!graph::onnx_available())
    GTEST_SKIP() << "built without ONNX";
  for (const char* name : {"mlp", "cnn", "encoder"}) {
    Model m = load(name);
    driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
    std::string dir = temp_path(std::string(name) + "_entry");
    graph::ExportedModel exported = graph::export_model(m.graph, compiler, dir);
    std::string in = dir + "/x.raw";
    std::string out = dir + "/y.raw";
    write_text(in, raw_bytes(m.input));
    // An empty environment: the library needs nothing from tensortune's.
    ASSERT_EQ(shell("env -i '" + std::string(TT_RUN_MODEL_PATH) + "' '" + dir + "' '" + in + "' '" +
                    out + "'"),
              0)
        << name;
    std::vector<float> in_process = graph::Executable::build(m.graph, compiler).run({m.input})[0];
    expect_outputs(floats_of(read_text(out)), in_process, m.expected, name);
    // Wrong argument counts are refused by the program, before anything runs.
    EXPECT_EQ(
        shell("'" + std::string(TT_RUN_MODEL_PATH) + "' '" + dir + "' '" + in + "' 2> /dev/null"),
        2);
    EXPECT_FALSE(exported.plan.calls.empty());
    std::filesystem::remove_all(dir);
  }
}

/// A C user's program, as model.h's usage comment says: weights.bin in an aligned buffer of
/// tt_model_weight_bytes(), an arena of tt_model_arena_bytes(), then tt_model_run.
const char* kUserProgram = R"(#include "model.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  void *weights, *arena, *x, *y;
  if (argc != 4 || tt_model_num_inputs() != 1 || tt_model_num_outputs() != 1) return 2;
  if (posix_memalign(&weights, 64, (size_t)tt_model_weight_bytes()) != 0) return 3;
  FILE* f = fopen(argv[1], "rb");
  if (f == NULL || fread(weights, 1, (size_t)tt_model_weight_bytes(), f) !=
                       (size_t)tt_model_weight_bytes()) return 3;
  fclose(f);
  if (posix_memalign(&arena, 64, (size_t)tt_model_arena_bytes()) != 0) return 3;
  x = malloc((size_t)tt_model_input_bytes(0));
  y = malloc((size_t)tt_model_output_bytes(0));
  f = fopen(argv[2], "rb");
  if (f == NULL || fread(x, 1, (size_t)tt_model_input_bytes(0), f) !=
                       (size_t)tt_model_input_bytes(0)) return 3;
  fclose(f);
  void* inputs[] = {x};
  void* outputs[] = {y};
  int32_t status = tt_model_run(inputs, outputs, arena, weights);
  if (status != 0) return 1;
  f = fopen(argv[3], "wb");
  fwrite(y, 1, (size_t)tt_model_output_bytes(0), f);
  fclose(f);
  return 0;
}
)";

TEST(ModelEntryPoint, AProgramBuiltAgainstModelHRunsTheModel) {
  if (!graph::onnx_available())
    GTEST_SKIP() << "built without ONNX";
  if (shell("cc --version > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "no system C compiler";
  Model m = load("cnn");
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  std::string dir = temp_path("cnn_header");
  graph::ExportedModel exported = graph::export_model(m.graph, compiler, dir);
  std::string header = read_text(exported.header_path);
  EXPECT_NE(header.find("int32_t tt_model_run(void* const* inputs, void* const* outputs, void* "
                        "arena, const void* weights);"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("inputs[0]   float x[1, 3, 16, 16]  (float32, 768 elements)"),
            std::string::npos)
      << header;
  write_text(dir + "/user.c", kUserProgram);
  std::string build = "cc -std=gnu11 -Wall -Wextra -Werror -I '" + dir + "' -o '" + dir +
                      "/user' '" + dir + "/user.c' '" + dir + "/model.so' -Wl,-rpath,'" + dir + "'";
  ASSERT_EQ(shell(build), 0) << build;
  write_text(dir + "/x.raw", raw_bytes(m.input));
  ASSERT_EQ(shell("env -i '" + dir + "/user' '" + exported.weights_path + "' '" + dir +
                  "/x.raw' '" + dir + "/y.raw'"),
            0);
  std::vector<float> in_process = graph::Executable::build(m.graph, compiler).run({m.input})[0];
  expect_outputs(floats_of(read_text(dir + "/y.raw")), in_process, m.expected, "cnn");
  std::filesystem::remove_all(dir);
}

/// The same user's program for a model compiled for a CUDA device, as its model.h says: open
/// with the weights (the error text when that fails), run on host buffers, close.
const char* kGpuUserProgram = R"(#include "model.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  char error[512];
  if (argc != 4 || tt_model_num_inputs() != 1 || tt_model_num_outputs() != 1) return 2;
  void* weights = malloc((size_t)tt_model_weight_bytes());
  void* x = malloc((size_t)tt_model_input_bytes(0));
  void* y = malloc((size_t)tt_model_output_bytes(0));
  FILE* f = fopen(argv[1], "rb");
  if (f == NULL || fread(weights, 1, (size_t)tt_model_weight_bytes(), f) !=
                       (size_t)tt_model_weight_bytes()) return 3;
  fclose(f);
  f = fopen(argv[2], "rb");
  if (f == NULL || fread(x, 1, (size_t)tt_model_input_bytes(0), f) !=
                       (size_t)tt_model_input_bytes(0)) return 3;
  fclose(f);
  void* m = tt_model_cuda_open(weights, 0, error, (int64_t)sizeof error);
  if (m == NULL) {
    fprintf(stderr, "open: %s\n", error);
    return 1;
  }
  const void* inputs[] = {x};
  void* outputs[] = {y};
  if (tt_model_cuda_run(m, inputs, outputs) != 0) {
    fprintf(stderr, "run: %s\n", tt_model_cuda_error(m));
    return 1;
  }
  tt_model_cuda_close(m);
  f = fopen(argv[3], "wb");
  fwrite(y, 1, (size_t)tt_model_output_bytes(0), f);
  fclose(f);
  return 0;
}
)";

// A C program compiled against a GPU model's model.h and linked with its libmodel.so: without a
// device it reports why it cannot open the model; with one it computes PyTorch's outputs.
TEST(ModelEntryPoint, AProgramBuiltAgainstAGpuModelHOpensItOrSaysWhyNot) {
  if (!graph::onnx_available())
    GTEST_SKIP() << "built without ONNX";
  if (shell("cc --version > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "no system C compiler";
  Model m = load("cnn");
  driver::Compiler compiler(nullptr, target::Target::parse("cuda -arch=sm_90"));
  std::string dir = temp_path("cnn_gpu_header");
  graph::ExportedModel exported = graph::export_model(m.graph, compiler, dir);
  write_text(dir + "/user.c", kGpuUserProgram);
  std::string build = "cc -std=gnu11 -Wall -Wextra -Werror -I '" + dir + "' -o '" + dir +
                      "/user' '" + dir + "/user.c' '" + dir + "/libmodel.so' -Wl,-rpath,'" + dir +
                      "' 2> '" + dir + "/build.log'";
  ASSERT_EQ(shell(build), 0) << read_text(dir + "/build.log");
  write_text(dir + "/x.raw", raw_bytes(m.input));
  const int rc = shell("'" + dir + "/user' '" + exported.weights_path + "' '" + dir + "/x.raw' '" +
                       dir + "/y.raw' 2> '" + dir + "/run.log'");
  if (rc != 0) {
    EXPECT_EQ(rc, 1);
    const std::string log = read_text(dir + "/run.log");
    EXPECT_EQ(log.rfind("open: ", 0), 0u) << log;
    EXPECT_TRUE(log.find("CUDA") != std::string::npos || log.find("cuda") != std::string::npos)
        << log;
  } else {
    expect_outputs(floats_of(read_text(dir + "/y.raw")), m.expected, m.expected, "cnn on a GPU");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tensortune

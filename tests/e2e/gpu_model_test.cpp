// SPDX-License-Identifier: Apache-2.0
// Whole models compiled for a CUDA target, checked without a GPU: the folder compile-model
// writes, the image libmodel.so embeds (read back through its tt_model_cuda_image), and every
// launch of that image run by the CUDA emulation over host memory laid out as the device's
// (arena, weights, inputs, outputs), compared with the model's reference outputs. With a GPU,
// the same folder runs on the device through LoadedModel.
#include "common/temp_dir.h"
#include "cuda_emulation.h"
#include "tensortune/codegen/model_entry.h"
#include "tensortune/driver/compile.h"
#include "tensortune/graph/model_library.h"
#include "tensortune/graph/npy.h"
#include "tensortune/runtime/cuda_driver.h"
#include "tensortune/runtime/cuda_model.h"
#include "tensortune/search/zero_shot.h"
#include "tensortune/support/error.h"
#include "tensortune/support/file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tensortune {
namespace {

using runtime::CudaModelImage;

std::string model_path(const std::string& file) {
  return std::string(TT_SOURCE_DIR) + "/tests/models/" + file;
}

const char* const kTarget = "cuda -arch=sm_90";

/// compile-model for kTarget with no database; with `zero_shot`, every kernel gets the zero-shot
/// pick (search::ZeroShot, as the CLI wires it: ranked by the GPU sketch prior).
graph::ExportedModel compile_for_gpu(const std::string& model,
                                     const std::string& dir,
                                     bool zero_shot = false) {
  graph::Graph g = graph::load_model(model_path(model + ".onnx"));
  driver::Compiler compiler(nullptr, target::Target::parse(kTarget));
  if (zero_shot) {
    auto picker = std::make_shared<search::ZeroShot>(nullptr);
    compiler.set_zero_shot(
        [picker](const te::Workload& w,
                 const target::Target& t) -> std::optional<driver::ZeroShotChoice> {
          std::optional<search::ZeroShotPick> pick = picker->pick(w, t);
          if (!pick)
            return std::nullopt;
          return driver::ZeroShotChoice{std::move(pick->steps), picker->ranking(t), pick->config};
        });
  }
  return graph::export_model(g, compiler, dir);
}

/// The image libmodel.so of `dir` embeds.
CudaModelImage embedded_image(const std::string& dir) {
  void* library = dlopen((dir + "/libmodel.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr)
    throw std::runtime_error(dlerror());
  using Image = const char* (*)(int64_t*);
  auto get = reinterpret_cast<Image>(dlsym(library, codegen::kModelCudaImage));
  if (get == nullptr) {
    dlclose(library);
    throw std::runtime_error("no tt_model_cuda_image");
  }
  int64_t bytes = 0;
  const char* text = get(&bytes);
  CudaModelImage image = CudaModelImage::parse(std::string(text, static_cast<size_t>(bytes)));
  dlclose(library);
  return image;
}

/// 256-byte aligned host memory, as cuMemAlloc's.
struct DeviceLike {
  explicit DeviceLike(int64_t bytes)
      : data(static_cast<uint8_t*>(std::aligned_alloc(
                 256, static_cast<size_t>((std::max<int64_t>(bytes, 1) + 255) / 256 * 256))),
             std::free) {
    // Poisoned: a kernel reading what no kernel wrote sees NaN (0xFF bytes), not zeros.
    std::memset(data.get(), 0xFF, static_cast<size_t>(std::max<int64_t>(bytes, 1)));
  }
  std::unique_ptr<uint8_t, void (*)(void*)> data;
};

/// Runs every launch of `image` under the emulation; `sources[m]` is module m's CUDA C.
void emulate(const CudaModelImage& image,
             const std::vector<std::string>& sources,
             const std::string& dir,
             const std::string& weights,
             const std::vector<const void*>& inputs,
             const std::vector<void*>& outputs) {
  DeviceLike arena(image.arena_bytes), weight(image.weight_bytes);
  std::memcpy(weight.data.get(), weights.data(), weights.size());
  // One emulation library per module (each module has its own helpers), holding its launches.
  std::vector<std::vector<size_t>> launches_of(image.modules.size());
  for (size_t i = 0; i < image.launches.size(); ++i)
    launches_of[static_cast<size_t>(image.launches[i].module)].push_back(i);
  std::vector<void*> runner(image.launches.size(), nullptr);
  std::vector<void*> libraries;
  for (size_t m = 0; m < image.modules.size(); ++m) {
    std::vector<codegen::emulation::EmulatedLaunch> list;
    for (size_t i : launches_of[m]) {
      const CudaModelImage::Launch& l = image.launches[i];
      list.push_back({l.kernel, l.grid, l.block, l.args.size()});
    }
    std::string error;
    void* library = codegen::emulation::build_emulation(sources[m], list, dir,
                                                        "module" + std::to_string(m), &error);
    ASSERT_NE(library, nullptr) << error;
    libraries.push_back(library);
    for (size_t j = 0; j < launches_of[m].size(); ++j) {
      runner[launches_of[m][j]] = dlsym(library, ("tt_run_" + std::to_string(j)).c_str());
      ASSERT_NE(runner[launches_of[m][j]], nullptr);
    }
  }
  for (size_t i = 0; i < image.launches.size(); ++i) {
    std::vector<void*> args;
    for (const CudaModelImage::Arg& a : image.launches[i].args) {
      switch (a.kind) {
        case CudaModelImage::Arg::Kind::Input:
          args.push_back(const_cast<void*>(inputs[static_cast<size_t>(a.index)]));
          break;
        case CudaModelImage::Arg::Kind::Output:
          args.push_back(outputs[static_cast<size_t>(a.index)]);
          break;
        case CudaModelImage::Arg::Kind::Arena:
          args.push_back(arena.data.get() + a.index);
          break;
        case CudaModelImage::Arg::Kind::Weight:
          args.push_back(weight.data.get() + a.index);
          break;
      }
    }
    reinterpret_cast<void (*)(void**)>(runner[i])(args.data());
  }
  for (size_t m = 0; m < libraries.size(); ++m) {
    auto misaligned = reinterpret_cast<int (*)()>(dlsym(libraries[m], "tt_misaligned_accesses"));
    ASSERT_NE(misaligned, nullptr);
    EXPECT_EQ(misaligned(), 0) << "float2/float4 accesses at misaligned addresses in module " << m;
    dlclose(libraries[m]);
  }
}

class GpuModel : public ::testing::TestWithParam<const char*> {};

/// compile-model for a CUDA target, then every launch of the embedded image under the emulation:
/// the outputs equal the model's reference outputs (PyTorch's, from make_models.py).
void check_folder_image_and_emulated_run(const std::string& name, bool zero_shot) {
  test::TempDir dir("gpu_model_" + name + (zero_shot ? "_zero_shot" : ""));
  const std::string out = dir.file("model");
  graph::ExportedModel m = compile_for_gpu(name, out, zero_shot);
  ASSERT_TRUE(m.gpu);
  for (const driver::Compiled& f : m.functions) {
    // Every kernel has a zero-shot pick when asked for (some configuration of its space lowers).
    EXPECT_EQ(f.lookup.source, zero_shot ? driver::Source::ZeroShot : driver::Source::Default)
        << f.func.name << ": " << f.lookup.describe();
  }
  // The folder: library, header, plan, weights, one .cu per kernel (and .ptx with NVRTC).
  for (const char* file : {"libmodel.so", "model.so", "model.h", "model.json", "weights.bin"})
    EXPECT_TRUE(std::filesystem::exists(out + "/" + file)) << file;
  for (const driver::Compiled& f : m.functions) {
    EXPECT_TRUE(std::filesystem::exists(out + "/kernels/" + f.func.name + ".cu")) << f.func.name;
    EXPECT_EQ(std::filesystem::exists(out + "/kernels/" + f.func.name + ".ptx"),
              m.no_ptx_reason.empty());
    // NVRTC also writes SASS for the target's architecture, which the image carries too.
    EXPECT_EQ(std::filesystem::exists(out + "/kernels/" + f.func.name + ".cubin"),
              m.no_ptx_reason.empty());
  }
  const support::Json plan = support::Json::parse(
      support::read_regular_file(out + "/model.json", int64_t{1} << 26, "plan"));
  EXPECT_EQ(plan.at("device").as_string(), "cuda");
  EXPECT_EQ(plan.at("target").as_string(), kTarget);
  // ptxas's report on every kernel of every cubin. The accumulator tiles stay in registers, as
  // shrink_local_buffers intends: the stack holds at most a few bytes besides what ptxas spills
  // (a tile of 4 floats or more left in local memory would take 16). ptxas may spill a little
  // on its own (a zero-shot superres conv here: 72 registers, 4 bytes).
  size_t reported = 0;
  for (const support::Json& r : plan.at("kernel_resources").as_array()) {
    SCOPED_TRACE(r.dump());
    EXPECT_GT(r.at("registers").as_int(), 0);
    EXPECT_LE(r.at("registers").as_int(), 255);
    // Without ptxas's report (a compile the CUDA compute cache served) the spills are unknown.
    const int64_t spills = r.contains("spill_store_bytes") ? r.at("spill_store_bytes").as_int() : 0;
    EXPECT_GE(spills, 0);
    EXPECT_LT(r.at("stack_bytes").as_int(), spills + 16);
    ++reported;
  }
  size_t kernels = 0;
  for (const CudaModelImage::Module& module : m.image.modules)
    kernels += module.cubin.empty() ? 0 : 1;
  EXPECT_GE(reported, kernels);

  // The image in the library is the one export_model planned.
  CudaModelImage image = embedded_image(out);
  EXPECT_EQ(image.serialize(), m.image.serialize());
  EXPECT_EQ(image.num_calls, static_cast<int32_t>(m.plan.calls.size()));
  EXPECT_GE(image.launches.size(), m.plan.calls.size());
  EXPECT_EQ(image.arena_bytes, m.plan.arena_bytes);
  ASSERT_EQ(image.modules.size(), m.functions.size());
  for (const CudaModelImage::Module& module : image.modules) {
    EXPECT_EQ(module.is_ptx, m.no_ptx_reason.empty());
    EXPECT_EQ(module.cubin_arch, module.cubin.empty() ? "" : "sm_90");
  }

  std::vector<std::string> sources;
  for (const driver::Compiled& f : m.functions) {
    sources.push_back(support::read_regular_file(out + "/kernels/" + f.func.name + ".cu",
                                                 int64_t{1} << 26, "kernel"));
  }
  graph::NpyArray input = graph::read_npy(model_path(name + ".input.0.npy"));
  graph::NpyArray expected = graph::read_npy(model_path(name + ".output.0.npy"));
  std::vector<float> in = input.to_floats(), want = expected.to_floats();
  ASSERT_EQ(m.plan.inputs.size(), 1u);
  ASSERT_EQ(m.plan.outputs.size(), 1u);
  ASSERT_EQ(static_cast<int64_t>(in.size()), m.plan.inputs[0].numel());
  std::vector<float> got(static_cast<size_t>(m.plan.outputs[0].numel()), std::nanf(""));
  const std::string weights = support::read_regular_file(out + "/weights.bin", INT64_MAX, "w");
  emulate(image, sources, dir.path(), weights, {in.data()}, {got.data()});
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(got[i] - want[i]) / (1.0 + std::fabs(want[i]));
    worst = std::max(worst, err);
    ASSERT_LE(err, 1e-4) << name << " output[" << i << "]: " << got[i] << " vs " << want[i];
  }
  ::testing::Test::RecordProperty("worst_error", std::to_string(worst));
}

TEST_P(GpuModel, TheFolderItsImageAndItsEmulatedRunMatchTheReference) {
  if (!codegen::emulation::host_compiler_available())
    GTEST_SKIP() << "no host C++ compiler 'c++' on PATH";
  check_folder_image_and_emulated_run(GetParam(), false);
}

// The same with every kernel's zero-shot pick, as compile-model builds an untuned model.
TEST_P(GpuModel, ZeroShotKernelsMatchTheReferenceToo) {
  if (!codegen::emulation::host_compiler_available())
    GTEST_SKIP() << "no host C++ compiler 'c++' on PATH";
  check_folder_image_and_emulated_run(GetParam(), true);
}

INSTANTIATE_TEST_SUITE_P(Models,
                         GpuModel,
                         ::testing::Values("cnn", "mlp", "ln_decomposed", "encoder", "superres"));

// Without a device, loading the folder is a clear refusal naming why; with one, the model runs
// on it and matches the reference.
TEST(GpuModelLoad, RunsOnADeviceOrRefusesCleanlyWithoutOne) {
  test::TempDir dir("gpu_model_load");
  const std::string out = dir.file("model");
  graph::ExportedModel m = compile_for_gpu("cnn", out);
  const std::string why = runtime::cuda_unavailable_reason();
  if (!why.empty()) {
    try {
      graph::LoadedModel::load(out);
      FAIL() << "a GPU model loaded without a device";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("cannot run here"), std::string::npos) << e.what();
    }
    return;
  }
  if (!m.no_ptx_reason.empty())
    GTEST_SKIP() << "a device but no NVRTC: " << m.no_ptx_reason;
  graph::LoadedModel model = graph::LoadedModel::load(out);
  ASSERT_TRUE(model.is_gpu());
  std::vector<float> in = graph::read_npy(model_path("cnn.input.0.npy")).to_floats();
  std::vector<float> want = graph::read_npy(model_path("cnn.output.0.npy")).to_floats();
  std::vector<float> got(want.size());
  model.run({in.data()}, {got.data()});
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << i;
  graph::LoadedModel::GpuTimes t = model.gpu_times(3);
  EXPECT_GT(t.device_resident, 0);
  EXPECT_GT(t.device_bytes, 0);
  EXPECT_GE(t.device_in_use, t.device_bytes);  // the allocations, and the context beside them
  EXPECT_EQ(t.calls.size(), model.plan().calls.size());
  // Opening chose between one CUDA graph and the launches one by one by timing both.
  ASSERT_GE(t.cuda_graph, 0);
  EXPECT_GT(t.each_seconds, 0);
  EXPECT_GT(t.graph_seconds, 0);
  EXPECT_EQ(t.cuda_graph == 1, t.graph_seconds < t.each_seconds);
  // Either way, forced, computes the same outputs, and gpu_times reports what runs.
  for (int mode : {1, 0, 2}) {
    SCOPED_TRACE(mode);
    model.set_gpu_launches(mode);
    std::fill(got.begin(), got.end(), std::nanf(""));
    model.run({in.data()}, {got.data()});
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << i;
    const graph::LoadedModel::GpuTimes again = model.gpu_times(3);
    if (mode < 2) {
      EXPECT_EQ(again.cuda_graph, mode);
    }
    EXPECT_GT(again.device_resident, 0);
  }
  EXPECT_THROW(model.set_gpu_launches(3), UserError);
}

// The image's text form round-trips, and a damaged image is refused naming what is wrong.
TEST(CudaModelImage, RoundTripsAndRefusesDamage) {
  CudaModelImage image;
  image.arena_bytes = 512;
  image.weight_bytes = 64;
  image.input_bytes = {32};
  image.output_bytes = {16};
  image.num_calls = 1;
  image.modules.push_back({"kernel_0", true, "// ptx\nline two", "", ""});
  // A cubin is binary: NULs, newlines and bytes past 127 survive the text form.
  image.modules.push_back({"kernel_1", true, "// ptx 1",
                           std::string("\x7f"
                                       "ELF\0\n\xff end",
                                       11),
                           "sm_90"});
  CudaModelImage::Launch l;
  l.kernel = "kernel_0_kernel0";
  l.grid = {2, 1, 1};
  l.block = {64, 1, 1};
  l.args = {{CudaModelImage::Arg::Kind::Input, 0, 32},
            {CudaModelImage::Arg::Kind::Weight, 0, 64},
            {CudaModelImage::Arg::Kind::Arena, 256, 256},
            {CudaModelImage::Arg::Kind::Output, 0, 16}};
  image.launches.push_back(l);
  const std::string text = image.serialize();
  CudaModelImage back = CudaModelImage::parse(text);
  EXPECT_EQ(back.serialize(), text);
  EXPECT_EQ(back.modules.at(0).text, "// ptx\nline two");
  EXPECT_EQ(back.modules.at(1).cubin, image.modules[1].cubin);
  EXPECT_EQ(back.modules.at(1).cubin_arch, "sm_90");

  auto refused = [](const std::string& t, const std::string& words) {
    try {
      CudaModelImage::parse(t);
      return std::string("accepted");
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      return what.find(words) != std::string::npos ? std::string() : what;
    }
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  EXPECT_EQ(refused("not an image", "not a model image"), "");
  EXPECT_EQ(refused(replaced("a256:256", "a384:256"), "passes a buffer of 256 bytes"), "");
  EXPECT_EQ(refused(replaced("a256:256", "a260:16"), "not 16-byte aligned"), "");
  EXPECT_EQ(refused(replaced("o0:16", "o1:16"), "passes o1"), "");
  EXPECT_EQ(refused(replaced("ptx 15", "ptx 9999"), "claims 9999 bytes"), "");
  EXPECT_EQ(refused(replaced("ptx 15", "ptx 14"), "does not end with a new line"), "");
  EXPECT_EQ(refused(replaced("launch 0 0", "launch 0 3"), "names module 3"), "");
  EXPECT_EQ(refused(replaced("tensortune-cuda-model 1", "tensortune-cuda-model 2"), "version 2"),
            "");
  EXPECT_EQ(refused(text.substr(0, text.size() - 4), "missing"), "");
  EXPECT_EQ(refused(replaced("arena 512", "arena 9999999999999999999"), "64-bit integer"), "");
  EXPECT_EQ(refused(replaced("arena 512", "arena -5"), "64-bit integer"), "");
}

// A model whose kernels are CUDA C (compiled where NVRTC was missing) is refused by the runtime
// before it touches a device, with the reason.
TEST(CudaModelImage, CudaCModulesAreRefusedBeforeAnyDeviceIsOpened) {
  CudaModelImage image;
  image.num_calls = 0;
  image.modules.push_back({"kernel_0", false, "extern \"C\" __global__ void k() {}", "", ""});
  try {
    runtime::CudaModel model(image, nullptr, 0);
    FAIL() << "a CUDA C module was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("NVRTC was missing"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tensortune

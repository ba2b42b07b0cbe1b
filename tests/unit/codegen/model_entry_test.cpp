// SPDX-License-Identifier: Apache-2.0
// The model entry point of an exported library: tt_model_run makes the calls it describes over
// the caller's inputs, outputs, arena and weights, the query functions return its sizes, and a
// description that does not fit the library's kernels is a UserError.
#include "tensortune/codegen/model_entry.h"

#include "codegen_test_util.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <unistd.h>

namespace tensortune::codegen {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)
using ir::DataType;
using Kind = EntryArg::Kind;

constexpr int kN = 100;

std::string entry_path(const std::string& stem) {
  return "/tmp/tensortune_entry_" + std::to_string(::getpid()) + "_" + stem + ".so";
}

/// k_mul: out = a * b; k_add: out = a + b (kN floats each); `swapped`: the other way round (a
/// second model whose kernels have the same names).
std::vector<ir::LoweredFunc> kernels(bool swapped = false) {
  std::vector<ir::LoweredFunc> funcs;
  for (const char* name : {"k_mul", "k_add"}) {
    ir::Buffer a = buffer("a", DataType::float32(), kN);
    ir::Buffer b = buffer("b", DataType::float32(), kN);
    ir::Buffer out = buffer("out", DataType::float32(), kN);
    ir::Var i("i");
    ir::Expr value = (std::string(name) == "k_mul") != swapped ? load(a, i) * load(b, i)
                                                               : load(a, i) + load(b, i);
    funcs.push_back(make_func(name, {a, b, out}, 2, loop(i, kN, store(out, value, i))));
  }
  return funcs;
}

/// y0 = x * w + x (the product in the arena), y1 = y0 * w (an output read by a later call).
ModelEntry entry() {
  const int64_t bytes = kN * 4;
  ModelEntry e;
  e.input_bytes = {bytes};
  e.output_bytes = {bytes, bytes};
  e.arena_bytes = 64 + 448;
  e.weight_bytes = 64 + 448;
  e.calls = {{"k_mul", {{Kind::Input, 0}, {Kind::Weight, 64}, {Kind::Arena, 64}}},
             {"k_add", {{Kind::Arena, 64}, {Kind::Input, 0}, {Kind::Output, 0}}},
             {"k_mul", {{Kind::Output, 0}, {Kind::Weight, 64}, {Kind::Output, 1}}}};
  return e;
}

using RunFn = int32_t (*)(void* const*, void* const*, void*, const void*);

template <class F>
F symbol(void* lib, const char* name) {
  void* sym = dlsym(lib, name);
  EXPECT_NE(sym, nullptr) << name;
  return reinterpret_cast<F>(sym);
}

TEST(ModelEntry, RunMakesEveryCallOverTheCallersBuffers) {
  std::string path = entry_path("run");
  export_shared_library(kernels(), host(), path, "", entry());
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  using Size = int64_t (*)();
  using Count = int32_t (*)();
  using SizeOf = int64_t (*)(int32_t);
  auto run = symbol<RunFn>(lib, kModelRun);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(symbol<Size>(lib, kModelArenaBytes)(), 512);
  EXPECT_EQ(symbol<Size>(lib, kModelWeightBytes)(), 512);
  EXPECT_EQ(symbol<Count>(lib, kModelNumInputs)(), 1);
  EXPECT_EQ(symbol<Count>(lib, kModelNumOutputs)(), 2);
  auto input_bytes = symbol<SizeOf>(lib, kModelInputBytes);
  auto output_bytes = symbol<SizeOf>(lib, kModelOutputBytes);
  EXPECT_EQ(input_bytes(0), kN * 4);
  EXPECT_EQ(input_bytes(1), -1);
  EXPECT_EQ(input_bytes(-1), -1);
  EXPECT_EQ(output_bytes(1), kN * 4);
  EXPECT_EQ(output_bytes(2), -1);

  std::vector<float> x = random_floats(kN, 5);
  std::vector<float> y0(kN), y1(kN);
  auto* weights = static_cast<float*>(std::aligned_alloc(64, 512));
  auto* arena = static_cast<float*>(std::aligned_alloc(64, 512));
  std::vector<float> w = random_floats(kN, 6);
  std::copy(w.begin(), w.end(), weights + 16);
  void* inputs[] = {x.data()};
  void* outputs[] = {y0.data(), y1.data()};
  EXPECT_EQ(run(inputs, outputs, arena, weights), 0);
  for (int i = 0; i < kN; ++i) {
    float product = x[i] * w[i];
    EXPECT_EQ(arena[16 + i], product) << i;  // the intermediate, at arena offset 64
    EXPECT_EQ(y0[i], product + x[i]) << i;
    EXPECT_EQ(y1[i], (product + x[i]) * w[i]) << i;
  }
  std::free(weights);
  std::free(arena);
  dlclose(lib);
  std::remove(path.c_str());
}

TEST(ModelEntry, TwoModelsLoadedGloballyEachCallTheirOwnKernels) {
  // Both export k_mul and k_add; with RTLD_GLOBAL the first one's would interpose on the second
  // one's calls unless the library binds its own calls to its own kernels.
  std::string first = entry_path("first");
  std::string second = entry_path("second");
  export_shared_library(kernels(), host(), first, "", entry());
  export_shared_library(kernels(true), host(), second, "", entry());
  void* a = dlopen(first.c_str(), RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(a, nullptr) << dlerror();
  void* b = dlopen(second.c_str(), RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(b, nullptr) << dlerror();
  std::vector<float> x = random_floats(kN, 7);
  std::vector<float> w = random_floats(kN, 8);
  auto* weights = static_cast<float*>(std::aligned_alloc(64, 512));
  auto* arena = static_cast<float*>(std::aligned_alloc(64, 512));
  std::copy(w.begin(), w.end(), weights + 16);
  for (bool swapped : {false, true}) {
    std::vector<float> y0(kN), y1(kN);
    void* inputs[] = {x.data()};
    void* outputs[] = {y0.data(), y1.data()};
    ASSERT_EQ(symbol<RunFn>(swapped ? b : a, kModelRun)(inputs, outputs, arena, weights), 0);
    for (int i = 0; i < kN; ++i) {
      // The second model's k_mul adds and its k_add multiplies.
      const float first_call = swapped ? x[i] + w[i] : x[i] * w[i];
      const float second_call = swapped ? first_call * x[i] : first_call + x[i];
      ASSERT_EQ(y0[i], second_call) << "swapped " << swapped << " at " << i;
    }
  }
  std::free(weights);
  std::free(arena);
  dlclose(b);
  dlclose(a);
  std::remove(first.c_str());
  std::remove(second.c_str());
}

TEST(ModelEntry, AModelWithoutCallsOnlyAnswersItsSizes) {
  std::string path = entry_path("empty");
  ModelEntry e;
  export_shared_library(kernels(), host(), path, "", e);
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto run = symbol<RunFn>(lib, kModelRun);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run(nullptr, nullptr, nullptr, nullptr), 0);
  EXPECT_EQ(symbol<int32_t (*)()>(lib, kModelNumInputs)(), 0);
  EXPECT_EQ(symbol<int64_t (*)(int32_t)>(lib, kModelOutputBytes)(0), -1);
  dlclose(lib);
  std::remove(path.c_str());
}

void expect_rejected(const ModelEntry& e, const std::string& part) {
  std::string path = entry_path("bad");
  try {
    export_shared_library(kernels(), host(), path, "", e);
    FAIL() << "expected an error mentioning '" << part << "'";
  } catch (const UserError& err) {
    EXPECT_NE(std::string(err.what()).find(part), std::string::npos) << err.what();
  }
  std::remove(path.c_str());
}

TEST(ModelEntry, ADescriptionThatDoesNotFitTheKernelsIsAUserError) {
  ModelEntry unknown = entry();
  unknown.calls[1].function = "k_sub";
  expect_rejected(unknown, "call 1 names 'k_sub'");
  ModelEntry arity = entry();
  arity.calls[0].args.pop_back();
  expect_rejected(arity, "passes 2 buffer(s) to 'k_mul', which takes 3");
  ModelEntry input = entry();
  input.calls[2].args[0] = {Kind::Input, 1};
  expect_rejected(input, "call 2 ('k_mul') passes input 1, out of range");
  ModelEntry arena = entry();
  arena.calls[0].args[2] = {Kind::Arena, 512};
  expect_rejected(arena, "arena offset 512");
  ModelEntry overflow = entry();
  overflow.calls[0].args[2] = {Kind::Arena, 128};
  expect_rejected(overflow, "passes a buffer of 400 bytes at arena offset 128, which has 384");
  ModelEntry small_input = entry();
  small_input.input_bytes = {200};
  expect_rejected(small_input, "400 bytes at input 0, which has 200 bytes");
  ModelEntry weight = entry();
  weight.calls[0].args[1] = {Kind::Weight, -64};
  expect_rejected(weight, "weight offset -64");

  std::vector<ir::LoweredFunc> funcs = kernels();
  funcs[1].name = kModelRun;
  ModelEntry e = entry();
  e.calls = {{kModelRun, {{Kind::Input, 0}, {Kind::Input, 0}, {Kind::Output, 0}}}};
  EXPECT_THROW(export_shared_library(funcs, host(), entry_path("clash"), "", e), UserError);
}

}  // namespace
}  // namespace tensortune::codegen

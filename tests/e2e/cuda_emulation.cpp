// SPDX-License-Identifier: Apache-2.0
// The CUDA emulation harness (see cuda_emulation.h).
#include "cuda_emulation.h"

#include "common/temp_dir.h"
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/ir/eval.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/search/search_space.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/support/rng.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace tensortune::codegen::emulation {
namespace {

const char* const kShim = R"(// host emulation of the CUDA C subset tensortune generates
#include <math.h>
#include <pthread.h>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>
struct tt_uint3 { unsigned x, y, z; };
static thread_local tt_uint3 threadIdx;
static tt_uint3 blockIdx;
static pthread_barrier_t tt_barrier;
static void __syncthreads() { pthread_barrier_wait(&tt_barrier); }
static float __int_as_float(int i) { float f; std::memcpy(&f, &i, sizeof f); return f; }
static double __longlong_as_double(long long i) {
  double d;
  std::memcpy(&d, &i, sizeof d);
  return d;
}
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
// float2/float4 whose copies check the alignment a GPU's vector load/store needs: a wrong
// alignment proof in the generated code is counted (tt_misaligned) instead of passing silently.
#include <atomic>
#include <cstdint>
static std::atomic<int> tt_misaligned{0};
static void tt_check_aligned(const void* p, std::uintptr_t n) {
  if (reinterpret_cast<std::uintptr_t>(p) % n != 0) ++tt_misaligned;
}
struct __attribute__((aligned(8))) float2 {
  float x, y;
  float2() = default;
  float2(const float2& o) : x(o.x), y(o.y) { tt_check_aligned(&o, 8); }
  float2& operator=(const float2& o) {
    tt_check_aligned(this, 8);
    tt_check_aligned(&o, 8);
    x = o.x;
    y = o.y;
    return *this;
  }
};
struct __attribute__((aligned(16))) float4 {
  float x, y, z, w;
  float4() = default;
  float4(const float4& o) : x(o.x), y(o.y), z(o.z), w(o.w) { tt_check_aligned(&o, 16); }
  float4& operator=(const float4& o) {
    tt_check_aligned(this, 16);
    tt_check_aligned(&o, 16);
    x = o.x;
    y = o.y;
    z = o.z;
    w = o.w;
    return *this;
  }
};
static float2 make_float2(float x, float y) {
  float2 v;
  v.x = x;
  v.y = y;
  return v;
}
static float4 make_float4(float x, float y, float z, float w) {
  float4 v;
  v.x = x;
  v.y = y;
  v.z = z;
  v.w = w;
  return v;
}
extern "C" int tt_misaligned_accesses() { return tt_misaligned.load(); }
struct tt_any_ptr {
  void* p;
  template <typename T> operator T*() const { return static_cast<T*>(p); }
};
// Warp shuffles: every thread of the block swaps values through one slot per thread between two
// block-wide barriers (generated code shuffles only where every thread of the block does).
static tt_uint3 blockDim;
static unsigned char tt_lanes[1024][8];
template <typename T> static T tt_exchange(T v, unsigned from) {
  const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  std::memcpy(tt_lanes[tid], &v, sizeof v);
  __syncthreads();
  T out;
  std::memcpy(&out, tt_lanes[tid - tid % 32u + from], sizeof out);
  __syncthreads();
  return out;
}
template <typename T> static T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
  const unsigned lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32u;
  return tt_exchange(v, lane % unsigned(width) + delta < unsigned(width) ? lane + delta : lane);
}
template <typename T> static T __shfl_sync(unsigned, T v, int source, int width = 32) {
  const unsigned lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32u;
  return tt_exchange(v, lane - lane % unsigned(width) + unsigned(source % width));
}
static void tt_launch(const unsigned g[3], const unsigned b[3], const std::function<void()>& body) {
  blockDim = {b[0], b[1], b[2]};
  for (unsigned bz = 0; bz < g[2]; ++bz)
    for (unsigned by = 0; by < g[1]; ++by)
      for (unsigned bx = 0; bx < g[0]; ++bx) {
        blockIdx = {bx, by, bz};
        pthread_barrier_init(&tt_barrier, nullptr, b[0] * b[1] * b[2]);
        std::vector<std::thread> threads;
        for (unsigned z = 0; z < b[2]; ++z)
          for (unsigned y = 0; y < b[1]; ++y)
            for (unsigned x = 0; x < b[0]; ++x)
              threads.emplace_back([=, &body] { threadIdx = {x, y, z}; body(); });
        for (std::thread& t : threads) t.join();
        pthread_barrier_destroy(&tt_barrier);
      }
}
)";

/// `extern "C" void tt_run_K(void** buffers)` launching kernel K of `m`.
std::string launchers(const CudaModule& m) {
  std::ostringstream out;
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    const CudaKernel& kernel = m.kernels[k];
    out << "extern \"C\" void tt_run_" << k << "(void** b) {\n"
        << "  const unsigned g[3] = {" << kernel.grid[0] << ", " << kernel.grid[1] << ", "
        << kernel.grid[2] << "};\n"
        << "  const unsigned t[3] = {" << kernel.block[0] << ", " << kernel.block[1] << ", "
        << kernel.block[2] << "};\n"
        << "  tt_launch(g, t, [&] { " << kernel.name << "(";
    for (size_t p = 0; p < kernel.params.size(); ++p) {
      out << (p == 0 ? "" : ", ") << "tt_any_ptr{b[" << kernel.params[p] << "]}";
    }
    out << "); });\n}\n";
  }
  return out.str();
}

/// Compiles `text` into DIR/NAME.so and loads it; null with the reason in `error`.
void* compile_and_load(const std::string& text,
                       const std::string& dir,
                       const std::string& name,
                       std::string* error) {
  const std::string cpp = dir + "/" + name + ".cpp", so = dir + "/" + name + ".so",
                    log = dir + "/" + name + ".log";
  std::ofstream(cpp) << text;
  std::string command =
      "c++ -std=c++17 -O1 -shared -fPIC -pthread -o " + so + " " + cpp + " > " + log + " 2>&1";
  if (std::system(command.c_str()) != 0) {
    std::ifstream in(log);
    std::stringstream out;
    out << in.rdbuf();
    *error = "the host compiler rejected the generated source:\n" + out.str();
    return nullptr;
  }
  void* library = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr)
    *error = dlerror();
  return library;
}

}  // namespace

bool host_compiler_available() {
  return std::system("c++ --version > /dev/null 2>&1") == 0;
}

void* build_emulation(const std::string& source,
                      const std::vector<EmulatedLaunch>& launches,
                      const std::string& dir,
                      const std::string& name,
                      std::string* error) {
  std::ostringstream out;
  for (size_t i = 0; i < launches.size(); ++i) {
    const EmulatedLaunch& l = launches[i];
    out << "extern \"C\" void tt_run_" << i << "(void** b) {\n"
        << "  const unsigned g[3] = {" << l.grid[0] << ", " << l.grid[1] << ", " << l.grid[2]
        << "};\n"
        << "  const unsigned t[3] = {" << l.block[0] << ", " << l.block[1] << ", " << l.block[2]
        << "};\n"
        << "  tt_launch(g, t, [&] { " << l.kernel << "(";
    for (size_t p = 0; p < l.num_args; ++p)
      out << (p == 0 ? "" : ", ") << "tt_any_ptr{b[" << p << "]}";
    out << "); });\n}\n";
  }
  return compile_and_load(kShim + source + out.str(), dir, name, error);
}

void expect_emulation_matches_eval(const std::string& spec,
                                   const std::vector<schedule::Step>& steps) {
  expect_emulation_matches_eval(te::make_workload(spec), steps);
}

/// Lowers `workload` with `steps` for a CUDA target, runs the emulated kernels and ir::eval on
/// the same random inputs, and compares every output.
void expect_emulation_matches_eval(const te::Workload& workload,
                                   const std::vector<schedule::Step>& steps) {
  if (!host_compiler_available()) {
    GTEST_SKIP() << "no host C++ compiler 'c++' on PATH";
  }
  target::Target target = target::Target::parse("cuda -arch=sm_90");
  ir::LoweredFunc f =
      lower::lower(schedule::apply_steps(workload, steps), target, lower::function_name(workload));
  CudaModule m = generate_cuda(f, target);
  test::TempDir dir("cuda_emulation");
  std::string error;
  void* library =
      compile_and_load(std::string(kShim) + m.source + launchers(m), dir.path(), "k", &error);
  ASSERT_NE(library, nullptr) << error << m.source;
  // Float buffers only: inputs random, outputs and scratch poisoned with NaN.
  support::Rng rng(11);
  std::vector<std::vector<float>> data, expected;
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    ASSERT_EQ(m.buffers[i].dtype(), ir::DataType::float32()) << m.buffers[i].name();
    std::vector<float> v(static_cast<size_t>(m.buffers[i].num_elements()),
                         std::numeric_limits<float>::quiet_NaN());
    if (i < f.num_inputs) {
      for (float& x : v) {
        x = rng.uniform_float(-1.0f, 1.0f);
      }
    }
    data.push_back(v);
  }
  expected.assign(data.begin(), data.begin() + m.num_params);
  std::vector<void*> args, reference_args;
  for (auto& v : data) {
    args.push_back(v.data());
  }
  for (auto& v : expected) {
    reference_args.push_back(v.data());
  }
  using Launcher = void (*)(void**);
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    auto run = reinterpret_cast<Launcher>(dlsym(library, ("tt_run_" + std::to_string(k)).c_str()));
    ASSERT_NE(run, nullptr) << dlerror();
    run(args.data());
  }
  auto misaligned = reinterpret_cast<int (*)()>(dlsym(library, "tt_misaligned_accesses"));
  ASSERT_NE(misaligned, nullptr) << dlerror();
  EXPECT_EQ(misaligned(), 0) << "float2/float4 accesses at misaligned addresses in\n" << m.source;
  dlclose(library);
  ir::eval(f, reference_args);
  for (size_t i = f.num_inputs; i < static_cast<size_t>(m.num_params); ++i) {
    for (size_t n = 0; n < expected[i].size(); ++n) {
      float want = expected[i][n];
      float got = data[i][n];
      ASSERT_NEAR(got, want, 1e-4f + 1e-4f * std::fabs(want))
          << m.buffers[i].name() << "[" << n << "] of " << workload.name() << "\n"
          << m.source;
    }
  }
}

void expect_emulation_matches_eval(const std::string& spec, const std::string& steps_json) {
  const support::Json json = support::Json::parse(steps_json);
  std::vector<schedule::Step> steps;
  for (const support::Json& step : json.as_array("steps")) {
    steps.push_back(schedule::step_from_json(step));
  }
  expect_emulation_matches_eval(spec, steps);
}

}  // namespace tensortune::codegen::emulation

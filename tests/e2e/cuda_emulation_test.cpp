// SPDX-License-Identifier: Apache-2.0
// Generated CUDA C checked without a GPU: the source is compiled by the host C++ compiler behind
// a small shim (one POSIX thread per CUDA thread, blocks one after another, __shared__ arrays as
// statics, __syncthreads() as a barrier of the block's threads) and each kernel's result is
// compared with ir::eval of the same lowered function. Missing barriers or wrong guards show up
// as wrong results (or as a hang, which the test runner's timeout reports).
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

namespace tensortune::codegen {
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
struct tt_any_ptr {
  void* p;
  template <typename T> operator T*() const { return static_cast<T*>(p); }
};
static void tt_launch(const unsigned g[3], const unsigned b[3], const std::function<void()>& body) {
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

/// Lowers `spec` with `steps_json` for a CUDA target, runs the emulated kernels and ir::eval on
/// the same random inputs, and compares every output.
void expect_emulation_matches_eval(const std::string& spec,
                                   const std::vector<schedule::Step>& steps) {
  if (std::system("c++ --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no host C++ compiler 'c++' on PATH";
  }
  te::Workload workload = te::make_workload(spec);
  target::Target target = target::Target::parse("cuda -arch=sm_90");
  ir::LoweredFunc f =
      lower::lower(schedule::apply_steps(workload, steps), target, lower::function_name(workload));
  CudaModule m = generate_cuda(f, target);

  test::TempDir dir("cuda_emulation");
  std::ofstream(dir.file("kernels.cpp")) << kShim << m.source << launchers(m);
  std::string command = "c++ -std=c++17 -O1 -shared -fPIC -pthread -o " + dir.file("k.so") + " " +
                        dir.file("kernels.cpp") + " > " + dir.file("log") + " 2>&1";
  if (std::system(command.c_str()) != 0) {
    std::ifstream log(dir.file("log"));
    std::stringstream text;
    text << log.rdbuf();
    FAIL() << "the host compiler rejected the generated source:\n" << text.str() << m.source;
  }
  void* library = dlopen(dir.file("k.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();

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
  dlclose(library);
  ir::eval(f, reference_args);
  for (size_t i = f.num_inputs; i < static_cast<size_t>(m.num_params); ++i) {
    for (size_t n = 0; n < expected[i].size(); ++n) {
      float want = expected[i][n];
      float got = data[i][n];
      ASSERT_NEAR(got, want, 1e-4f + 1e-4f * std::fabs(want))
          << m.buffers[i].name() << "[" << n << "] of " << spec << "\n"
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

TEST(CudaEmulation, TiledMatmulOnBlocksAndThreads) {
  expect_emulation_matches_eval(
      "matmul:M=32,N=48,K=20",
      R"([{"kind":"tile","stage":"C","x":"i","y":"j","x_factor":8,"y_factor":16},)"
      R"({"kind":"blockIdx.y","stage":"C","axis":"i.o"},)"
      R"({"kind":"blockIdx.x","stage":"C","axis":"j.o"},)"
      R"({"kind":"threadIdx.y","stage":"C","axis":"i.i"},)"
      R"({"kind":"threadIdx.x","stage":"C","axis":"j.i"}])");
}

/// The shared-memory matmul of the golden file, on sizes the tiles do not divide.
std::string shared_matmul_steps(int tile, int k_tile) {
  std::string t = std::to_string(tile);
  std::string kt = std::to_string(k_tile);
  return R"([{"kind":"cache_write","stage":"C","scope":"local"},)"
         R"({"kind":"cache_read","stage":"A","scope":"shared","readers":["C.local"]},)"
         R"({"kind":"cache_read","stage":"B","scope":"shared","readers":["C.local"]},)"
         R"({"kind":"tile","stage":"C","x":"i","y":"j","x_factor":)" +
         t + R"(,"y_factor":)" + t +
         R"(},)"
         R"({"kind":"blockIdx.y","stage":"C","axis":"i.o"},)"
         R"({"kind":"blockIdx.x","stage":"C","axis":"j.o"},)"
         R"({"kind":"threadIdx.y","stage":"C","axis":"i.i"},)"
         R"({"kind":"threadIdx.x","stage":"C","axis":"j.i"},)"
         R"({"kind":"compute_at","stage":"C.local","target_stage":"C","target_axis":"j.o"},)"
         R"({"kind":"split","stage":"C.local","axis":"k","factor":)" +
         kt +
         R"(,"nparts":false},)"
         R"({"kind":"reorder","stage":"C.local","order":["k.o","i","j","k.i"]},)"
         R"({"kind":"threadIdx.y","stage":"C.local","axis":"i"},)"
         R"({"kind":"threadIdx.x","stage":"C.local","axis":"j"},)"
         R"({"kind":"compute_at","stage":"A.shared","target_stage":"C.local","target_axis":"k.o"},)"
         R"({"kind":"compute_at","stage":"B.shared","target_stage":"C.local","target_axis":"k.o"},)"
         R"({"kind":"threadIdx.y","stage":"A.shared","axis":"i"},)"
         R"({"kind":"threadIdx.x","stage":"A.shared","axis":"j"},)"
         R"({"kind":"threadIdx.y","stage":"B.shared","axis":"i"},)"
         R"({"kind":"threadIdx.x","stage":"B.shared","axis":"j"}])";
}

TEST(CudaEmulation, SharedMemoryMatmulWithCooperativeFetch) {
  expect_emulation_matches_eval("matmul:M=32,N=32,K=32", shared_matmul_steps(8, 8));
}

TEST(CudaEmulation, SharedMemoryMatmulWithPartialTiles) {
  expect_emulation_matches_eval("matmul:M=20,N=12,K=18", shared_matmul_steps(8, 8));
}

// The fetch nest is not bound to threads: thread (0, 0) copies the tile alone, the others wait
// at the barrier.
TEST(CudaEmulation, SharedTileFetchedByOneThread) {
  expect_emulation_matches_eval(
      "matmul:M=16,N=16,K=12",
      R"([{"kind":"cache_read","stage":"A","scope":"shared","readers":["C"]},)"
      R"({"kind":"tile","stage":"C","x":"i","y":"j","x_factor":8,"y_factor":8},)"
      R"({"kind":"split","stage":"C","axis":"k","factor":4,"nparts":false},)"
      R"({"kind":"reorder","stage":"C","order":["i.o","j.o","k.o","i.i","j.i","k.i"]},)"
      R"({"kind":"blockIdx.y","stage":"C","axis":"i.o"},)"
      R"({"kind":"blockIdx.x","stage":"C","axis":"j.o"},)"
      R"({"kind":"threadIdx.y","stage":"C","axis":"i.i"},)"
      R"({"kind":"threadIdx.x","stage":"C","axis":"j.i"},)"
      R"({"kind":"compute_at","stage":"A.shared","target_stage":"C","target_axis":"k.o"}])");
}

TEST(CudaEmulation, VectorizedTailOnThreads) {
  expect_emulation_matches_eval(
      "add:M=8,N=30", R"([{"kind":"split","stage":"add","axis":"j","factor":4,"nparts":false},)"
                      R"({"kind":"blockIdx.x","stage":"add","axis":"i"},)"
                      R"({"kind":"threadIdx.x","stage":"add","axis":"j.o"},)"
                      R"({"kind":"vectorize","stage":"add","axis":"j.i"}])");
}

TEST(CudaEmulation, SoftmaxDefaultScheduleWithScratchBuffers) {
  expect_emulation_matches_eval("softmax:M=3,N=7", "[]");
}

// Schedules the GPU search space samples (fixed seed): whatever the sketch rules produce must
// run like the interpreter once it lowers.
TEST(CudaEmulation, SampledGpuSchedules) {
  target::Target target = target::Target::parse("cuda -arch=sm_90");
  for (const char* spec :
       {"matmul:M=24,N=20,K=12", "softmax:M=6,N=20", "conv2d:N=1,C=4,H=6,W=6,K=8,R=3,S=3,pad=1"}) {
    te::Workload workload = te::make_workload(spec);
    search::SearchSpace space = search::SearchSpace::generate(workload, target);
    support::Rng rng(5);
    for (int n = 0; n < 3; ++n) {
      schedule::Schedule schedule{workload.key(), space.steps(space.sample(rng))};
      try {
        lower::lower(workload, schedule, target);
      } catch (const ScheduleError&) {
        continue;  // the search drops these too
      }
      SCOPED_TRACE(std::string(spec) + ":\n" + schedule::to_string(schedule));
      expect_emulation_matches_eval(spec, schedule.steps);
    }
  }
}

}  // namespace
}  // namespace tensortune::codegen

// SPDX-License-Identifier: Apache-2.0
// Vectorized CUDA C (float2/float4 loads and stores where the index is proven aligned, lane by
// lane elsewhere) checked without a GPU against ir::eval: element-wise kernels with vector inner
// loops on threads, with and without tails, and a shared-memory matmul whose cooperative fetch
// is vectorized. The emulation's float2/float4 count every access at a misaligned address.
#include "common/text.h"
#include "cuda_emulation.h"
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace tensortune::codegen {
namespace {
using emulation::expect_emulation_matches_eval;
using test::contains;

/// The CUDA C of `spec` under `steps_json` (for checking which accesses became vectors).
std::string source_of(const std::string& spec, const std::string& steps_json) {
  te::Workload workload = te::make_workload(spec);
  target::Target target = target::Target::parse("cuda -arch=sm_90");
  std::vector<schedule::Step> steps;
  const support::Json json = support::Json::parse(steps_json);
  for (const support::Json& step : json.as_array("steps")) {
    steps.push_back(schedule::step_from_json(step));
  }
  return generate_cuda(lower::lower(schedule::apply_steps(workload, steps), target,
                                    lower::function_name(workload)),
                       target)
      .source;
}

/// Runs the kernels of `spec` under `steps_json` in the emulation against ir::eval and, where
/// NVRTC loads, compiles their source to PTX for sm_80 (NVRTC must accept what runs here).
void expect_runs_and_compiles(const std::string& spec, const std::string& steps_json) {
  expect_emulation_matches_eval(spec, steps_json);
  if (!nvrtc_available()) {
    return;
  }
  const std::string source = source_of(spec, steps_json);
  try {
    NvrtcOutput out = compile_cuda(source, target::Target::parse("cuda -arch=sm_80"), false);
    EXPECT_NE(out.ptx.find(".entry "), std::string::npos) << out.ptx;
  } catch (const UserError& e) {
    ADD_FAILURE() << e.what() << "\n" << source;
  }
}

/// Element-wise `stage`: rows on blocks, the row split by `lanes`, the outer part on threads and
/// the inner part vectorized.
std::string elementwise_steps(const std::string& stage, int lanes) {
  return R"([{"kind":"split","stage":")" + stage + R"(","axis":"j","factor":)" +
         std::to_string(lanes) + R"(,"nparts":false},)" + R"({"kind":"blockIdx.x","stage":")" +
         stage + R"(","axis":"i"},)" + R"({"kind":"threadIdx.x","stage":")" + stage +
         R"(","axis":"j.o"},)" + R"({"kind":"vectorize","stage":")" + stage + R"(","axis":"j.i"}])";
}

TEST(CudaEmulationVector, AlignedRowsUseFloat4LoadsAndStores) {
  const std::string steps = elementwise_steps("add", 4);
  std::string s = source_of("add:M=8,N=32", steps);
  EXPECT_TRUE(contains(s, "*reinterpret_cast<const float4*>(&A[")) << s;
  EXPECT_TRUE(contains(s, "*reinterpret_cast<float4*>(&add[")) << s;
  expect_runs_and_compiles("add:M=8,N=32", steps);
}

TEST(CudaEmulationVector, EightLanesAreTwoFloat4) {
  const std::string steps = elementwise_steps("relu", 8);
  std::string s = source_of("relu:M=4,N=64", steps);
  EXPECT_TRUE(contains(s, "tt_v1.w")) << s;
  expect_runs_and_compiles("relu:M=4,N=64", steps);
}

// Rows of 30 floats: a row starts at a multiple of 2 only, so pairs of float2.
TEST(CudaEmulationVector, RowsAlignedToTwoUseFloat2) {
  const std::string steps = elementwise_steps("add", 2);
  std::string s = source_of("add:M=6,N=30", steps);
  EXPECT_TRUE(contains(s, "*reinterpret_cast<float2*>(&add[")) << s;
  EXPECT_FALSE(contains(s, "float4")) << s;
  expect_runs_and_compiles("add:M=6,N=30", steps);
}

// 30 = 7 * 4 + 2: the last thread's vector is masked, and rows start at multiples of 2 only.
TEST(CudaEmulationVector, TailAndUnprovenAlignmentStayCorrect) {
  expect_runs_and_compiles("add:M=8,N=30", elementwise_steps("add", 4));
  expect_runs_and_compiles("mul:M=3,N=31", elementwise_steps("mul", 4));
}

// Rows of 31 floats: no row start but the first is aligned, so every access stays scalar.
TEST(CudaEmulationVector, UnprovenAlignmentStaysScalar) {
  const std::string steps = elementwise_steps("relu", 4);
  std::string s = source_of("relu:M=5,N=31", steps);
  EXPECT_FALSE(contains(s, "float4")) << s;
  EXPECT_FALSE(contains(s, "float2")) << s;
  EXPECT_TRUE(contains(s, "tt_lane")) << s;
  expect_runs_and_compiles("relu:M=5,N=31", steps);
}

// A 3x3 max pool vectorized over x inside its window loops: the output's rows of 8 are float4,
// the input's reads at x + rx (rx unknown, rows of 10) cannot be proven aligned and stay scalar.
TEST(CudaEmulationVector, WindowReadsAtAnUnknownOffsetStayScalar) {
  const std::string spec = "pool2d:N=1,C=2,H=6,W=10,R=3,S=3";
  const std::string steps =
      R"([{"kind":"split","stage":"pool","axis":"x","factor":4,"nparts":false},)"
      R"({"kind":"reorder","stage":"pool","order":["n","c","y","x.o","ry","rx","x.i"]},)"
      R"({"kind":"blockIdx.x","stage":"pool","axis":"c"},)"
      R"({"kind":"threadIdx.x","stage":"pool","axis":"y"},)"
      R"({"kind":"vectorize","stage":"pool","axis":"x.i"}])";
  std::string s = source_of(spec, steps);
  EXPECT_TRUE(contains(s, "*reinterpret_cast<const float4*>(&pool[")) << s;
  EXPECT_FALSE(contains(s, "reinterpret_cast<const float4*>(&data[")) << s;
  EXPECT_TRUE(contains(s, "+ rx) + 3)]")) << s;
  expect_runs_and_compiles(spec, steps);
}

// A broadcast row (B[j]) and a full matrix (A[i, j]) in one vector store.
TEST(CudaEmulationVector, BroadcastOperand) {
  const std::string steps = elementwise_steps("add", 4);
  expect_runs_and_compiles("add:M=5,N=16,broadcast=1", steps);
}

/// The shared-memory matmul of cuda_emulation_test.cpp (tile x tile threads, a k tile of
/// tile * lanes), each fetch copying one vector per thread: its inner axis split by `lanes`
/// (vectorized), its rows split so that threadIdx.y takes the outer rows and threadIdx.x the
/// inner rows fused with the vectors of a row.
std::string vector_fetch_matmul_steps(int tile, int lanes) {
  std::string t = std::to_string(tile);
  std::string kt = std::to_string(tile * lanes);
  std::string v = std::to_string(lanes);
  std::string steps =
      R"([{"kind":"cache_write","stage":"C","scope":"local"},)"
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
      R"({"kind":"compute_at","stage":"B.shared","target_stage":"C.local","target_axis":"k.o"})";
  // A's tile is tile x (tile * lanes): one row of vectors per threadIdx.y; B's is
  // (tile * lanes) x tile: `lanes` rows per threadIdx.y.
  for (auto [fetch, rows_per_y] :
       {std::pair<const char*, int>{"A.shared", 1}, {"B.shared", lanes}}) {
    std::string f = R"("stage":")" + std::string(fetch) + R"(")";
    steps += R"(,{"kind":"split",)" + f + R"(,"axis":"j","factor":)" + v + R"(,"nparts":false},)" +
             R"({"kind":"split",)" + f + R"(,"axis":"i","factor":)" + std::to_string(rows_per_y) +
             R"(,"nparts":false},)" + R"({"kind":"fuse",)" + f + R"(,"axes":["i.i","j.o"]},)" +
             R"({"kind":"threadIdx.y",)" + f + R"(,"axis":"i.o"},)" + R"({"kind":"threadIdx.x",)" +
             f + R"(,"axis":"i.i@j.o"},)" + R"({"kind":"vectorize",)" + f + R"(,"axis":"j.i"})";
  }
  return steps + "]";
}

TEST(CudaEmulationVector, SharedMatmulWithVectorizedCooperativeFetch) {
  const std::string steps = vector_fetch_matmul_steps(8, 4);
  std::string s = source_of("matmul:M=32,N=32,K=64", steps);
  // sm_90: the fetches are double-buffered, each float4 one 16-byte cp.async copy.
  EXPECT_TRUE(contains(s, "tt_cp_async16(&A_shared[")) << s;
  EXPECT_TRUE(contains(s, "tt_cp_async16(&B_shared[")) << s;
  expect_runs_and_compiles("matmul:M=32,N=32,K=64", steps);
}

// The schedule of the golden file matmul_shared_vector4.cu: 16x16 threads, a k tile of 64.
TEST(CudaEmulationVector, GoldenVectorFetchMatmulRuns) {
  expect_runs_and_compiles("matmul:M=64,N=64,K=128", vector_fetch_matmul_steps(16, 4));
}

// Tiles the sizes do not divide: guarded fetches, masked or scalar, must still be right.
TEST(CudaEmulationVector, SharedMatmulWithVectorizedFetchOfPartialTiles) {
  expect_runs_and_compiles("matmul:M=20,N=12,K=40", vector_fetch_matmul_steps(8, 4));
  expect_runs_and_compiles("matmul:M=16,N=16,K=16", vector_fetch_matmul_steps(8, 2));
}

}  // namespace
}  // namespace tensortune::codegen

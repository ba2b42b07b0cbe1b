// SPDX-License-Identifier: Apache-2.0
// Generated CUDA C checked without a GPU against ir::eval (the harness is cuda_emulation.h):
// tiled and shared-memory matmuls, guards, scratch buffers, sampled GPU-space schedules and the
// zero-shot picks for a GPU.
#include "cuda_emulation.h"

#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/search/search_space.h"
#include "tensortune/search/zero_shot.h"
#include "tensortune/support/error.h"
#include "tensortune/support/rng.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>

namespace tensortune::codegen {
namespace {

using emulation::expect_emulation_matches_eval;

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

// With nothing tuned, a GPU workload gets a zero-shot pick ranked by the GPU sketch prior (the
// shipped model knows CPU code only, so it is given and must be ignored): the same pick twice,
// and what the interpreter computes.
TEST(CudaEmulation, ZeroShotGpuPicksRepeatAndMatchTheInterpreter) {
  const target::Target target = target::Target::parse("cuda -arch=sm_90");
  const search::ZeroShot zero_shot(nullptr);
  EXPECT_EQ(zero_shot.ranking(target), "GPU sketch prior");
  for (const char* spec : {"matmul:M=64,N=48,K=40", "conv2d:N=1,C=8,H=10,W=10,K=16,R=3,S=3,pad=1",
                           "dense:M=12,N=40,K=24,bias=1,epilogue=gelu", "softmax:M=6,N=100",
                           "pool2d:N=1,C=4,H=9,W=9,R=3,S=3,stride=2"}) {
    SCOPED_TRACE(spec);
    const te::Workload workload = te::make_workload(spec);
    const std::optional<search::ZeroShotPick> pick = zero_shot.pick(workload, target);
    ASSERT_TRUE(pick.has_value());
    const std::optional<search::ZeroShotPick> again = zero_shot.pick(workload, target);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(schedule::to_string(schedule::Schedule{workload.key(), pick->steps}),
              schedule::to_string(schedule::Schedule{workload.key(), again->steps}));
    EXPECT_GT(pick->prior, 0.0);
    SCOPED_TRACE(pick->config);
    expect_emulation_matches_eval(spec, pick->steps);
  }
}

// The zero-shot GEMM's tile fits the registers its block leaves a thread: ptxas spills nothing.
TEST(CudaEmulation, ZeroShotGpuGemmCompilesWithoutSpills) {
  if (!codegen::nvrtc_available()) {
    GTEST_SKIP() << "NVRTC is not available";
  }
  const target::Target target = target::Target::parse("cuda -arch=sm_90");
  const te::Workload workload = te::make_workload("matmul:M=4096,N=4096,K=4096");
  const std::optional<search::ZeroShotPick> pick = search::ZeroShot(nullptr).pick(workload, target);
  ASSERT_TRUE(pick.has_value());
  SCOPED_TRACE(pick->config);
  const ir::LoweredFunc f =
      lower::lower(workload, schedule::Schedule{workload.key(), pick->steps}, target);
  const codegen::NvrtcOutput out =
      codegen::compile_cuda(codegen::generate_cuda(f, target).source, target, true);
  ASSERT_EQ(out.resources.size(), 1u) << out.log;
  EXPECT_EQ(out.resources[0].spill_store_bytes, 0) << out.log;
  EXPECT_EQ(out.resources[0].spill_load_bytes, 0) << out.log;
}

/// The largest extent of the loops bound to each GPU index.
class LaunchShape : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  std::map<ir::ForKind, int64_t> extent;
  int64_t threads() {
    return std::max<int64_t>(1, extent[ir::ForKind::ThreadX]) *
           std::max<int64_t>(1, extent[ir::ForKind::ThreadY]) *
           std::max<int64_t>(1, extent[ir::ForKind::ThreadZ]);
  }

 protected:
  void visit(const ir::For* op) override {
    const int64_t* n = ir::as_const_int(op->extent);
    int64_t& e = extent[op->for_kind];
    e = std::max(e, n != nullptr ? *n : 1);
    ir::IRVisitor::visit(op);
  }
};

// On layers of a real size the prior keeps the machine busy and the reuse in shared memory: a
// ResNet-18 convolution and a GEMM get shared-memory tiles of at least two warps, and at least 4
// warps for every multiprocessor of an H100 (132).
TEST(CudaEmulation, ZeroShotGpuPicksTileLargeLayersThroughSharedMemory) {
  const target::Target target = target::Target::parse("cuda -arch=sm_90");
  const search::ZeroShot zero_shot(nullptr);
  for (const char* spec :
       {"matmul:M=1024,N=1024,K=1024", "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1"}) {
    SCOPED_TRACE(spec);
    const te::Workload workload = te::make_workload(spec);
    const std::optional<search::ZeroShotPick> pick = zero_shot.pick(workload, target);
    ASSERT_TRUE(pick.has_value());
    EXPECT_NE(pick->config.find("gpu-tile+shared"), std::string::npos) << pick->config;
    const ir::LoweredFunc f =
        lower::lower(workload, schedule::Schedule{workload.key(), pick->steps}, target);
    const std::string text = ir::to_string(f);
    EXPECT_NE(text.find("shared"), std::string::npos);
    LaunchShape launch;
    launch.visit(f.body);
    EXPECT_GE(launch.threads(), 64) << pick->config;
    EXPECT_GE(launch.extent[ir::ForKind::BlockX] * launch.threads() / 32, 132 * 4) << pick->config;
    // A local maximum of the prior: no neighbour that lowers scores higher.
    const search::SearchSpace space = search::SearchSpace::generate(workload, target);
    const search::Config at = space.from_json(pick->configuration);
    for (const search::Config& c : space.neighbours(at)) {
      if (space.prior(c) <= pick->prior)
        continue;
      EXPECT_THROW(
          lower::lower(workload, schedule::Schedule{workload.key(), space.steps(c)}, target),
          ScheduleError)
          << space.describe(c) << " scores " << space.prior(c);
    }
  }
}

}  // namespace
}  // namespace tensortune::codegen

// SPDX-License-Identifier: Apache-2.0
// The shared sketches' copy layouts: an input read with a threaded data axis at another
// dimension than its last (A [M, K] at [i, k]) may be staged blocked by the block's tile of that
// axis ([K][tile]), so a thread's elements are contiguous in shared memory. The copy still
// reads global memory in the input's own order, float4 at a time, and stores lane by lane.
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/search/search_space.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

namespace tensortune::search {
namespace {

const target::Target& gpu() {
  static const target::Target kTarget = target::Target::parse("cuda -arch=sm_80");
  return kTarget;
}

std::vector<std::string> knob_names(const SearchSpace& space, const std::string& sketch_name) {
  std::vector<std::string> names;
  for (const Sketch& sketch : space.sketches()) {
    for (const Knob& k : sketch.knobs) {
      if (sketch.name == sketch_name) {
        names.push_back(k.name);
      }
    }
  }
  EXPECT_FALSE(names.empty()) << sketch_name;
  return names;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// A 256x256x128 GEMM: 16x16 threads of 8x8 accumulators, a k step of 8, float4 fetches.
Config matmul_config(const SearchSpace& space, const std::string& sketch, int layout) {
  const std::string vthread = sketch.find("vthread") != std::string::npos ? "true" : "false";
  const std::string i = vthread == "true" ? "[8,16]" : "[16,8]";
  return space.from_json(support::Json::parse(
      R"({"sketch": ")" + sketch + R"(", "knobs": {"C.i.split": )" + i + R"(, "C.j.split": )" + i +
      R"(, "C.local.k.split": [8], "A.shared.layout": [)" + std::to_string(layout) +
      R"(], "C.local.unroll": [512], "C.shared.vector": [4]}})"));
}

TEST(GpuSharedLayout, OnlyInputsThatStrideAThreadsElementsGetALayoutKnob) {
  const SearchSpace matmul =
      SearchSpace::generate(te::make_workload("matmul:M=256,N=256,K=128"), gpu());
  for (const char* sketch : {"C:gpu-tile+shared", "C:gpu-tile+shared+vthread"}) {
    const std::vector<std::string> names = knob_names(matmul, sketch);
    EXPECT_TRUE(has(names, "A.shared.layout")) << sketch;
    EXPECT_FALSE(has(names, "B.shared.layout")) << sketch;  // read at [k, j]: contiguous already
  }
  EXPECT_FALSE(has(knob_names(matmul, "C:gpu-tile+local"), "A.shared.layout"));
  // Dense reads its weight [N, K] at [j, k]; a conv its weight OIHW at [f, c, r, s].
  const SearchSpace dense =
      SearchSpace::generate(te::make_workload("dense:M=64,N=128,K=64"), gpu());
  std::string dense_knobs;
  for (const std::string& n : knob_names(dense, dense.sketches()[1].name)) {
    dense_knobs += n + " ";
  }
  EXPECT_NE(dense_knobs.find(".shared.layout"), std::string::npos) << dense_knobs;
  const SearchSpace conv = SearchSpace::generate(
      te::make_workload("conv2d:N=1,C=64,H=14,W=14,K=64,R=3,S=3,pad=1"), gpu());
  std::string conv_knobs;
  for (const std::string& n : knob_names(conv, conv.sketches()[1].name)) {
    conv_knobs += n + " ";
  }
  EXPECT_NE(conv_knobs.find("weight.shared.layout"), std::string::npos) << conv_knobs;
}

TEST(GpuSharedLayout, ABlockedCopyIsContiguousAlongTheThreadsTileAndReadInFloat4s) {
  const te::Workload w = te::make_workload("matmul:M=256,N=256,K=128");
  const SearchSpace space = SearchSpace::generate(w, gpu());
  const Config config = matmul_config(space, "C:gpu-tile+shared", 1);
  SCOPED_TRACE(space.describe(config));
  bool blocked = false;
  for (const schedule::Step& step : space.steps(config)) {
    const auto* read = std::get_if<schedule::CacheRead>(&step);
    if (read != nullptr && read->stage == "A") {
      ASSERT_EQ(read->blocks.size(), 1u);
      EXPECT_EQ(read->blocks[0], (schedule::LayoutBlock{0, 128, false, false}));
      blocked = true;
    }
    if (read != nullptr && read->stage == "B") {
      EXPECT_TRUE(read->blocks.empty());
    }
  }
  EXPECT_TRUE(blocked);
  const ir::LoweredFunc f = lower::lower(schedule::apply_steps(w, space.steps(config)), gpu(), "f");
  // [k step][128 rows]: 8 x 128 floats; the fetch reads A a float4 at a time and stores its lanes
  // 128 apart (on sm_75: no cp.async, no double buffer); a thread's 8 rows are adjacent, so its
  // reads of them are two aligned float4s.
  const std::string source =
      codegen::generate_cuda(f, target::Target::parse("cuda -arch=sm_75")).source;
  EXPECT_NE(source.find("float A_shared[1024];"), std::string::npos) << source;
  EXPECT_NE(source.find("*reinterpret_cast<const float4*>(&A["), std::string::npos) << source;
  EXPECT_NE(source.find("= tt_v0.w;"), std::string::npos) << source;
  EXPECT_NE(source.find("float C_local[64];"), std::string::npos) << source;
  // On sm_80 each lane is a 4-byte cp.async into one half of the doubled tile.
  const std::string ampere = codegen::generate_cuda(f, gpu()).source;
  EXPECT_NE(ampere.find("float A_shared[2048];"), std::string::npos) << ampere;
  EXPECT_NE(ampere.find("tt_cp_async4(&A_shared["), std::string::npos) << ampere;
}

TEST(GpuSharedLayout, ThePriorPrefersTheBlockedCopyOfAStridedInput) {
  const SearchSpace space =
      SearchSpace::generate(te::make_workload("matmul:M=1024,N=1024,K=1024"), gpu());
  for (const char* sketch : {"C:gpu-tile+shared", "C:gpu-tile+shared+vthread"}) {
    EXPECT_GT(space.prior(matmul_config(space, sketch, 1)),
              space.prior(matmul_config(space, sketch, 0)))
        << sketch;
  }
}

// 128x128 tiles with a k step of 32 stage 32 KB a step: double-buffered on sm_90 that is 64 KB,
// over the 48 KB of static shared memory, so the kernel declares it dynamic (the launch sizes it).
TEST(GpuSharedLayout, DoubleBufferedTilesOverStaticSharedMemoryAreDynamic) {
  const te::Workload w = te::make_workload("matmul:M=256,N=256,K=256");
  const SearchSpace space = SearchSpace::generate(w, gpu());
  const Config config = space.from_json(support::Json::parse(
      R"({"sketch": "C:gpu-tile+shared", "knobs": {"C.i.split": [16,8], "C.j.split": [16,8],
          "C.local.k.split": [32], "A.shared.layout": [1], "C.local.unroll": [0],
          "C.shared.vector": [4]}})"));
  const target::Target hopper = target::Target::parse("cuda -arch=sm_90");
  const ir::LoweredFunc f =
      lower::lower(schedule::apply_steps(w, space.steps(config)), hopper, "f");
  const codegen::CudaModule m = codegen::generate_cuda(f, hopper);
  EXPECT_EQ(m.kernels[0].shared_bytes, 65536);
  EXPECT_EQ(m.kernels[0].dynamic_shared_bytes, 65536);
  // The manifest and the measurer's blob carry it: the launch passes it as dynamic memory.
  const support::Json json = codegen::kernel_json(m.kernels[0]);
  EXPECT_EQ(json.at("dynamic_shared_bytes").as_int(), 65536);
  EXPECT_EQ(codegen::kernel_from_json(json).dynamic_shared_bytes, 65536);
  EXPECT_NE(codegen::launch_summary(m).find("shared 65536 bytes (dynamic)"), std::string::npos);
  EXPECT_NE(m.source.find("TT_DYNAMIC_SHARED(65536);"), std::string::npos) << m.source;
  EXPECT_NE(m.source.find("float* A_shared = reinterpret_cast<float*>(tt_shared + 0);"),
            std::string::npos)
      << m.source;
  EXPECT_NE(m.source.find("float* B_shared = reinterpret_cast<float*>(tt_shared + 32768);"),
            std::string::npos)
      << m.source;
  EXPECT_EQ(m.source.find("__shared__ __align__(16) float"), std::string::npos) << m.source;
  std::string why;
  if (codegen::nvrtc_available(&why)) {  // ptxas takes the dynamic array and the copies
    const codegen::NvrtcOutput out = codegen::compile_cuda(m.source, hopper, true);
    EXPECT_NE(out.ptx.find(".extern .shared .align 16 .b8 tt_shared[]"), std::string::npos)
        << out.ptx;
    EXPECT_FALSE(out.cubin.empty());
  }
  // A target that caps shared memory keeps the single buffer there.
  const target::Target capped = target::Target::parse("cuda -arch=sm_90 -max-shared-memory=40960");
  const codegen::CudaModule single = codegen::generate_cuda(f, capped);
  EXPECT_EQ(single.kernels[0].shared_bytes, 32768);
  EXPECT_EQ(single.kernels[0].dynamic_shared_bytes, 0);
  EXPECT_FALSE(codegen::kernel_json(single.kernels[0]).contains("dynamic_shared_bytes"));
  support::Json bad = json;
  bad["dynamic_shared_bytes"] = int64_t{70000};
  EXPECT_THROW(codegen::kernel_from_json(bad), UserError);
}

// Interleaved accumulators whose thread index is not the innermost dimension of the local
// layout ([2][128 threads][8]) keep only the thread's 16 elements: the thread's span is squeezed
// out of the index, not only divided by a common stride.
TEST(GpuSharedLayout, InterleavedAccumulatorsAroundTheThreadIndexStayInRegisters) {
  const te::Workload w = te::make_workload("matmul:M=256,N=256,K=128");
  const SearchSpace space = SearchSpace::generate(w, gpu());
  const Config config = space.from_json(support::Json::parse(
      R"({"sketch": "C:gpu-tile+shared+vthread", "knobs": {"C.i.split": [2,128],
          "C.j.split": [8,1], "C.local.k.split": [8], "A.shared.layout": [1],
          "C.local.unroll": [512], "C.shared.vector": [1]}})"));
  const ir::LoweredFunc f = lower::lower(schedule::apply_steps(w, space.steps(config)), gpu(), "f");
  const std::string source = codegen::generate_cuda(f, gpu()).source;
  EXPECT_NE(source.find("float C_local[16];"), std::string::npos) << source;
}

}  // namespace
}  // namespace tensortune::search

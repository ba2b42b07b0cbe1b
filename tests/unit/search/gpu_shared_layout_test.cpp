// SPDX-License-Identifier: Apache-2.0
// The shared sketches' copy layouts: an input read with a threaded data axis at another
// dimension than its last (A [M, K] at [i, k]) may be staged blocked by the block's tile of that
// axis ([K][tile]), so a thread's elements are contiguous in shared memory. The copy still
// reads global memory in the input's own order, float4 at a time, and stores lane by lane.
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/search/search_space.h"
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

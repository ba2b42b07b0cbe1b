// SPDX-License-Identifier: Apache-2.0
// The shared sketches' copy layouts: an input read with a threaded data axis at another
// dimension than its last (A [M, K] at [i, k]) may be staged blocked by the block's tile of that
// axis ([K][tile]), so a thread's elements are contiguous in shared memory. The copy still
// reads global memory in the input's own order, float4 at a time, and stores lane by lane into
// rows padded against bank conflicts.
#include "search_test_util.h"
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/ir/simplify.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/search/search_space.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

namespace tensortune::search {
namespace {

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

/// A 256x256x128 GEMM: 16x16 threads of 8x8 accumulators, a k step of 8, float4 fetches; without
/// virtual threads, each thread's 8x8 contiguous (interleave 0) or in groups of 4 (1).
Config matmul_config(const SearchSpace& space,
                     const std::string& sketch,
                     int layout,
                     int interleave = 0) {
  const bool vthread = sketch.find("vthread") != std::string::npos;
  const std::string i = vthread ? "[8,16]" : "[16,8]";
  return space.from_json(support::Json::parse(
      R"({"sketch": ")" + sketch + R"(", "knobs": {"C.i.split": )" + i + R"(, "C.j.split": )" + i +
      R"(, "C.local.k.split": [8], "A.shared.layout": [)" + std::to_string(layout) + "]" +
      (vthread ? "" : R"(, "C.local.interleave": [)" + std::to_string(interleave) + "]") +
      R"(, "C.local.unroll": [512], "C.shared.vector": [4]}})"));
}

/// Walks a lowered kernel's accesses of one buffer and evaluates their indices for the lanes of
/// the first warp of a block (threadIdx.x fastest, then y, z: the launch's block shape from the
/// largest thread loops), in the first iteration of every other loop.
class FirstWarp : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;

  FirstWarp(const ir::LoweredFunc& f, std::string buffer) : buffer_(std::move(buffer)) {
    visit(f.body);  // the block's shape first
    sizing_ = false;
  }
  /// Calls on_store / on_load for each access of the buffer.
  void walk(const ir::LoweredFunc& f) { visit(f.body); }

 protected:
  virtual void on_store(const ir::Store*) {}
  virtual void on_load(const ir::Load*) {}

  /// `index` for thread `thread` of the first warp.
  int64_t address_of(const ir::Expr& index, int64_t thread) {
    const int64_t x = block_.count(ir::ForKind::ThreadX) ? block_[ir::ForKind::ThreadX] : 1;
    const int64_t y = block_.count(ir::ForKind::ThreadY) ? block_[ir::ForKind::ThreadY] : 1;
    const int64_t at[] = {thread % x, (thread / x) % y, thread / (x * y)};
    ir::VarMap values;
    for (const ir::For* loop : loops_) {
      const int k = loop->for_kind == ir::ForKind::ThreadX   ? 0
                    : loop->for_kind == ir::ForKind::ThreadY ? 1
                    : loop->for_kind == ir::ForKind::ThreadZ ? 2
                                                             : -1;
      values[loop->var.get()] = k >= 0 ? ir::make_const(loop->var.type(), at[k]) : loop->min;
    }
    const ir::Expr value = ir::simplify(ir::substitute(index, values));
    const int64_t* address = ir::as_const_int(value);  // points into `value`
    EXPECT_NE(address, nullptr) << ir::to_string(index);
    return address != nullptr ? *address : 0;
  }

  void visit(const ir::For* op) override {
    const int64_t* extent = ir::as_const_int(op->extent);
    if (sizing_ && extent != nullptr && ir::is_thread_kind(op->for_kind)) {
      block_[op->for_kind] = std::max(block_[op->for_kind], *extent);
    }
    loops_.push_back(op);
    ir::IRVisitor::visit(op);
    loops_.pop_back();
  }
  void visit(const ir::Store* op) override {
    ir::IRVisitor::visit(op);
    if (!sizing_ && op->buffer.name() == buffer_) {
      on_store(op);
    }
  }
  void visit(const ir::Load* op) override {
    ir::IRVisitor::visit(op);
    if (!sizing_ && op->buffer.name() == buffer_) {
      on_load(op);
    }
  }

 private:
  std::string buffer_;
  std::map<ir::ForKind, int64_t> block_;
  std::vector<const ir::For*> loops_;
  bool sizing_ = true;
};

/// The most distinct addresses one bank of shared memory (32 banks of 4 bytes) takes from the
/// first warp in one store instruction into `buffer`, as the CUDA C stores: contiguous vectors
/// as float4/float2, other vectors lane by lane. 1: no conflict.
int worst_store_conflict(const ir::LoweredFunc& f, const std::string& buffer) {
  struct Stores : FirstWarp {
    using FirstWarp::FirstWarp;
    int worst = 0;
    void on_store(const ir::Store* op) override {
      EXPECT_EQ(op->indices.size(), 1u);
      const auto* ramp = op->indices[0].as<ir::Ramp>();
      const int lanes = ramp != nullptr ? ramp->lanes : 1;
      // A contiguous vector is one wide store: a warp's float4s go 8 threads at a time, its
      // float2s 16 at a time. Other vectors are stored lane by lane.
      const bool wide = ramp != nullptr && ir::is_const_int(ramp->stride, 1);
      const int64_t phase = wide ? 32 / lanes : 32;
      for (int c = 0; c < (wide ? 1 : lanes); ++c) {
        const ir::Expr index =
            ramp == nullptr ? op->indices[0]
            : wide          ? ramp->base
                   : ramp->base + ramp->stride * ir::make_const(ramp->stride.type(), int64_t{c});
        for (int64_t first = 0; first < 32; first += phase) {
          std::map<int64_t, std::set<int64_t>> banks;
          for (int64_t thread = first; thread < first + phase; ++thread) {
            const int64_t address = address_of(index, thread);
            for (int w = 0; w < (wide ? lanes : 1); ++w) {
              banks[(address + w) % 32].insert(address + w);
            }
          }
          for (const auto& [bank, addresses] : banks) {
            worst = std::max(worst, static_cast<int>(addresses.size()));
          }
        }
      }
    }
  } stores(f, buffer);
  stores.walk(f);
  return stores.worst;
}

/// The same for the compute's scalar reads of `buffer` that start a 16-byte group in every lane
/// (the first of four adjacent reads ptxas makes one float4 load): the most distinct groups one
/// bank takes from a quarter-warp (a float4 load serves 8 lanes at a time). 0: no such read.
int worst_float4_read_conflict(const ir::LoweredFunc& f, const std::string& buffer) {
  struct Reads : FirstWarp {
    using FirstWarp::FirstWarp;
    int worst = 0;
    void on_load(const ir::Load* op) override {
      if (op->indices.size() != 1 || !op->indices[0].type().is_scalar()) {
        return;
      }
      for (int64_t first = 0; first < 32; first += 8) {
        std::map<int64_t, std::set<int64_t>> banks;  // bank quad -> 16-byte groups
        for (int64_t thread = first; thread < first + 8; ++thread) {
          const int64_t address = address_of(op->indices[0], thread);
          if (address % 4 != 0) {
            return;
          }
          banks[(address / 4) % 8].insert(address / 4);
        }
        for (const auto& [quad, groups] : banks) {
          worst = std::max(worst, static_cast<int>(groups.size()));
        }
      }
    }
  } reads(f, buffer);
  reads.walk(f);
  return reads.worst;
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
  // Rows padded to 132 floats: 16-byte aligned, and two rows 4 apart 16 banks apart.
  EXPECT_NE(source.find("float A_shared[1056];"), std::string::npos) << source;
  EXPECT_NE(source.find("*reinterpret_cast<const float4*>(&A["), std::string::npos) << source;
  EXPECT_NE(source.find("= tt_v0.w;"), std::string::npos) << source;
  EXPECT_NE(source.find("float C_local[64];"), std::string::npos) << source;
  // On sm_80 each lane is a 4-byte cp.async into one half of the doubled tile.
  const std::string ampere = codegen::generate_cuda(f, gpu()).source;
  EXPECT_NE(ampere.find("float A_shared[2112];"), std::string::npos) << ampere;
  EXPECT_NE(ampere.find("tt_cp_async4(&A_shared["), std::string::npos) << ampere;
}

// The blocked copy's transposed stores, lane by lane for a warp. The copy walks a row 8 elements
// (two float4s) at a time before the next rows, so a warp holds two float4s of 16 rows: rows of
// 128 floats put two lanes in one bank, rows padded to 132 spread them over all 32 banks.
TEST(GpuSharedLayout, PaddedRowsSpreadTheTransposedStoresOverTheBanks) {
  const te::Workload w = te::make_workload("matmul:M=256,N=256,K=128");
  const SearchSpace space = SearchSpace::generate(w, gpu());
  for (const auto& [step, padded, unpadded] :
       std::vector<std::tuple<int, int, int>>{{8, 1, 2}, {16, 1, 2}, {32, 1, 2}}) {
    SCOPED_TRACE("k step " + std::to_string(step));
    const Config config = space.from_json(support::Json::parse(
        R"({"sketch": "C:gpu-tile+shared", "knobs": {"C.i.split": [16,8], "C.j.split": [16,8],
            "C.local.k.split": [)" +
        std::to_string(step) +
        R"(], "A.shared.layout": [1], "C.local.interleave": [0], "C.local.unroll": [0],
            "C.shared.vector": [4]}})"));
    std::vector<schedule::Step> steps = space.steps(config);
    const ir::LoweredFunc f = lower::lower(schedule::apply_steps(w, steps), gpu(), "f");
    EXPECT_EQ(worst_store_conflict(f, "A.shared"), padded);
    EXPECT_EQ(worst_store_conflict(f, "B.shared"), 1);  // B [K, N] is copied as it is
    for (schedule::Step& s : steps) {
      if (auto* read = std::get_if<schedule::CacheRead>(&s); read != nullptr && read->stage == "A")
        read->row_pad = 0;
    }
    const ir::LoweredFunc plain = lower::lower(schedule::apply_steps(w, steps), gpu(), "f");
    EXPECT_EQ(worst_store_conflict(plain, "A.shared"), unpadded);
  }
}

// A thread's 8 columns of B read as two float4s: contiguous, lanes 8 floats apart and two lanes
// of a quarter-warp in one bank; interleaved in groups of 4 (CUTLASS's SIMT thread tile), a
// quarter-warp's float4s are one 128-byte row. The accumulators stay in registers and the
// output goes out as float4s either way the tile is laid out.
TEST(GpuSharedLayout, InterleavedThreadTilesReadFloat4sWithoutBankConflicts) {
  const te::Workload w = te::make_workload("matmul:M=256,N=256,K=128");
  const SearchSpace space = SearchSpace::generate(w, gpu());
  for (const auto& [interleave, conflict] : std::vector<std::pair<int, int>>{{0, 2}, {1, 1}}) {
    const Config config = matmul_config(space, "C:gpu-tile+shared", 1, interleave);
    SCOPED_TRACE(space.describe(config));
    const ir::LoweredFunc f =
        lower::lower(schedule::apply_steps(w, space.steps(config)), gpu(), "f");
    EXPECT_EQ(worst_float4_read_conflict(f, "B.shared"), conflict);
    EXPECT_EQ(worst_float4_read_conflict(f, "A.shared"), 1);  // a quarter-warp's rows: one row
    const std::string source = codegen::generate_cuda(f, gpu()).source;
    EXPECT_NE(source.find("float C_local[64];"), std::string::npos) << source;
    EXPECT_EQ(source.find("*reinterpret_cast<float4*>(&C[") != std::string::npos, interleave == 1)
        << source;
  }
  // The prior knows the conflict.
  EXPECT_GT(space.prior(matmul_config(space, "C:gpu-tile+shared", 1, 1)),
            space.prior(matmul_config(space, "C:gpu-tile+shared", 1, 0)));
}

// Records written before the interleave knob existed still parse, as the contiguous tile they
// were measured with; every other knob stays required.
TEST(GpuSharedLayout, RecordsWrittenBeforeTheInterleaveKnobStillParse) {
  const SearchSpace space =
      SearchSpace::generate(te::make_workload("matmul:M=256,N=256,K=128"), gpu());
  const std::string old = R"({"sketch": "C:gpu-tile+shared", "knobs": {"C.i.split": [16,8],
      "C.j.split": [16,8], "C.local.k.split": [8], "A.shared.layout": [1],
      "C.local.unroll": [512], "C.shared.vector": [4]}})";
  const Config parsed = space.from_json(support::Json::parse(old));
  EXPECT_EQ(parsed, matmul_config(space, "C:gpu-tile+shared", 1, 0));
  EXPECT_EQ(space.to_json(parsed).at("knobs").at("C.local.interleave").dump(), "[0]");
  std::string without_unroll = old;
  without_unroll.replace(without_unroll.find(R"("C.local.unroll": [512], )"), 25, "");
  EXPECT_THROW(space.from_json(support::Json::parse(without_unroll)), UserError);
}

// Where cp.async exists, the depth of the fetches' pipeline is a knob: its copies ask for it
// and the kernel keeps that many tiles; sm_75 has no such knob and nothing to pipeline.
TEST(GpuSharedLayout, ThePipelineDepthIsAKnobWhereCopiesAreAsynchronous) {
  const te::Workload w = te::make_workload("matmul:M=256,N=256,K=128");
  const SearchSpace space = SearchSpace::generate(w, gpu());
  for (const char* sketch : {"C:gpu-tile+shared", "C:gpu-tile+shared+vthread"}) {
    const std::vector<std::string> names = knob_names(space, sketch);
    EXPECT_NE(std::find(names.begin(), names.end(), "C.shared.stages"), names.end()) << sketch;
  }
  support::Json json = space.to_json(matmul_config(space, "C:gpu-tile+shared", 1, 1));
  EXPECT_EQ(json.at("knobs").at("C.shared.stages").dump(), "[2]");  // absent: what it was
  json["knobs"]["C.shared.stages"] = support::Json::parse("[3]");
  const std::vector<schedule::Step> steps = space.steps(space.from_json(json));
  int asking = 0;
  for (const schedule::Step& s : steps) {
    if (const auto* read = std::get_if<schedule::CacheRead>(&s)) {
      EXPECT_EQ(read->stages, 3) << read->stage;
      ++asking;
    }
  }
  EXPECT_EQ(asking, 2);
  const ir::LoweredFunc f = lower::lower(schedule::apply_steps(w, steps), gpu(), "f");
  const std::string source = codegen::generate_cuda(f, gpu()).source;
  EXPECT_NE(source.find("tt_cp_async_wait_group<1>();"), std::string::npos) << source;
  const target::Target turing = target::Target::parse("cuda -arch=sm_75");
  const std::vector<std::string> old =
      knob_names(SearchSpace::generate(w, turing), "C:gpu-tile+shared");
  EXPECT_EQ(std::find(old.begin(), old.end(), "C.shared.stages"), old.end());
}

// A thread of a 512-thread block gets 128 registers: 8x8 accumulators fit (ptxas: 128, no
// spill), 16x8 do not (ptxas: 180 bytes spilled); with 256 threads, 255 registers hold 16x8.
TEST(GpuSharedLayout, ThePriorKeepsATileInTheRegistersItsBlockLeavesAThread) {
  const SearchSpace space =
      SearchSpace::generate(te::make_workload("matmul:M=4096,N=4096,K=4096"), gpu());
  const auto prior = [&](const std::string& i, const std::string& j) {
    return space.prior(space.from_json(support::Json::parse(
        R"({"sketch": "C:gpu-tile+shared+vthread", "knobs": {"C.i.split": )" + i +
        R"(, "C.j.split": )" + j + R"(, "C.local.k.split": [8], "A.shared.layout": [1],
            "C.local.unroll": [64], "C.shared.vector": [4]}})")));
  };
  const double fits = prior("[8,32]", "[8,16]");
  EXPECT_LT(prior("[16,16]", "[8,32]"), 0.2 * fits);
  EXPECT_GT(prior("[16,16]", "[8,16]"), 0.5 * fits);
}

// Same threads, accumulators, loads per FMA and blocks: the square tile loads 256 elements per k
// for 16384 FMAs, the 64x256 one 320 for the same, so the square one goes first.
TEST(GpuSharedLayout, ThePriorBreaksTiesByTheBlocksReuse) {
  const SearchSpace space =
      SearchSpace::generate(te::make_workload("matmul:M=1024,N=1024,K=1024"), gpu());
  const auto config = [&](const std::string& i, const std::string& j) {
    return space.from_json(support::Json::parse(
        R"({"sketch": "C:gpu-tile+shared", "knobs": {"C.i.split": )" + i + R"(, "C.j.split": )" +
        j + R"(, "C.local.k.split": [8], "A.shared.layout": [1], "C.local.interleave": [1],
            "C.local.unroll": [512], "C.shared.vector": [4]}})"));
  };
  const double square = space.prior(config("[16,8]", "[16,8]"));
  const double wide = space.prior(config("[4,16]", "[64,4]"));
  EXPECT_GT(square, wide);
  EXPECT_GT(wide, 0.95 * square);  // a tie-breaker only
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
          "C.local.k.split": [32], "A.shared.layout": [1], "C.local.interleave": [0],
          "C.local.unroll": [0],
          "C.shared.vector": [4]}})"));
  const target::Target hopper = target::Target::parse("cuda -arch=sm_90");
  const ir::LoweredFunc f =
      lower::lower(schedule::apply_steps(w, space.steps(config)), hopper, "f");
  const codegen::CudaModule m = codegen::generate_cuda(f, hopper);
  // A's rows padded to 132 floats: 2 x (16896 + 16384) bytes.
  EXPECT_EQ(m.kernels[0].shared_bytes, 66560);
  EXPECT_EQ(m.kernels[0].dynamic_shared_bytes, 66560);
  // The manifest and the measurer's blob carry it: the launch passes it as dynamic memory.
  const support::Json json = codegen::kernel_json(m.kernels[0]);
  EXPECT_EQ(json.at("dynamic_shared_bytes").as_int(), 66560);
  EXPECT_EQ(codegen::kernel_from_json(json).dynamic_shared_bytes, 66560);
  EXPECT_NE(codegen::launch_summary(m).find("shared 66560 bytes (dynamic)"), std::string::npos);
  EXPECT_NE(m.source.find("TT_DYNAMIC_SHARED(66560);"), std::string::npos) << m.source;
  EXPECT_NE(m.source.find("float* A_shared = reinterpret_cast<float*>(tt_shared + 0);"),
            std::string::npos)
      << m.source;
  EXPECT_NE(m.source.find("float* B_shared = reinterpret_cast<float*>(tt_shared + 33792);"),
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
  EXPECT_EQ(single.kernels[0].shared_bytes, 33280);
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

// SPDX-License-Identifier: Apache-2.0
// The GPU sketch rules (Ansor's GPU structure, reduced): element-wise producers are inlined; a
// stage with data reuse is tiled over blocks and threads with a per-thread accumulator
// (cache_write local) in two sketches: "gpu-tile+local" reads its inputs from global memory, and
// "gpu-tile+shared" (also "+vthread", sketch/gpu_shared.cpp) stages every input through shared
// memory, fetched by the block's threads together at each outer reduction step. Every other stage
// fuses its data-parallel axes and binds them to blocks and threads, its reduction running inside
// each thread.
#include "search/sketch/rules.h"
#include "search/sketch/split_factors.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace tensortune::search::detail {
namespace {

/// Threads per block a fused data-parallel loop may be split into.
constexpr int64_t kThreadChoices[] = {32, 64, 128, 256, 512, 1024};
/// Largest per-axis thread factor and per-thread tile of a tiled stage.
constexpr int64_t kMaxAxisThreads = 64;
constexpr int64_t kMaxThreadTile = 8;

/// A stage without data reuse: fuse the data-parallel axes, split by the thread count, bind.
class GpuGenericPlan final : public StagePlan {
 public:
  GpuGenericPlan(const StageInfo& stage, const GpuShape& gpu, KnobTable& knobs)
      : stage_(stage.name), gpu_(gpu) {
    int64_t extent = 1;
    for (const schedule::Axis& it : stage.data_axes) {
      data_.push_back(it.name);
      extent *= it.extent;
    }
    extent_ = extent;
    if (data_.empty()) {
      return;  // a reduction to one value: one thread
    }
    std::vector<int64_t> threads;
    for (int64_t t : kThreadChoices) {
      if (t <= extent || threads.empty()) {
        threads.push_back(std::min(t, extent));
      }
    }
    threads_ = knobs.add_values(stage_ + ".threads", KnobKind::Choice, threads);
    if (!stage.reduce_axes.empty()) {
      unroll_ = knobs.add_values(stage_ + ".unroll", KnobKind::Unroll, {0, 16, 64});
    }
  }

  void emit(Phase phase, const Values& v, Steps& out) const override {
    if (phase != Phase::Loops || data_.empty()) {
      return;
    }
    const std::string fused = emit_fuse(stage_, data_, out);
    out.emplace_back(schedule::Split{stage_, fused, threads_.one(v), false});
    out.emplace_back(schedule::Annotate{stage_, fused + ".o", ir::ForKind::BlockX});
    out.emplace_back(schedule::Annotate{stage_, fused + ".i", ir::ForKind::ThreadX});
    if (unroll_.one(v) > 0) {
      out.emplace_back(schedule::PragmaUnroll{stage_, fused + ".i", unroll_.one(v)});
    }
  }

  double prior(const Values& v) const override {
    if (data_.empty()) {
      return 1.0;
    }
    const int64_t threads = threads_.one(v);
    const double blocks = std::ceil(static_cast<double>(extent_) / static_cast<double>(threads));
    // A stage smaller than a warp has no better choice: its thread count is not held against it.
    return (extent_ < 32 ? 1.0 : gpu_threads_prior(threads)) *
           gpu_fill_prior(blocks, threads, gpu_);
  }

 private:
  std::string stage_;
  GpuShape gpu_;
  std::vector<std::string> data_;
  int64_t extent_ = 1;
  KnobSlot threads_{-1, {1}}, unroll_{-1, {0}};
};

/// A stage with data reuse: C.local (the accumulator) per thread, C tiled over blocks and threads.
class GpuTilePlan final : public StagePlan {
 public:
  GpuTilePlan(const StageInfo& stage, const GpuShape& gpu, KnobTable& knobs)
      : stage_(stage.name), gpu_(gpu) {
    for (const schedule::Axis& it : stage.data_axes) {
      std::vector<std::vector<int64_t>> choices;
      for (const std::vector<int64_t>& c : split_choices(it.extent, 2, kMaxThreadTile)) {
        if (c[0] <= kMaxAxisThreads) {
          choices.push_back(c);
        }
      }
      extents_.push_back(it.extent);
      data_.push_back({it.name, knobs.add(stage_ + "." + it.name + ".split", KnobKind::Split,
                                          std::move(choices))});
    }
    for (const schedule::Axis& it : stage.reduce_axes) {
      reduce_.push_back({it.name, knobs.add(stage_ + ".local." + it.name + ".split",
                                            KnobKind::Split, split_choices(it.extent, 1))});
    }
    unroll_ = knobs.add_values(stage_ + ".local.unroll", KnobKind::Unroll, {0, 16, 64, 512});
  }

  void emit(Phase phase, const Values& v, Steps& out) const override {
    if (phase == Phase::CacheWrite) {
      out.emplace_back(schedule::CacheWrite{stage_, ir::MemoryScope::Local});
      return;
    }
    if (phase != Phase::Loops) {
      return;
    }
    std::vector<std::string> blocks, threads, inner;
    for (const auto& [axis, slot] : data_) {
      emit_split_chain(stage_, axis, slot.of(v), out);
      std::vector<std::string> names = level_names(axis, 2);
      blocks.push_back(names[0]);
      threads.push_back(names[1]);
      inner.push_back(names[2]);
    }
    std::vector<std::string> order = blocks;
    order.insert(order.end(), threads.begin(), threads.end());
    order.insert(order.end(), inner.begin(), inner.end());
    out.emplace_back(schedule::Reorder{stage_, order});
    const std::string block = emit_fuse(stage_, blocks, out);
    const std::string thread = emit_fuse(stage_, threads, out);
    out.emplace_back(schedule::Annotate{stage_, block, ir::ForKind::BlockX});
    out.emplace_back(schedule::Annotate{stage_, thread, ir::ForKind::ThreadX});
    const std::string local = stage_ + ".local";
    out.emplace_back(schedule::ComputeAt{local, stage_, thread});
    std::vector<std::string> local_order;
    for (const auto& [axis, slot] : reduce_) {
      emit_split_chain(local, axis, slot.of(v), out);
      local_order.push_back(axis + ".o");
    }
    for (const auto& [axis, slot] : reduce_) {
      local_order.push_back(axis + ".i");
    }
    for (const auto& [axis, slot] : data_) {
      local_order.push_back(axis);
    }
    if (!reduce_.empty()) {
      out.emplace_back(schedule::Reorder{local, local_order});
    }
    if (unroll_.one(v) > 0 && !local_order.empty()) {
      out.emplace_back(schedule::PragmaUnroll{local, local_order.front(), unroll_.one(v)});
    }
  }

  double prior(const Values& v) const override {
    // Every input read from global memory by each thread on its own: reuse rests on the caches
    // alone, so the shared-memory sketches come first where they lower.
    constexpr double kGlobalReads = 0.5;
    int64_t threads = 1, accumulators = 1;
    double blocks = 1;
    for (size_t d = 0; d < data_.size(); ++d) {
      const std::vector<int64_t>& f = data_[d].second.of(v);
      threads *= f[0];
      accumulators *= f[1];
      blocks *= std::ceil(static_cast<double>(extents_[d]) / static_cast<double>(f[0] * f[1]));
    }
    return kGlobalReads * gpu_threads_prior(threads) *
           gpu_accumulators_prior(accumulators, 0, threads) * gpu_fill_prior(blocks, threads, gpu_);
  }

 private:
  std::string stage_;
  GpuShape gpu_;
  std::vector<std::pair<std::string, KnobSlot>> data_, reduce_;
  std::vector<int64_t> extents_;
  KnobSlot unroll_{-1, {0}};
};

}  // namespace

/// Threads per block: a partial warp wastes lanes, a few warps hide little latency, and a block
/// over 512 threads leaves a multiprocessor fewer blocks to switch between.
double gpu_threads_prior(int64_t threads) {
  return threads < 32 ? 0.1 : threads < 64 ? 0.4 : threads < 128 ? 0.8 : threads > 512 ? 0.5 : 1.0;
}

/// Accumulators a thread keeps: each reuses what it loads across the others. With twice the
/// operands of a reduction step (unrolled, the next step's loads run ahead of this one's FMAs)
/// and about 20 registers of addresses and indices, they must fit what each thread of the block
/// gets of a multiprocessor's 64K registers (255 at most), or ptxas spills: 16x16 threads of
/// 8x8 need 116 and used 117 (sm_90); 16x32 threads of 16x8 need 196, got 128 and spilled.
double gpu_accumulators_prior(int64_t accumulators, int64_t operands, int64_t threads) {
  constexpr int64_t kRegisterFile = 65536, kMaxPerThread = 255, kAddressing = 20;
  const int64_t lanes = std::max<int64_t>(32, (threads + 31) / 32 * 32);
  const int64_t budget = std::min(kMaxPerThread, kRegisterFile / lanes / 8 * 8);
  const int64_t needed = accumulators + 2 * operands + kAddressing;
  return needed > budget ? 0.1 : accumulators < 4 ? 0.3 : 1.0;
}

GpuShape gpu_shape(const target::Target& target) {
  // An unknown or newer architecture is taken as an H100's.
  static const std::map<std::string, int64_t> kMultiprocessors = {
      {"sm_70", 80}, {"sm_75", 40}, {"sm_80", 108}, {"sm_86", 84}, {"sm_89", 142}, {"sm_90", 132}};
  GpuShape shape;
  const auto it = kMultiprocessors.find(target.arch);
  if (it != kMultiprocessors.end()) {
    shape.multiprocessors = it->second;
  }
  shape.async_copies = target.sm_version() >= 80;  // cp.async, as codegen pipelines fetches
  return shape;
}

double gpu_fill_prior(double blocks, int64_t threads, const GpuShape& gpu) {
  constexpr double kWarpsPerMultiprocessor = 8;
  constexpr double kMaxResidentThreads = 2048;
  const double warps = blocks * std::ceil(static_cast<double>(threads) / 32);
  const double sms = static_cast<double>(gpu.multiprocessors);
  // A block runs on one multiprocessor: with fewer blocks than multiprocessors the rest idle, and
  // the throughput falls with the busy share. The warps each busy one holds hide latency less
  // than in proportion.
  const double busy = std::min(std::max(blocks, 1.0), sms);
  double p = busy / sms * std::sqrt(std::min(1.0, warps / busy / kWarpsPerMultiprocessor));
  // Past one wave of resident blocks, a partial last wave idles part of the device.
  const double slots =
      sms * std::max(1.0, std::floor(kMaxResidentThreads / static_cast<double>(threads)));
  if (blocks > slots) {
    p *= blocks / (std::ceil(blocks / slots) * slots);
  }
  return p;
}

PlanRef make_gpu_generic_plan(const StageInfo& stage, const GpuShape& gpu, KnobTable& knobs) {
  return std::make_shared<GpuGenericPlan>(stage, gpu, knobs);
}

std::vector<Sketch> gpu_sketches(const te::Workload& workload, const GpuShape& gpu) {
  DagInfo dag = analyse(workload);
  enum class Tiling { Local, Shared, SharedVthread };
  const bool any_reuse = std::any_of(dag.stages.begin(), dag.stages.end(),
                                     [](const StageInfo& s) { return s.has_reuse; });
  std::vector<Sketch> sketches;
  for (Tiling tiling : {Tiling::Local, Tiling::Shared, Tiling::SharedVthread}) {
    if (tiling != Tiling::Local && !any_reuse) {
      break;  // only reuse stages have a shared-memory variant
    }
    KnobTable knobs;
    std::vector<PlanRef> plans;
    std::string name;
    // Shared tilings fuse a reuse stage's element-wise epilogue: its output is tiled with it.
    std::map<std::string, const StageInfo*> epilogue_of;
    std::set<std::string> fused_outputs;
    for (const StageInfo& s : dag.stages) {
      const std::vector<std::string> chain = epilogue_chain(dag, s);
      if (tiling != Tiling::Local && s.has_reuse && !chain.empty()) {
        epilogue_of[s.name] = dag.find(chain.back());
        fused_outputs.insert(chain.back());
      }
    }
    for (auto it = dag.stages.rbegin(); it != dag.stages.rend(); ++it) {
      const StageInfo& s = *it;
      if (fused_outputs.count(s.name) != 0) {
        continue;  // tiled by its producer's plan
      }
      if (!s.is_reduction && !s.is_output) {
        plans.push_back(make_inline_plan(s.name));
        name += (name.empty() ? "" : " ") + s.name + ":inline";
      } else if (s.has_reuse && tiling == Tiling::Local) {
        plans.push_back(std::make_shared<GpuTilePlan>(s, gpu, knobs));
        name += (name.empty() ? "" : " ") + s.name + ":gpu-tile+local";
      } else if (s.has_reuse) {
        const bool vthread = tiling == Tiling::SharedVthread;
        auto epilogue = epilogue_of.find(s.name);
        const StageInfo* output = epilogue == epilogue_of.end() ? nullptr : epilogue->second;
        plans.push_back(make_gpu_shared_tile_plan(s, output, dag, vthread, gpu, knobs));
        name += (name.empty() ? "" : " ") + s.name +
                (vthread ? ":gpu-tile+shared+vthread" : ":gpu-tile+shared") +
                (output != nullptr ? "+fused" : "");
      } else {
        plans.push_back(std::make_shared<GpuGenericPlan>(s, gpu, knobs));
      }
    }
    sketches.push_back(make_sketch(name.empty() ? "gpu-generic" : name, knobs, std::move(plans)));
  }
  if (std::optional<Sketch> cross_thread = gpu_cross_thread_sketch(dag, gpu)) {
    sketches.push_back(std::move(*cross_thread));  // sketch/gpu_reduce.cpp
  }
  return sketches;
}

}  // namespace tensortune::search::detail

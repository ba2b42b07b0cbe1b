// SPDX-License-Identifier: Apache-2.0
// The GPU sketch rules (Ansor's GPU structure, reduced): element-wise producers are inlined; a
// stage with data reuse gets a register-tiled accumulator (cache_write local) per thread, its
// data-parallel axes split into block / thread / per-thread levels bound to blockIdx.x and
// threadIdx.x, and its reduction split in two; every other stage fuses its data-parallel axes and
// binds them to blocks and threads, its reduction running inside each thread. Not yet: shared-
// memory staging of inputs (needs bound inference over the threads of a block), virtual threads,
// cross-thread reductions.
#include "sketch_rules.h"
#include "split_factors.h"
#include "tensortune/support/error.h"

#include <algorithm>

namespace tensortune::search::detail {
namespace {

/// Threads per block a fused data-parallel loop may be split into.
constexpr int64_t kThreadChoices[] = {32, 64, 128, 256, 512, 1024};
/// Largest per-axis thread factor and per-thread tile of a tiled stage.
constexpr int64_t kMaxAxisThreads = 64;
constexpr int64_t kMaxThreadTile = 8;

/// Fuses `axes` (when more than one) and returns the loop's name.
std::string fuse(const std::string& stage, const std::vector<std::string>& axes, Steps& out) {
  if (axes.size() > 1) {
    out.emplace_back(schedule::Fuse{stage, axes});
  }
  return schedule::fused_axis_name(axes);
}

/// A stage without data reuse: fuse the data-parallel axes, split by the thread count, bind.
class GpuGenericPlan final : public StagePlan {
 public:
  GpuGenericPlan(const StageInfo& stage, KnobTable& knobs) : stage_(stage.name) {
    int64_t extent = 1;
    for (const schedule::Iter& it : stage.data_axes) {
      data_.push_back(it.name);
      extent *= it.extent;
    }
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
    const std::string fused = fuse(stage_, data_, out);
    out.emplace_back(schedule::Split{stage_, fused, threads_.one(v), false});
    out.emplace_back(schedule::Annotate{stage_, fused + ".o", ir::ForKind::BlockX});
    out.emplace_back(schedule::Annotate{stage_, fused + ".i", ir::ForKind::ThreadX});
    if (unroll_.one(v) > 0) {
      out.emplace_back(schedule::PragmaUnroll{stage_, fused + ".i", unroll_.one(v)});
    }
  }

 private:
  std::string stage_;
  std::vector<std::string> data_;
  KnobSlot threads_{-1, {1}}, unroll_{-1, {0}};
};

/// A stage with data reuse: C.local (the accumulator) per thread, C tiled over blocks and threads.
class GpuTilePlan final : public StagePlan {
 public:
  GpuTilePlan(const StageInfo& stage, KnobTable& knobs) : stage_(stage.name) {
    for (const schedule::Iter& it : stage.data_axes) {
      std::vector<std::vector<int64_t>> choices;
      for (const std::vector<int64_t>& c : split_choices(it.extent, 2, kMaxThreadTile)) {
        if (c[0] <= kMaxAxisThreads) {
          choices.push_back(c);
        }
      }
      data_.push_back({it.name, knobs.add(stage_ + "." + it.name + ".split", KnobKind::Split,
                                          std::move(choices))});
    }
    for (const schedule::Iter& it : stage.reduce_axes) {
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
    const std::string block = fuse(stage_, blocks, out);
    const std::string thread = fuse(stage_, threads, out);
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

 private:
  std::string stage_;
  std::vector<std::pair<std::string, KnobSlot>> data_, reduce_;
  KnobSlot unroll_{-1, {0}};
};

}  // namespace

std::vector<Sketch> gpu_sketches(const te::Workload& workload) {
  DagInfo dag = analyse(workload);
  KnobTable knobs;
  std::vector<PlanRef> plans;
  std::string name;
  for (auto it = dag.stages.rbegin(); it != dag.stages.rend(); ++it) {
    const StageInfo& s = *it;
    if (!s.is_reduction && !s.is_output) {
      plans.push_back(make_inline_plan(s.name));
      name += (name.empty() ? "" : " ") + s.name + ":inline";
    } else if (s.has_reuse) {
      plans.push_back(std::make_shared<GpuTilePlan>(s, knobs));
      name += (name.empty() ? "" : " ") + s.name + ":gpu-tile+local";
    } else {
      plans.push_back(std::make_shared<GpuGenericPlan>(s, knobs));
    }
  }
  return {make_sketch(name.empty() ? "gpu-generic" : name, knobs, std::move(plans))};
}

}  // namespace tensortune::search::detail

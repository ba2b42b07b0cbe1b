// SPDX-License-Identifier: Apache-2.0
// The GPU sketch rules (Ansor's GPU structure, reduced): element-wise producers are inlined; a
// stage with data reuse is tiled over blocks and threads with a per-thread accumulator
// (cache_write local) in two sketches: "gpu-tile+local" reads its inputs from global memory, and
// "gpu-tile+shared" (also "+vthread") stages every input through shared memory, fetched by the
// block's threads together at each outer reduction step. Every other stage fuses its data-parallel
// axes and binds them to blocks and threads, its reduction running inside each thread.
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

/// Threads per block: a partial warp wastes lanes, a few warps hide little latency, and a block
/// over 512 threads leaves a multiprocessor fewer blocks to switch between.
double threads_prior(int64_t threads) {
  return threads < 32 ? 0.1 : threads < 64 ? 0.4 : threads < 128 ? 0.8 : threads > 512 ? 0.5 : 1.0;
}

/// Accumulators a thread keeps: each reuses what it loads across the others, and past 128 they
/// spill out of the registers.
double accumulators_prior(int64_t accumulators) {
  constexpr int64_t kMaxAccumulators = 128;
  return accumulators < 4 ? 0.3 : accumulators > kMaxAccumulators ? 0.1 : 1.0;
}

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
    return (extent_ < 32 ? 1.0 : threads_prior(threads)) * gpu_fill_prior(blocks, threads, gpu_);
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
    return kGlobalReads * threads_prior(threads) * accumulators_prior(accumulators) *
           gpu_fill_prior(blocks, threads, gpu_);
  }

 private:
  std::string stage_;
  GpuShape gpu_;
  std::vector<std::pair<std::string, KnobSlot>> data_, reduce_;
  std::vector<int64_t> extents_;
  KnobSlot unroll_{-1, {0}};
};

/// The thread indices, innermost first: the last data axes of a tiled stage bind to them.
constexpr ir::ForKind kThreadKinds[] = {ir::ForKind::ThreadX, ir::ForKind::ThreadY,
                                        ir::ForKind::ThreadZ};
/// Largest per-thread tile of one axis.
constexpr int64_t kMaxPerThread = 16;
/// Largest reduction step staged through shared memory per axis.
constexpr int64_t kMaxSharedReduction = 32;

int64_t thread_limit(ir::ForKind kind) {
  return kind == ir::ForKind::ThreadZ ? 64 : 1024;
}

/// Shared-memory tiling (Ansor's GPU "S S S R R S R S" reduced to S S S R S R S): the output
/// stage C is split per data axis into blocks, threads and a per-thread tile; its accumulator
/// C.local is computed per block (at the fused block loop) over the same threads, with the
/// reduction split in two; every input C reads is copied into shared memory at C.local's outer
/// reduction loop by all threads of the block (the fused copy loop split over the same thread
/// indices, its innermost piece optionally vectorized). The accumulator's layout is blocked so
/// that each thread's elements are dense (the CUDA generator then keeps them in registers).
///
/// Without virtual threads, a thread owns a contiguous sub-tile (axis = thread * P + p); with
/// them the sub-tiles interleave (axis = v * T + thread), so neighbouring threads touch
/// neighbouring elements: coalesced global stores and conflict-free shared reads.
///
/// With an element-wise epilogue (C -> E1 -> ... -> En, the output: bias, relu, gelu), the
/// epilogue is fused: C becomes a copy of C.local and is inlined, E1..En-1 are inlined by their
/// own plans, and En takes C's place as the tiled outer stage, so the kernel writes the output
/// from registers once.
class GpuSharedTilePlan final : public StagePlan {
 public:
  GpuSharedTilePlan(const StageInfo& stage,
                    const StageInfo* epilogue_output,
                    const DagInfo& dag,
                    bool vthread,
                    const GpuShape& gpu,
                    KnobTable& knobs)
      : stage_(stage.name),
        outer_(epilogue_output != nullptr ? epilogue_output->name : stage.name),
        vthread_(vthread),
        gpu_(gpu) {
    TT_CHECK(epilogue_output == nullptr ||
             epilogue_output->data_axes.size() == stage.data_axes.size())
        << "epilogue '" << outer_ << "' of '" << stage_ << "' has another shape";
    // The last (up to) three data axes longer than 1 get threads, the innermost threadIdx.x.
    std::vector<ir::ForKind> kinds(stage.data_axes.size(), ir::ForKind::Serial);
    size_t bound = 0;
    for (size_t d = stage.data_axes.size(); d-- > 0 && bound < 3;) {
      if (stage.data_axes[d].extent > 1) {
        kinds[d] = kThreadKinds[bound++];
      }
    }
    for (size_t d = 0; d < stage.data_axes.size(); ++d) {
      const schedule::Axis& it = stage.data_axes[d];
      const bool threaded = kinds[d] != ir::ForKind::Serial;
      // (outer, inner) factors: (threads, per-thread) or, with virtual threads, (per-thread,
      // threads).
      const int64_t max_inner = vthread_ ? thread_limit(kinds[d]) : kMaxPerThread;
      std::vector<std::vector<int64_t>> choices;
      for (const std::vector<int64_t>& c : split_choices(it.extent, 2, max_inner)) {
        const int64_t threads = vthread_ ? c[1] : c[0];
        const int64_t per_thread = vthread_ ? c[0] : c[1];
        if (per_thread <= kMaxPerThread &&
            (threaded ? threads <= thread_limit(kinds[d]) : threads == 1)) {
          choices.push_back(c);
        }
      }
      const std::string outer_name =
          epilogue_output != nullptr ? epilogue_output->data_axes[d].name : it.name;
      data_.push_back(
          Axis{it.name, outer_name, it.extent, kinds[d],
               knobs.add(stage_ + "." + it.name + ".split", KnobKind::Split, std::move(choices))});
    }
    for (const schedule::Axis& it : stage.reduce_axes) {
      reduce_.push_back(
          {it.name, knobs.add(stage_ + ".local." + it.name + ".split", KnobKind::Split,
                              split_choices(it.extent, 1, kMaxSharedReduction))});
    }
    for (const te::OperationRef& input : stage.op->inputs) {
      if (std::find(inputs_.begin(), inputs_.end(), input->name) == inputs_.end()) {
        inputs_.push_back(input->name);
        input_axes_.push_back(dag.copy_axis_names(input->name));
        input_uses_.push_back(data_axes_read(stage, input->name));
      }
    }
    unroll_ = knobs.add_values(stage_ + ".local.unroll", KnobKind::Unroll, {0, 16, 64, 512});
    fetch_vector_ = knobs.add_values(stage_ + ".shared.vector", KnobKind::VectorLength, {1, 2, 4});
  }

  void emit(Phase phase, const Values& v, Steps& out) const override {
    const std::string local = stage_ + ".local";
    if (phase == Phase::CacheWrite) {
      std::vector<schedule::LayoutBlock> blocks;
      for (size_t d = 0; d < data_.size(); ++d) {
        const int64_t f = block_factor(data_[d], v);
        if (f > 1 && data_[d].extent % f == 0) {
          blocks.push_back(schedule::LayoutBlock{static_cast<int64_t>(d), f});
        }
      }
      out.emplace_back(schedule::CacheWrite{stage_, ir::MemoryScope::Local, blocks});
      return;
    }
    if (phase == Phase::CacheRead) {
      for (const std::string& input : inputs_) {
        out.emplace_back(schedule::CacheRead{input, ir::MemoryScope::Shared, {local}});
      }
      return;
    }
    if (phase == Phase::Inline && outer_ != stage_) {
      out.emplace_back(schedule::ComputeInline{stage_});  // now a copy of C.local
      return;
    }
    if (phase != Phase::Loops) {
      return;
    }
    // C (or the epilogue's output): blocks (fused, blockIdx.x), threads, per-thread tile.
    std::vector<std::string> blocks, threads, inner;
    for (const Axis& a : data_) {
      emit_split_chain(outer_, a.outer_name, a.slot.of(v), out);
      const std::vector<std::string> names = level_names(a.outer_name, 2);
      blocks.push_back(names[0]);
      threads.push_back(vthread_ ? names[2] : names[1]);
      inner.push_back(vthread_ ? names[1] : names[2]);
    }
    std::vector<std::string> order = blocks;
    order.insert(order.end(), threads.begin(), threads.end());
    order.insert(order.end(), inner.begin(), inner.end());
    out.emplace_back(schedule::Reorder{outer_, order});
    const std::string block = emit_fuse(outer_, blocks, out);
    out.emplace_back(schedule::Annotate{outer_, block, ir::ForKind::BlockX});
    bind_threads(outer_, threads, v, out);

    // C.local at the block: outer reduction, threads, inner reduction, per-thread tile.
    out.emplace_back(schedule::ComputeAt{local, outer_, block});
    std::vector<std::string> local_threads, local_inner, outer_reduce, inner_reduce;
    for (const Axis& a : data_) {
      const int64_t f = block_factor(a, v);
      std::string outer = a.name, in;
      if (f > 1 && a.extent % f == 0) {
        in = a.name + ".b";  // the blocked layout's own axis
      } else if (f > 1) {
        out.emplace_back(schedule::Split{local, a.name, f, false});
        outer = a.name + ".o";
        in = a.name + ".i";
      }
      // Without virtual threads the block is the per-thread tile, with them the threads.
      const bool thread_inside = vthread_ && threads_of(a, v) > 1;
      local_threads.push_back(thread_inside ? in : outer);
      if (!in.empty() || thread_inside) {
        local_inner.push_back(thread_inside ? outer : in);
      }
    }
    for (const auto& [axis, slot] : reduce_) {
      emit_split_chain(local, axis, slot.of(v), out);
      outer_reduce.push_back(axis + ".o");
      inner_reduce.push_back(axis + ".i");
    }
    std::vector<std::string> local_order = outer_reduce;
    local_order.insert(local_order.end(), local_threads.begin(), local_threads.end());
    local_order.insert(local_order.end(), inner_reduce.begin(), inner_reduce.end());
    local_order.insert(local_order.end(), local_inner.begin(), local_inner.end());
    out.emplace_back(schedule::Reorder{local, local_order});
    bind_threads(local, local_threads, v, out);
    const size_t compute = outer_reduce.size() + local_threads.size();
    if (unroll_.one(v) > 0 && compute < local_order.size()) {
      out.emplace_back(schedule::PragmaUnroll{local, local_order[compute], unroll_.one(v)});
    }

    // Each input copied into shared memory at the last outer reduction loop, by every thread.
    if (outer_reduce.empty()) {
      return;  // nothing to stage per step (a reduction always has an axis; kept for safety)
    }
    for (size_t n = 0; n < inputs_.size(); ++n) {
      const std::string shared = inputs_[n] + ".shared";
      out.emplace_back(schedule::ComputeAt{shared, local, outer_reduce.back()});
      std::string loop = emit_fuse(shared, input_axes_[n], out);
      if (fetch_vector_.one(v) > 1) {
        out.emplace_back(schedule::Split{shared, loop, fetch_vector_.one(v), false});
        out.emplace_back(schedule::Annotate{shared, loop + ".i", ir::ForKind::Vectorized});
        loop += ".o";
      }
      for (size_t d = data_.size(); d-- > 0;) {
        const int64_t t = threads_of(data_[d], v);
        if (data_[d].kind == ir::ForKind::Serial || t <= 1) {
          continue;
        }
        out.emplace_back(schedule::Split{shared, loop, t, false});
        out.emplace_back(schedule::Annotate{shared, loop + ".i", data_[d].kind});
        loop += ".o";
      }
    }
  }

  double prior(const Values& v) const override {
    int64_t threads = 1, accumulators = 1;
    double blocks = 1;
    for (const Axis& a : data_) {
      threads *= threads_of(a, v);
      accumulators *= per_thread(a, v);
      blocks *= std::ceil(static_cast<double>(a.extent) /
                          static_cast<double>(threads_of(a, v) * per_thread(a, v)));
    }
    double p = threads_prior(threads) * accumulators_prior(accumulators);
    // Shared-memory loads per FMA: per reduction element a thread reads, of each input, the
    // elements its tile spans along the data axes that input's index uses (a GEMM's 8x8 tile: 8
    // of A, 8 of B for 64 FMAs). Below 4 FMAs a load, shared-memory issue bounds the kernel
    // before the FMA pipe does.
    double loads = 0;
    for (const std::vector<size_t>& uses : input_uses_) {
      double n = 1;
      for (size_t d : uses)
        n *= static_cast<double>(per_thread(data_[d], v));
      loads += n;
    }
    if (loads > 0) {
      p *= std::sqrt(std::min(1.0, static_cast<double>(accumulators) / loads / 4));
    }
    // A short reduction step pays a pair of barriers for little work.
    int64_t step = 1;
    for (const auto& [axis, slot] : reduce_)
      step *= slot.of(v).back();
    p *= step >= 8 ? 1.0 : step >= 4 ? 0.8 : step >= 2 ? 0.6 : 0.4;
    p *= fetch_vector_.one(v) >= 4 ? 1.0 : fetch_vector_.one(v) == 2 ? 0.9 : 0.8;
    return p * gpu_fill_prior(blocks, threads, gpu_);
  }

 private:
  struct Axis {
    std::string name;
    std::string outer_name;  ///< the same axis of the outer stage (the epilogue's output)
    int64_t extent = 1;
    ir::ForKind kind = ir::ForKind::Serial;  ///< the thread index, Serial for none
    KnobSlot slot;
  };

  int64_t threads_of(const Axis& a, const Values& v) const {
    return a.slot.of(v)[vthread_ ? 1 : 0];
  }
  int64_t per_thread(const Axis& a, const Values& v) const {
    return a.slot.of(v)[vthread_ ? 0 : 1];
  }
  /// The accumulator's block of axis `a`: what varies fastest inside one thread's elements.
  int64_t block_factor(const Axis& a, const Values& v) const {
    if (vthread_ && threads_of(a, v) > 1) {
      return threads_of(a, v);
    }
    return per_thread(a, v);
  }
  /// Binds each data axis's thread loop in `loops` (one per data axis) that has threads.
  void bind_threads(const std::string& stage,
                    const std::vector<std::string>& loops,
                    const Values& v,
                    Steps& out) const {
    for (size_t d = 0; d < data_.size(); ++d) {
      if (data_[d].kind != ir::ForKind::Serial && threads_of(data_[d], v) > 1) {
        out.emplace_back(schedule::Annotate{stage, loops[d], data_[d].kind});
      }
    }
  }

  std::string stage_, outer_;
  bool vthread_ = false;
  GpuShape gpu_;
  std::vector<Axis> data_;
  std::vector<std::pair<std::string, KnobSlot>> reduce_;
  std::vector<std::string> inputs_;
  std::vector<std::vector<std::string>> input_axes_;
  std::vector<std::vector<size_t>> input_uses_;  ///< per input: the data axes its index reads
  KnobSlot unroll_{-1, {0}}, fetch_vector_{-1, {1}};
};

}  // namespace

GpuShape gpu_shape(const target::Target& target) {
  // An unknown or newer architecture is taken as an H100's.
  static const std::map<std::string, int64_t> kMultiprocessors = {
      {"sm_70", 80}, {"sm_75", 40}, {"sm_80", 108}, {"sm_86", 84}, {"sm_89", 142}, {"sm_90", 132}};
  GpuShape shape;
  const auto it = kMultiprocessors.find(target.arch);
  if (it != kMultiprocessors.end()) {
    shape.multiprocessors = it->second;
  }
  return shape;
}

double gpu_fill_prior(double blocks, int64_t threads, const GpuShape& gpu) {
  constexpr double kWarpsPerMultiprocessor = 8;
  constexpr double kMaxResidentThreads = 2048;
  const double warps = blocks * std::ceil(static_cast<double>(threads) / 32);
  const double sms = static_cast<double>(gpu.multiprocessors);
  double p = std::sqrt(std::min(1.0, warps / (sms * kWarpsPerMultiprocessor)));
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
        plans.push_back(std::make_shared<GpuSharedTilePlan>(s, output, dag, vthread, gpu, knobs));
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

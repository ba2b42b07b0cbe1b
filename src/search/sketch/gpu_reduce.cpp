// SPDX-License-Identifier: Apache-2.0
// The GPU cross-thread reduction rule (Ansor's GPU rule "cross-thread reduction", as TVM's
// allreduce schedules do it): a reduction without data reuse (softmax's row max and sum,
// layer_norm's mean and variance, a sum of everything), or with too few outputs for its reuse to
// matter (a matrix-vector product), shares each row among the threads of a block instead of
// running it in one thread. Its data-parallel axes are fused over blocks
// (a few rows per block on threadIdx.y when the rows divide evenly, so every thread reaches the
// combine), its reduction axes fused and split so that the inner part, a thread-count knob, is
// bound to threadIdx.x: thread t reads elements t, t + T, t + 2T, ... (adjacent threads read
// adjacent elements). It is a second sketch beside gpu-generic, whose rows run in one thread.
#include "search/sketch/rules.h"

#include <algorithm>

namespace tensortune::search::detail {
namespace {

/// Threads along a reduction and rows per block a cross-thread reduction may use.
constexpr int64_t kReduceThreads[] = {32, 64, 128, 256, 512, 1024};
constexpr int64_t kRowsPerBlock[] = {1, 2, 4, 8, 16};
constexpr int64_t kMaxThreadsPerBlock = 1024;
/// Below this many reduced elements per row a thread alone is as good (pool2d's 3x3 windows).
constexpr int64_t kMinCrossThreadExtent = 32;

int64_t extent_of(const std::vector<schedule::Axis>& axes) {
  int64_t n = 1;
  for (const schedule::Axis& it : axes) {
    n *= it.extent;
  }
  return n;
}

class GpuReducePlan final : public StagePlan {
 public:
  GpuReducePlan(const StageInfo& stage, const GpuShape& gpu, KnobTable& knobs)
      : stage_(stage.name),
        data_(axis_names(stage.data_axes)),
        reduce_(axis_names(stage.reduce_axes)),
        gpu_(gpu),
        rows_(extent_of(stage.data_axes)) {
    const int64_t extent = extent_of(stage.reduce_axes);
    // At most the reduction's extent: a wider split would leave threads idle, and lowering
    // shrinks the thread loop to the extent, which makes the block no multiple of a warp.
    std::vector<std::vector<int64_t>> choices;
    for (int64_t threads : kReduceThreads) {
      for (int64_t per_block : kRowsPerBlock) {
        if (threads <= extent && rows_ % per_block == 0 &&
            threads * per_block <= kMaxThreadsPerBlock) {
          choices.push_back({threads, per_block});
        }
      }
    }
    shape_ = knobs.add(stage_ + ".threads", KnobKind::Choice, std::move(choices));
    unroll_ = knobs.add_values(stage_ + ".unroll", KnobKind::Unroll, {0, 16, 64});
  }

  void emit(Phase phase, const Values& v, Steps& out) const override {
    if (phase != Phase::Loops) {
      return;
    }
    const int64_t threads = shape_.of(v).at(0);
    const int64_t per_block = shape_.of(v).at(1);
    const std::string r = emit_fuse(stage_, reduce_, out);
    out.emplace_back(schedule::Split{stage_, r, threads, false});
    std::vector<std::string> order;
    std::string block;
    if (!data_.empty()) {
      block = emit_fuse(stage_, data_, out);
      if (per_block > 1) {
        out.emplace_back(schedule::Split{stage_, block, per_block, false});
        order = {block + ".o", block + ".i"};
        block += ".o";
      } else {
        order = {block};
      }
    }
    order.push_back(r + ".i");
    order.push_back(r + ".o");
    out.emplace_back(schedule::Reorder{stage_, order});
    if (!block.empty()) {
      out.emplace_back(schedule::Annotate{stage_, block, ir::ForKind::BlockX});
    }
    if (per_block > 1) {
      out.emplace_back(schedule::Annotate{stage_, order[1], ir::ForKind::ThreadY});
    }
    out.emplace_back(schedule::Annotate{stage_, r + ".i", ir::ForKind::ThreadX});
    if (unroll_.one(v) > 0) {
      out.emplace_back(schedule::PragmaUnroll{stage_, r + ".o", unroll_.one(v)});
    }
  }

  double prior(const Values& v) const override {
    const int64_t per_block = shape_.of(v).at(1);
    return gpu_fill_prior(static_cast<double>(rows_ / per_block), shape_.of(v).at(0) * per_block,
                          gpu_);
  }

 private:
  std::string stage_;
  std::vector<std::string> data_, reduce_;
  GpuShape gpu_;
  int64_t rows_ = 1;
  KnobSlot shape_{-1, {32, 1}}, unroll_{-1, {0}};
};

/// Reuse across more than one output element (a sum of everything into a single element "misses"
/// its extent-1 axis, but nothing is reused).
bool has_real_reuse(const StageInfo& s) {
  return s.has_reuse && extent_of(s.data_axes) > 1;
}

/// Few outputs, each a long sum (a matrix-vector product such as ResNet's classifier, 1000
/// outputs of 512 terms): with one thread per output the device holds at most a warp per
/// multiprocessor, each thread a chain of dependent loads, so the reuse a tiling could exploit is
/// worth less than spreading each sum over threads.
bool few_long_rows(const StageInfo& s, const GpuShape& gpu) {
  const int64_t rows = extent_of(s.data_axes);
  return rows <= gpu.multiprocessors * 32 && extent_of(s.reduce_axes) * 16 >= rows;
}

bool reduces_across_threads(const StageInfo& s, const GpuShape& gpu) {
  return s.is_reduction && !s.is_transform && extent_of(s.reduce_axes) >= kMinCrossThreadExtent &&
         (!has_real_reuse(s) || few_long_rows(s, gpu));
}

}  // namespace

std::optional<Sketch> gpu_cross_thread_sketch(const DagInfo& dag, const GpuShape& gpu) {
  const auto across = [&](const StageInfo& s) {
    return reduces_across_threads(s, gpu);
  };
  const bool worth_it = std::any_of(dag.stages.begin(), dag.stages.end(), across);
  const bool tiled = std::any_of(dag.stages.begin(), dag.stages.end(), [&](const StageInfo& s) {
    return has_real_reuse(s) && !across(s);
  });
  if (!worth_it || tiled) {
    return std::nullopt;  // reuse stages are tiled by the other sketches
  }
  KnobTable knobs;
  std::vector<PlanRef> plans;
  std::string name;
  for (auto it = dag.stages.rbegin(); it != dag.stages.rend(); ++it) {
    const StageInfo& s = *it;
    if (!s.is_reduction && !s.is_output) {
      plans.push_back(make_inline_plan(s.name));
      name += (name.empty() ? "" : " ") + s.name + ":inline";
    } else if (across(s)) {
      plans.push_back(std::make_shared<GpuReducePlan>(s, gpu, knobs));
      name += (name.empty() ? "" : " ") + s.name + ":gpu-cross-thread";
    } else {
      plans.push_back(make_gpu_generic_plan(s, gpu, knobs));
    }
  }
  return make_sketch(name, knobs, std::move(plans));
}

}  // namespace tensortune::search::detail

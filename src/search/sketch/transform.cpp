// SPDX-License-Identifier: Apache-2.0
// The transform rule: small reductions with small output axes (Winograd's data and inverse
// transforms) get their small loops fully unrolled inside a vectorized, parallel nest over the
// large axes, so coefficients written as selects over the small indices fold into constants
// (TVM's Winograd schedules unroll the same loops by hand). A transform may be computed at a tile
// loop of its consumer (the data transform per tile of the batched GEMM's tile axis, the inverse
// per output channel), so its output is a small block that stays in cache instead of a whole
// intermediate tensor written out and read back.
#include "search/sketch/rules.h"
#include "search/sketch/split_factors.h"

#include <algorithm>

namespace tensortune::search::detail {
namespace {

class TransformPlan final : public StagePlan {
 public:
  TransformPlan(const StageInfo& stage, PlanRef consumer, const CpuShape& cpu, KnobTable& knobs)
      : stage_(stage.name), consumer_(std::move(consumer)), cpu_(cpu) {
    bytes_ = stage.op->output.num_elements() * stage.op->output.dtype().bytes();
    for (const schedule::Axis& it : stage.data_axes) {
      (it.extent <= kTransformExtent ? small_ : large_).push_back(it.name);
      if (it.extent > kTransformExtent) {
        large_extents_.push_back(it.extent);
      }
    }
    for (const schedule::Axis& it : stage.reduce_axes) {
      small_.push_back(it.name);
    }
    vector_ = knobs.add_values(stage_ + ".vector", KnobKind::VectorLength,
                               vector_choices(large_extents_.back()));
    reach_ = vector_reach(large_extents_.back(), cpu_.lanes);
    std::vector<int64_t> counts;
    for (size_t p = 0; p <= large_.size(); ++p) {
      counts.push_back(static_cast<int64_t>(p));
    }
    parallel_ = knobs.add_values(stage_ + ".parallel", KnobKind::Parallel, counts);
    if (consumer_ != nullptr && consumer_->num_tile_loops() > 0) {
      std::vector<int64_t> at;
      for (int position = 0; position <= consumer_->num_tile_loops(); ++position) {
        at.push_back(position);
      }
      at_ = knobs.add_values(stage_ + ".at", KnobKind::ComputeLocation, at);
    }
  }

  void emit(Phase phase, const Values& v, Steps& out) const override {
    if (phase != Phase::Loops) {
      return;
    }
    const int64_t lanes = vector_.one(v);
    const std::vector<std::string> outer = outer_loops(v);
    const std::string last = large_.back();
    if (lanes > 1) {
      out.emplace_back(schedule::Split{stage_, last, lanes, false});
    }
    std::vector<std::string> order = outer;
    order.insert(order.end(), small_.begin(), small_.end());
    if (lanes > 1) {
      order.push_back(last + ".i");
    }
    out.emplace_back(schedule::Reorder{stage_, order});
    for (const std::string& axis : small_) {
      out.emplace_back(schedule::Annotate{stage_, axis, ir::ForKind::Unrolled});
    }
    if (lanes > 1) {
      out.emplace_back(schedule::Annotate{stage_, last + ".i", ir::ForKind::Vectorized});
    }
    emit_parallel(stage_, outer, parallel_count(v), out);
    if (attached(v)) {
      const int position = static_cast<int>(at_.one(v));
      out.emplace_back(
          schedule::ComputeAt{stage_, consumer_->tile_stage(), consumer_->tile_loop(v, position)});
    }
  }

  /// Full vectors, and a parallel loop with work for every core unless computed inside the
  /// consumer's loops (whose parallel loop runs it).
  double prior(const Values& v) const override {
    double p = vector_nest_prior(large_extents_, vector_.one(v), reach_,
                                 attached(v) ? -1 : parallel_count(v), cpu_.cores);
    if (!attached(v)) {
      return p * location_prior(bytes_, 1);
    }
    const TileLoopCost cost = consumer_->tile_loop_cost(v, static_cast<int>(at_.one(v)), stage_);
    return p * location_prior(bytes_ / std::max<int64_t>(1, cost.parts), cost.recompute);
  }

  /// The large loops, outermost first (the parallel loop for those fused into it).
  int num_attach_points() const override { return static_cast<int>(large_.size()); }
  std::string attach_stage() const override { return stage_; }
  std::string attach_axis(const Values& v, int level) const override {
    const int64_t p = parallel_count(v);
    const std::vector<std::string> outer = outer_loops(v);
    return p >= 2 && level <= p ? fused_loop(outer, p) : outer.at(static_cast<size_t>(level - 1));
  }
  /// The large loops up to the attach point split the producer's output (its reads use them).
  TileLoopCost tile_loop_cost(const Values& v,
                              int position,
                              const std::string& /*producer*/) const override {
    const int64_t p = parallel_count(v);
    const int64_t last = p >= 2 && position <= p ? p : position;
    TileLoopCost cost;
    for (size_t d = 0; d < large_extents_.size() && static_cast<int64_t>(d) < last; ++d) {
      const int64_t lanes = d + 1 == large_extents_.size() ? vector_.one(v) : 1;
      cost.parts *= (large_extents_[d] + lanes - 1) / lanes;
    }
    return cost;
  }

 private:
  bool attached(const Values& v) const { return at_.index >= 0 && at_.one(v) > 0; }
  int64_t parallel_count(const Values& v) const { return attached(v) ? 0 : parallel_.one(v); }
  /// The large loops outside the unrolled ones: the last one's outer part when vectorized.
  std::vector<std::string> outer_loops(const Values& v) const {
    std::vector<std::string> outer = large_;
    if (vector_.one(v) > 1) {
      outer.back() += ".o";
    }
    return outer;
  }

  std::string stage_;
  PlanRef consumer_;
  /// Large data axes (outside), small data axes then reduction axes (unrolled).
  std::vector<std::string> large_, small_;
  std::vector<int64_t> large_extents_;
  CpuShape cpu_;
  int64_t reach_ = 1;  ///< the widest useful vector: the lanes, or the widest choice
  int64_t bytes_ = 0;  ///< of the whole output
  KnobSlot vector_{-1, {1}}, parallel_{-1, {0}}, at_{-1, {0}};
};

}  // namespace

PlanRef make_transform_plan(const StageInfo& stage,
                            const PlanRef& consumer,
                            const CpuShape& cpu,
                            KnobTable& knobs) {
  return std::make_shared<TransformPlan>(stage, consumer, cpu, knobs);
}

}  // namespace tensortune::search::detail

// SPDX-License-Identifier: Apache-2.0
// The transform rule: small reductions with small output axes (Winograd's data and inverse
// transforms) get their small loops fully unrolled inside a vectorized, parallel nest over the
// large axes, so coefficients written as selects over the small indices fold into constants
// (TVM's Winograd schedules unroll the same loops by hand).
#include "sketch_rules.h"
#include "split_factors.h"

namespace tensortune::search::detail {
namespace {

class TransformPlan final : public StagePlan {
 public:
  TransformPlan(const StageInfo& stage, const CpuShape& cpu, KnobTable& knobs)
      : stage_(stage.name), cpu_(cpu) {
    for (const schedule::Iter& it : stage.data_axes) {
      (it.extent <= kTransformExtent ? small_ : large_).push_back(it.name);
      if (it.extent > kTransformExtent) {
        large_extents_.push_back(it.extent);
      }
    }
    for (const schedule::Iter& it : stage.reduce_axes) {
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
  }

  void emit(Phase phase, const Values& v, Steps& out) const override {
    if (phase != Phase::Loops) {
      return;
    }
    const int64_t lanes = vector_.one(v);
    std::vector<std::string> outer = large_;
    const std::string last = large_.back();
    if (lanes > 1) {
      out.emplace_back(schedule::Split{stage_, last, lanes, false});
      outer.back() = last + ".o";
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
    emit_parallel(stage_, outer, parallel_.one(v), out);
  }

  double prior(const Values& v) const override {
    return vector_nest_prior(large_extents_, vector_.one(v), reach_, parallel_.one(v), cpu_.cores);
  }

 private:
  std::string stage_;
  /// Large data axes (outside), small data axes then reduction axes (unrolled).
  std::vector<std::string> large_, small_;
  std::vector<int64_t> large_extents_;
  CpuShape cpu_;
  int64_t reach_ = 1;  ///< the widest useful vector: the lanes, or the widest choice
  KnobSlot vector_{-1, {1}}, parallel_{-1, {0}};
};

}  // namespace

PlanRef make_transform_plan(const StageInfo& stage, const CpuShape& cpu, KnobTable& knobs) {
  return std::make_shared<TransformPlan>(stage, cpu, knobs);
}

}  // namespace tensortune::search::detail

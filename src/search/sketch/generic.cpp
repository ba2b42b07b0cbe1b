// SPDX-License-Identifier: Apache-2.0
// The inline rule and the generic rule: what every stage without data reuse gets (element-wise
// stages, reductions like softmax's max and sum, pooling, and any compute nobody wrote rules
// for). Ansor (OSDI'20) applies the same annotations after sketch generation (parallel,
// vectorize, auto-unroll) and changes compute locations as a mutation.
#include "search/sketch/rules.h"
#include "search/sketch/split_factors.h"
#include "tensortune/support/error.h"

namespace tensortune::search::detail {

StagePlan::~StagePlan() = default;

std::string StagePlan::attach_axis(const Values& /*values*/, int level) const {
  TT_CHECK(false) << "plan offers no attach point " << level;
  return {};
}

TileLoopCost StagePlan::tile_loop_cost(const Values& /*values*/,
                                       int /*position*/,
                                       const std::string& /*producer*/) const {
  return {};
}

/// The unroll budgets an Unroll knob offers (0 = none).
const std::vector<int64_t>& unroll_choices() {
  static const std::vector<int64_t> kChoices = {0, 16, 64, 512};
  return kChoices;
}

namespace {

class InlinePlan final : public StagePlan {
 public:
  explicit InlinePlan(std::string stage) : stage_(std::move(stage)) {}
  void emit(Phase phase, const Values& /*values*/, Steps& out) const override {
    if (phase == Phase::Inline) {
      out.emplace_back(schedule::ComputeInline{stage_});
    }
  }

 private:
  std::string stage_;
};

class GenericPlan final : public StagePlan {
 public:
  GenericPlan(const StageInfo& stage, PlanRef consumer, const CpuShape& cpu, KnobTable& knobs)
      : stage_(stage.name),
        consumer_(std::move(consumer)),
        cpu_(cpu),
        prepare_(stage.constant_only) {
    for (const schedule::Axis& it : stage.data_axes) {
      data_.push_back(it.name);
      extents_.push_back(it.extent);
    }
    for (const schedule::Axis& it : stage.reduce_axes) {
      reduce_.push_back(it.name);
    }
    if (!data_.empty()) {
      // A reduction that reads its last axis at a stride (a stride-2 max pool's x * 2 + rx)
      // would gather every lane: a pool 128x55x55 ran 3.4x slower vectorized so than scalar.
      vector_ = knobs.add_values(stage_ + ".vector", KnobKind::VectorLength,
                                 stage.is_reduction && stage.last_axis_stepped
                                     ? std::vector<int64_t>{1}
                                     : vector_choices(stage.data_axes.back().extent));
      reach_ = vector_reach(stage.data_axes.back().extent, cpu_.lanes);
      std::vector<int64_t> counts;
      for (size_t p = 0; p <= data_.size(); ++p) {
        counts.push_back(static_cast<int64_t>(p));
      }
      parallel_ = knobs.add_values(stage_ + ".parallel", KnobKind::Parallel, counts);
    }
    if (!data_.empty() || !reduce_.empty()) {
      unroll_ = knobs.add_values(stage_ + ".unroll", KnobKind::Unroll, unroll_choices());
    }
    if (consumer_ != nullptr && consumer_->num_attach_points() > 0) {
      std::vector<int64_t> at;
      for (int level = 0; level <= consumer_->num_attach_points(); ++level) {
        at.push_back(level);
      }
      at_ = knobs.add_values(stage_ + ".at", KnobKind::ComputeLocation, at);
    }
  }

  void emit(Phase phase, const Values& v, Steps& out) const override {
    if (phase != Phase::Loops) {
      return;
    }
    if (!data_.empty() && vector_length(v) > 1) {
      const std::string& last = data_.back();
      out.emplace_back(schedule::Split{stage_, last, vector_length(v), false});
      if (!reduce_.empty()) {
        std::vector<std::string> order = outer_loops(v);
        order.insert(order.end(), reduce_.begin(), reduce_.end());
        order.push_back(last + ".i");
        out.emplace_back(schedule::Reorder{stage_, order});
      }
      out.emplace_back(schedule::Annotate{stage_, last + ".i", ir::ForKind::Vectorized});
    }
    int64_t p = parallel_count(v);
    std::vector<std::string> outer = outer_loops(v);
    emit_parallel(stage_, outer, p, out);
    std::string first = outer.empty() ? (reduce_.empty() ? "" : reduce_[0]) : attach_axis(v, 1);
    if (!first.empty() && unroll_.one(v) > 0) {
      out.emplace_back(schedule::PragmaUnroll{stage_, first, unroll_.one(v)});
    }
    if (attached(v)) {
      int level = static_cast<int>(at_.one(v));
      out.emplace_back(
          schedule::ComputeAt{stage_, consumer_->attach_stage(), consumer_->attach_axis(v, level)});
    }
  }

  /// Full vectors, and a parallel loop with work for every core (unless computed inside another
  /// stage's loops, where the consumer's parallel loop runs it). A stage of constants alone runs
  /// once, in the prepare function: nothing to prefer.
  double prior(const Values& v) const override {
    if (data_.empty() || prepare_) {
      return 1.0;
    }
    return vector_nest_prior(extents_, vector_length(v), reach_,
                             attached(v) ? -1 : parallel_count(v), cpu_.cores);
  }

  int num_attach_points() const override { return static_cast<int>(data_.size()); }
  std::string attach_stage() const override { return stage_; }
  /// The loops up to the attach point split the producer's output (Winograd's inverse per
  /// output channel of the gather).
  TileLoopCost tile_loop_cost(const Values& v,
                              int position,
                              const std::string& /*producer*/) const override {
    const int64_t p = parallel_count(v);
    const int64_t last = p >= 2 && position <= p ? p : position;
    TileLoopCost cost;
    for (size_t d = 0; d < extents_.size() && static_cast<int64_t>(d) < last; ++d) {
      const int64_t lanes = d + 1 == extents_.size() ? vector_length(v) : 1;
      cost.parts *= (extents_[d] + lanes - 1) / lanes;
    }
    return cost;
  }
  std::string attach_axis(const Values& v, int level) const override {
    int64_t p = parallel_count(v);
    std::vector<std::string> outer = outer_loops(v);
    return p >= 2 && level <= p ? fused_loop(outer, p) : outer.at(static_cast<size_t>(level - 1));
  }

 private:
  int64_t vector_length(const Values& v) const { return data_.empty() ? 1 : vector_.one(v); }
  bool attached(const Values& v) const { return at_.index >= 0 && at_.one(v) > 0; }
  /// Loops fused into the parallel loop (none when the stage is computed inside another).
  int64_t parallel_count(const Values& v) const {
    return data_.empty() || attached(v) ? 0 : parallel_.one(v);
  }
  /// The data-parallel loops outside the vector lanes, outermost first.
  std::vector<std::string> outer_loops(const Values& v) const {
    std::vector<std::string> outer = data_;
    if (!outer.empty() && vector_length(v) > 1) {
      outer.back() += ".o";
    }
    return outer;
  }

  std::string stage_;
  PlanRef consumer_;
  CpuShape cpu_;
  bool prepare_ = false;  ///< reads constants only (StageInfo::constant_only)
  std::vector<std::string> data_, reduce_;
  std::vector<int64_t> extents_;  ///< of the data axes
  int64_t reach_ = 1;             ///< the widest useful vector over the last one
  KnobSlot vector_{-1, {1}}, parallel_{-1, {0}}, unroll_{-1, {0}}, at_{-1, {0}};
};

}  // namespace

std::string fused_loop(const std::vector<std::string>& loops, int64_t count) {
  return count >= 2 ? schedule::fused_axis_name(std::vector<std::string>(
                          loops.begin(), loops.begin() + static_cast<std::ptrdiff_t>(count)))
                    : loops.at(0);
}

void emit_parallel(const std::string& stage,
                   const std::vector<std::string>& loops,
                   int64_t count,
                   Steps& out) {
  if (count >= 2) {
    out.emplace_back(schedule::Fuse{
        stage, std::vector<std::string>(loops.begin(),
                                        loops.begin() + static_cast<std::ptrdiff_t>(count))});
  }
  if (count >= 1) {
    out.emplace_back(schedule::Annotate{stage, fused_loop(loops, count), ir::ForKind::Parallel});
  }
}

PlanRef make_inline_plan(const std::string& stage) {
  return std::make_shared<InlinePlan>(stage);
}

PlanRef make_generic_plan(const StageInfo& stage,
                          const PlanRef& consumer,
                          const CpuShape& cpu,
                          KnobTable& knobs) {
  return std::make_shared<GenericPlan>(stage, consumer, cpu, knobs);
}

KnobSlot KnobTable::add(std::string name,
                        KnobKind kind,
                        std::vector<std::vector<int64_t>> choices) {
  TT_CHECK(!choices.empty()) << "knob '" << name << "' has no choices";
  if (choices.size() == 1) {
    return KnobSlot{-1, choices[0]};
  }
  knobs_.push_back(Knob{std::move(name), kind, std::move(choices)});
  return KnobSlot{static_cast<int>(knobs_.size()) - 1, {}};
}

KnobSlot KnobTable::add_values(std::string name,
                               KnobKind kind,
                               const std::vector<int64_t>& values) {
  std::vector<std::vector<int64_t>> choices;
  for (int64_t v : values) {
    choices.push_back({v});
  }
  return add(std::move(name), kind, std::move(choices));
}

void KnobTable::added_later(const KnobSlot& slot, int absent_choice) {
  if (slot.index < 0)
    return;
  Knob& knob = knobs_[static_cast<size_t>(slot.index)];
  TT_CHECK(absent_choice >= 0 && static_cast<size_t>(absent_choice) < knob.choices.size())
      << "knob '" << knob.name << "' has no choice " << absent_choice;
  knob.absent = absent_choice;
}

}  // namespace tensortune::search::detail

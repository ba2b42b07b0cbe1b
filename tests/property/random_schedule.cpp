// SPDX-License-Identifier: Apache-2.0
// The random schedule generator of the property tests. Steps are proposed with fixed
// probabilities and kept only when schedule::apply accepts them, so every result is valid.
#include "property/random_schedule.h"

#include "tensortune/support/error.h"

#include <algorithm>
#include <string>

namespace tensortune::testing {
namespace {

using schedule::LoopState;
using schedule::Stage;
using schedule::Step;

class Builder {
 public:
  Builder(const te::Workload& w, support::Rng& rng, const RandomScheduleOptions& options)
      : state_(w), rng_(rng), options_(options) {}

  // Applies `step` when legal; returns whether it was kept.
  bool attempt(const Step& step) {
    try {
      state_ = schedule::apply(state_, step);
    } catch (const ScheduleError&) {
      return false;
    }
    steps_.push_back(step);
    return true;
  }

  bool chance(double p) { return rng_.uniform() < p; }

  const LoopState& state() const { return state_; }
  std::vector<Step> take() { return std::move(steps_); }

  int64_t pick_factor() {
    static const int64_t kFactors[] = {1, 2, 3, 4, 5, 7, 8, 16};
    return kFactors[rng_.pick(std::size(kFactors))];
  }

  void transform_loops(const std::string& name) {
    // Splits of a random subset of the current leaves (non-divisors included).
    std::vector<std::string> leaves = leaf_names(name);
    for (const std::string& axis : leaves) {
      if (chance(0.5)) {
        attempt(schedule::Split{name, axis, pick_factor(), chance(0.2)});
      }
    }
    if (chance(0.4)) {
      std::vector<std::string> order = leaf_names(name);
      for (size_t i = order.size(); i > 1; --i) {
        std::swap(order[i - 1], order[rng_.pick(i)]);
      }
      attempt(schedule::Reorder{name, order});
    }
    leaves = leaf_names(name);
    if (leaves.size() >= 2 && chance(0.3)) {
      size_t at = rng_.pick(leaves.size() - 1);
      attempt(schedule::Fuse{name, {leaves[at], leaves[at + 1]}});
    }
    annotate(name);
  }

  void annotate(const std::string& name) {
    const Stage& stage = state_.stage(name);
    if (stage.leaf_axes.empty()) {
      return;
    }
    const auto& leaves = stage.leaf_axes;
    std::string outer = leaves.front().name;
    std::string inner = leaves.back().name;
    int64_t inner_extent = leaves.back().extent;
    std::string any = leaves[rng_.pick(leaves.size())].name;
    if (chance(0.4)) {
      attempt(schedule::Annotate{name, outer, ir::ForKind::Parallel});
    }
    if (inner_extent <= options_.max_vector_lanes && chance(0.5)) {
      attempt(schedule::Annotate{name, inner, ir::ForKind::Vectorized});
    }
    const auto& now = state_.stage(name).leaf_axes;
    auto it = std::find_if(now.begin(), now.end(),
                           [&](const schedule::Axis& i) { return i.name == any; });
    if (it != now.end() && it->extent <= 16 && it->annotation == ir::ForKind::Serial &&
        chance(0.3)) {
      attempt(schedule::Annotate{name, any, ir::ForKind::Unrolled});
    }
    if (chance(0.2)) {
      attempt(schedule::PragmaUnroll{name, outer, 16});
    }
  }

  void attach_somewhere(const std::string& name) {
    std::vector<std::string> consumers = state_.consumers(name);
    if (consumers.size() != 1) {
      return;
    }
    std::vector<std::string> leaves = leaf_names(consumers[0]);
    if (leaves.empty()) {
      return;
    }
    attempt(schedule::ComputeAt{name, consumers[0], leaves[rng_.pick(leaves.size())]});
  }

  std::vector<std::string> leaf_names(const std::string& name) const {
    std::vector<std::string> out;
    for (const schedule::Axis& it : state_.stage(name).leaf_axes) {
      out.push_back(it.name);
    }
    return out;
  }

 private:
  LoopState state_;
  support::Rng& rng_;
  RandomScheduleOptions options_;
  std::vector<Step> steps_;
};

std::vector<std::string> compute_stage_names(const LoopState& state) {
  std::vector<std::string> names;
  for (const Stage& s : state.stages()) {
    if (!s.is_placeholder()) {
      names.push_back(s.name);
    }
  }
  return names;
}

}  // namespace

std::vector<schedule::Step> random_schedule(const te::Workload& workload, support::Rng& rng,
                                            const RandomScheduleOptions& options) {
  Builder b(workload, rng, options);
  // Structural steps first: inlining, caches.
  for (const std::string& name : compute_stage_names(b.state())) {
    const Stage& stage = b.state().stage(name);
    if (!stage.is_output && stage.op->reduce() == nullptr && b.chance(0.3)) {
      b.attempt(schedule::ComputeInline{name});
      continue;
    }
    if (stage.op->reduce() != nullptr && b.chance(0.4)) {
      b.attempt(schedule::CacheWrite{name, ir::MemoryScope::Local});
    }
  }
  for (const te::Tensor& input : workload.inputs()) {
    if (b.state().consumers(input.name()).size() == 1 && b.chance(0.2)) {
      schedule::CacheRead copy{input.name(), ir::MemoryScope::Local, {}};
      copy.row_pad = b.chance(0.3) ? 3 : 0;  // padded rows: pitch past the extent
      b.attempt(copy);
    }
  }
  // Loop transformations, consumers before producers so attach points exist.
  std::vector<std::string> names = compute_stage_names(b.state());
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    if (b.state().stage(*it).attach != schedule::AttachKind::Inline) {
      b.transform_loops(*it);
    }
  }
  for (const std::string& name : names) {
    const Stage& stage = b.state().stage(name);
    bool is_cache = name.find('.') != std::string::npos;
    if (stage.attach == schedule::AttachKind::Root && !stage.is_output &&
        b.chance(is_cache ? 0.8 : 0.4)) {
      b.attach_somewhere(name);
    }
  }
  return b.take();
}

}  // namespace tensortune::testing

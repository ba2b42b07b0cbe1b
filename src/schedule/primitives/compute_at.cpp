// SPDX-License-Identifier: Apache-2.0
// compute_at: a producer stage is computed inside a loop of one of its
// consumers, for the region that loop's body reads (lowering infers it).
#include "primitives.h"
#include "tensortune/support/error.h"

#include <algorithm>

namespace tensortune::schedule {
namespace {

/// Whether `target` reads `stage` directly, through stages inlined into it (a reuse stage's copy
/// and bias inlined into the relu that is tiled: the relu reads the accumulator), or through a
/// stage computed at one of its loops at or inside `axis` (TVM's compute_at of a producer at the
/// loop of its consumer's consumer: Winograd's data transform per tile of the batched GEMM whose
/// local accumulator reads it).
bool reads_through_inlined(const LoopState& state,
                           const std::string& stage,
                           const std::string& target,
                           const std::string& axis) {
  std::vector<std::string> pending{stage};
  for (size_t hops = 0; !pending.empty(); ++hops) {
    TT_CHECK(hops <= state.stages().size()) << "consumer cycle through stage " << stage;
    std::vector<std::string> next;
    for (const std::string& s : pending) {
      for (const std::string& c : state.consumers(s)) {
        if (c == target) {
          return true;
        }
        const Stage& reader = state.stage(c);
        if (reader.attach == AttachKind::Inline) {
          next.push_back(c);
        } else if (state.computed_within(reader, target, axis)) {
          return true;
        }
      }
    }
    pending = std::move(next);
  }
  return false;
}

}  // namespace

LoopState apply_primitive(const LoopState& state, const ComputeAt& step) {
  LoopState next = state;
  const Stage& stage = stage_for_step(next, "compute_at", step.stage);
  require_compute(stage, "compute_at");
  if (stage.is_output) {
    throw ScheduleError("compute_at: stage '" + step.stage +
                        "' is an output of the workload and must stay at the root");
  }
  const Stage& target = stage_for_step(next, "compute_at", step.target_stage);
  std::vector<std::string> consumers = next.consumers(step.stage);
  if (!reads_through_inlined(next, step.stage, step.target_stage, step.target_axis)) {
    throw ScheduleError("compute_at: stage '" + step.target_stage + "' does not read '" +
                        step.stage + "' (consumers: " + join_names(consumers) + ")");
  }
  if (target.attach == AttachKind::Inline) {
    throw ScheduleError("compute_at: stage '" + step.target_stage +
                        "' is inlined and has no loops to compute '" + step.stage + "' in");
  }
  leaf_for_step(target, "compute_at", step.target_axis);
  // The target must not itself be computed inside `stage`, directly or through
  // others.
  size_t hops = 0;
  for (const Stage* s = &target; s->attach == AttachKind::At; ++hops) {
    TT_CHECK(hops < next.stages().size()) << "attach cycle through stage " << s->name;
    if (s->attach_stage == step.stage) {
      throw ScheduleError("compute_at: stage '" + step.target_stage + "' is computed inside '" +
                          step.stage + "', so '" + step.stage + "' cannot be computed inside it");
    }
    s = &next.stage(s->attach_stage);
  }
  Stage& moved = next.mutable_stage(step.stage);
  moved.attach = AttachKind::At;
  moved.attach_stage = step.target_stage;
  moved.attach_axis = step.target_axis;
  return next;
}

}  // namespace tensortune::schedule

// SPDX-License-Identifier: Apache-2.0
// compute_inline: an element-wise stage's body is substituted into its
// consumers (lowering does the substitution); reductions and outputs cannot be
// inlined.
#include "primitives.h"
#include "tensortune/support/error.h"

namespace tensortune::schedule {

LoopState apply_primitive(const LoopState& state, const ComputeInline& step) {
  LoopState next = state;
  Stage& stage = stage_for_step(next, "compute_inline", step.stage);
  require_compute(stage, "compute_inline");
  if (stage.is_output) {
    throw ScheduleError("compute_inline: stage '" + step.stage +
                        "' is an output of the workload and cannot be inlined");
  }
  if (stage.op->reduce() != nullptr) {
    throw ScheduleError("compute_inline: stage '" + step.stage +
                        "' is a reduction and cannot be inlined");
  }
  std::vector<std::string> attached = attached_stages(next, step.stage);
  if (!attached.empty()) {
    throw ScheduleError("compute_inline: stage '" + step.stage + "' has stages computed at its " +
                        "loops (" + join_names(attached) + ") and cannot be inlined");
  }
  stage.attach = AttachKind::Inline;
  stage.attach_stage.clear();
  stage.attach_axis.clear();
  return next;
}

}  // namespace tensortune::schedule

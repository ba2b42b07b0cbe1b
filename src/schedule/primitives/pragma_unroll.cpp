// SPDX-License-Identifier: Apache-2.0
// pragma_unroll: asks the unroll pass to unroll small loop nests under a leaf
// axis.
#include "primitives.h"
#include "tensortune/support/error.h"

namespace tensortune::schedule {

LoopState apply_primitive(const LoopState& state, const PragmaUnroll& step) {
  LoopState next = state;
  Stage& stage = stage_for_step(next, "pragma_unroll", step.stage);
  int index = leaf_for_step(stage, "pragma_unroll", step.axis);
  if (step.max_step < 0) {
    throw ScheduleError("pragma_unroll: max_step must be non-negative (got " +
                        std::to_string(step.max_step) + " for axis '" + step.axis + "' of stage '" +
                        step.stage + "')");
  }
  stage.leaf_axes[static_cast<size_t>(index)].auto_unroll_max_step = step.max_step;
  return next;
}

}  // namespace tensortune::schedule

// SPDX-License-Identifier: Apache-2.0
// compute_root: the stage is computed in full at the top level again.
#include "primitives.h"

namespace tensortune::schedule {

LoopState apply_primitive(const LoopState& state, const ComputeRoot& step) {
  LoopState next = state;
  Stage& stage = stage_for_step(next, "compute_root", step.stage);
  require_compute(stage, "compute_root");
  stage.attach = AttachKind::Root;
  stage.attach_stage.clear();
  stage.attach_axis.clear();
  return next;
}

}  // namespace tensortune::schedule

// SPDX-License-Identifier: Apache-2.0
// tile: split two adjacent axes x (outer) and y, then order x.o, y.o, x.i, y.i.
#include "primitives.h"
#include "tensortune/support/error.h"

namespace tensortune::schedule {

LoopState apply_primitive(const LoopState& state, const Tile& step) {
  LoopState next = state;
  const Stage& stage = stage_for_step(next, "tile", step.stage);
  int x = leaf_for_step(stage, "tile", step.x);
  int y = leaf_for_step(stage, "tile", step.y);
  if (y != x + 1) {
    throw ScheduleError("tile: axes '" + step.x + "' and '" + step.y + "' of stage '" + step.stage +
                        "' must be adjacent with '" + step.x +
                        "' outer (axes: " + join_names(leaf_names(stage)) + ")");
  }
  split_axis(next, "tile", step.stage, step.x, step.x_factor, false);
  split_axis(next, "tile", step.stage, step.y, step.y_factor, false);
  reorder_axes(next, "tile", step.stage,
               {step.x + ".o", step.y + ".o", step.x + ".i", step.y + ".i"});
  return next;
}

}  // namespace tensortune::schedule

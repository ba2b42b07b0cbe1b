// SPDX-License-Identifier: Apache-2.0
// split: one leaf axis becomes axis.o (outer) and axis.i (inner, `factor`
// iterations). A factor that does not divide the extent keeps the inner extent
// and leaves the tail to lowering's guard.
#include "primitives.h"
#include "tensortune/support/error.h"

namespace tensortune::schedule {

void split_axis(LoopState& state,
                const char* what,
                const std::string& stage_name,
                const std::string& axis,
                int64_t factor,
                bool nparts) {
  Stage& stage = stage_for_step(state, what, stage_name);
  int index = leaf_for_step(stage, what, axis);
  if (factor <= 0) {
    throw ScheduleError(std::string(what) + ": factor must be positive (got " +
                        std::to_string(factor) + " for axis '" + axis + "' of stage '" +
                        stage_name + "')");
  }
  const Axis parent = stage.leaf_axes[static_cast<size_t>(index)];
  int64_t extent = parent.extent;
  int64_t inner_extent = nparts ? (extent + factor - 1) / factor : factor;
  inner_extent = inner_extent < 1 ? 1 : inner_extent;
  int64_t outer_extent = (extent + inner_extent - 1) / inner_extent;

  Axis outer{axis + ".o", outer_extent, parent.kind, ir::ForKind::Serial, 0};
  Axis inner{axis + ".i", inner_extent, parent.kind, ir::ForKind::Serial, 0};
  require_fresh_axis_name(stage, what, outer.name);
  require_fresh_axis_name(stage, what, inner.name);

  auto pos = stage.leaf_axes.begin() + index;
  pos = stage.leaf_axes.erase(pos);
  stage.leaf_axes.insert(pos, {outer, inner});
  stage.relations.emplace_back(SplitRelation{axis, outer.name, inner.name, inner_extent});
  // A stage computed inside the split loop stays inside the whole of it: the
  // innermost piece.
  move_attachments(state, stage_name, {axis}, inner.name);
}

LoopState apply_primitive(const LoopState& state, const Split& step) {
  LoopState next = state;
  split_axis(next, "split", step.stage, step.axis, step.factor, step.nparts);
  return next;
}

}  // namespace tensortune::schedule

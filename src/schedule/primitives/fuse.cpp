// SPDX-License-Identifier: Apache-2.0
// fuse: adjacent leaf axes of one kind (outer to inner) become one axis "a@b@c"
// whose extent is the product; lowering recovers each parent with / and %.
#include "primitives.h"
#include "tensortune/support/error.h"

namespace tensortune::schedule {

LoopState apply_primitive(const LoopState& state, const Fuse& step) {
  LoopState next = state;
  Stage& stage = stage_for_step(next, "fuse", step.stage);
  require_compute(stage, "fuse");
  if (step.axes.empty()) {
    throw ScheduleError("fuse: no axes given for stage '" + step.stage + "'");
  }
  int first = leaf_for_step(stage, "fuse", step.axes[0]);
  const Axis& head = stage.leaf_axes[static_cast<size_t>(first)];
  int64_t extent = 1;
  for (size_t n = 0; n < step.axes.size(); ++n) {
    int index = leaf_for_step(stage, "fuse", step.axes[n]);
    if (index != first + static_cast<int>(n)) {
      throw ScheduleError("fuse: axes of stage '" + step.stage +
                          "' must be adjacent and in loop order, but '" + step.axes[n] +
                          "' is not right inside '" + step.axes[n == 0 ? 0 : n - 1] +
                          "' (axes: " + join_names(leaf_names(stage)) + ")");
    }
    const Axis& iter = stage.leaf_axes[static_cast<size_t>(index)];
    if (iter.kind != head.kind) {
      throw ScheduleError("fuse: axis '" + iter.name + "' of stage '" + step.stage + "' is a " +
                          (iter.kind == ir::IterKind::Reduce ? "reduction" : "data-parallel") +
                          " axis and '" + head.name + "' is not; only axes of one kind fuse");
    }
    extent *= iter.extent;
  }
  if (step.axes.size() == 1) {
    return next;  // fusing one axis leaves it as it is
  }
  const std::string name = fused_axis_name(step.axes);
  require_fresh_axis_name(stage, "fuse", name);
  Axis fused{name, extent, head.kind, ir::ForKind::Serial, 0};
  auto begin = stage.leaf_axes.begin() + first;
  auto pos = stage.leaf_axes.erase(begin, begin + static_cast<std::ptrdiff_t>(step.axes.size()));
  stage.leaf_axes.insert(pos, fused);
  stage.relations.emplace_back(FuseRelation{step.axes, name});
  move_attachments(next, step.stage, step.axes, name);
  return next;
}

}  // namespace tensortune::schedule

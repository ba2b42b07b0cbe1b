// SPDX-License-Identifier: Apache-2.0
// reorder: the listed leaf axes take the loop positions they occupied, in the
// listed order; the other axes stay where they are. Attachments follow the axis
// name, so they need no update.
#include "primitives.h"
#include "tensortune/support/error.h"

#include <algorithm>

namespace tensortune::schedule {

void reorder_axes(LoopState& state,
                  const char* what,
                  const std::string& stage_name,
                  const std::vector<std::string>& order) {
  Stage& stage = stage_for_step(state, what, stage_name);
  require_compute(stage, what);
  if (order.empty()) {
    throw ScheduleError(std::string(what) + ": no axes given for stage '" + stage_name + "'");
  }
  std::vector<int> positions;
  for (const std::string& axis : order) {
    int index = leaf_for_step(stage, what, axis);
    if (std::find(positions.begin(), positions.end(), index) != positions.end()) {
      throw ScheduleError(std::string(what) + ": axis '" + axis + "' listed twice for stage '" +
                          stage_name + "'");
    }
    positions.push_back(index);
  }
  std::vector<Axis> moved;
  moved.reserve(positions.size());
  for (int index : positions) {
    moved.push_back(stage.leaf_axes[static_cast<size_t>(index)]);
  }
  std::sort(positions.begin(), positions.end());
  for (size_t n = 0; n < positions.size(); ++n) {
    stage.leaf_axes[static_cast<size_t>(positions[n])] = moved[n];
  }
}

LoopState apply_primitive(const LoopState& state, const Reorder& step) {
  LoopState next = state;
  reorder_axes(next, "reorder", step.stage, step.order);
  return next;
}

}  // namespace tensortune::schedule

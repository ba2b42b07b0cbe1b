// SPDX-License-Identifier: Apache-2.0
// Applying steps: the one std::visit over step kinds, dispatching to
// src/schedule/primitives/.
#include "tensortune/schedule/schedule.h"

#include "primitives/primitives.h"
#include "tensortune/support/error.h"

namespace tensortune::schedule {

LoopState apply(const LoopState& state, const Step& step) {
  return std::visit([&](const auto& s) { return apply_primitive(state, s); }, step);
}

LoopState apply_steps(const te::Workload& workload, const std::vector<Step>& steps) {
  LoopState state(workload);
  for (const Step& step : steps) {
    state = schedule::apply(state, step);
  }
  return state;
}

LoopState apply_schedule(const te::Workload& workload, const Schedule& schedule) {
  if (schedule.workload_key != workload.key()) {
    throw ScheduleError("schedule is for workload '" + schedule.workload_key + "', not '" +
                        workload.key() + "'");
  }
  return apply_steps(workload, schedule.steps);
}

std::string to_string(const Schedule& schedule) {
  std::string out;
  for (const Step& step : schedule.steps) {
    out += to_string(step) + "\n";
  }
  return out;
}

}  // namespace tensortune::schedule

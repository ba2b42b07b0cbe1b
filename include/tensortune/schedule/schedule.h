// SPDX-License-Identifier: Apache-2.0
// A schedule is data: the workload key and an ordered list of steps, replayed on a fresh state.
#pragma once

#include "tensortune/schedule/loop_state.h"
#include "tensortune/schedule/step.h"

#include <string>
#include <vector>

namespace tensortune::schedule {

struct Schedule {
  std::string workload_key;
  std::vector<Step> steps;
};

/// Applies one step, checking it; throws ScheduleError naming the step, stage and axis.
/// Call it qualified (schedule::apply): Step is a std::variant, so an unqualified call also finds
/// std::apply by argument-dependent lookup, which wins for a non-const LoopState.
LoopState apply(const LoopState& state, const Step& step);
/// Applies every step in order to the initial state of `workload` (the empty list = default).
LoopState apply_steps(const te::Workload& workload, const std::vector<Step>& steps);
/// Same, checking that `schedule.workload_key` matches `workload.key()` (ScheduleError if not).
LoopState apply_schedule(const te::Workload& workload, const Schedule& schedule);

/// The schedule a workload gets on a GPU target when nothing better is known (the empty schedule
/// would run every stage on one GPU thread): each stage's data-parallel axes fused, split by up to
/// 256 threads and bound to blockIdx.x / threadIdx.x, reductions running inside each thread. The
/// compiler's fallback and the tuner's baseline on GPUs.
std::vector<Step> default_gpu_steps(const te::Workload& workload);

/// A readable listing: one step per line ("split C.i by 8").
std::string to_string(const Schedule& schedule);

}  // namespace tensortune::schedule

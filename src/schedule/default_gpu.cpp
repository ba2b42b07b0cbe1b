// SPDX-License-Identifier: Apache-2.0
// The default schedule of a workload on a GPU target (see schedule.h).
#include "tensortune/schedule/loop_state.h"
#include "tensortune/schedule/schedule.h"

#include <algorithm>

namespace tensortune::schedule {

std::vector<Step> default_gpu_steps(const te::Workload& workload) {
  constexpr int64_t kThreads = 256;
  std::vector<Step> steps;
  const LoopState state(workload);
  for (const Stage& stage : state.stages()) {
    if (stage.is_placeholder()) {
      continue;
    }
    std::vector<std::string> data;
    int64_t extent = 1;
    for (const Axis& it : stage.root_axes) {
      if (it.kind != ir::IterKind::Reduce) {
        data.push_back(it.name);
        extent *= it.extent;
      }
    }
    if (extent <= 1) {
      continue;  // one element: one thread
    }
    if (data.size() > 1) {
      steps.emplace_back(Fuse{stage.name, data});
    }
    const std::string fused = fused_axis_name(data);
    steps.emplace_back(Split{stage.name, fused, std::min(extent, kThreads), false});
    steps.emplace_back(Annotate{stage.name, fused + ".o", ir::ForKind::BlockX});
    steps.emplace_back(Annotate{stage.name, fused + ".i", ir::ForKind::ThreadX});
  }
  return steps;
}

}  // namespace tensortune::schedule

// SPDX-License-Identifier: Apache-2.0
// Private to src/lower: what the loop-nest builder needs to know about the stages before emitting
// any loop: every body with inlined stages substituted, and which stages sit at which loop.
#pragma once

#include "tensortune/ir/expr.h"
#include "tensortune/schedule/loop_state.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tensortune::lower {

struct StageGraph {
  /// Per stage (index in state.stages()): the op body with inlined stages substituted.
  std::vector<ir::Expr> bodies;
  /// (target stage index, target axis) -> the stages computed at that loop, in stage order.
  std::map<std::pair<size_t, std::string>, std::vector<size_t>> attached;
};

/// Checks the attachments of `state` (outputs at the root, compute_at targets that exist and
/// are the attached stage's sole consumer, no inlined reduction) and builds the graph. Throws
/// ScheduleError naming the stage and axis otherwise.
StageGraph analyze_stages(const schedule::LoopState& state);

}  // namespace tensortune::lower

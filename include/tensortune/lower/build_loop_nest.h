// SPDX-License-Identifier: Apache-2.0
// The first lowering pass: a loop state becomes one loop nest per stage, with inlined stages
// substituted, compute_at stages placed inside their consumer's loops over the inferred region,
// guards for split tails, and reduction init/update nests.
#pragma once

#include "tensortune/ir/stmt.h"
#include "tensortune/schedule/loop_state.h"

#include <string>
#include <unordered_map>

namespace tensortune::lower {

/// The stage and axis a loop of the lowered function came from (for error messages).
struct LoopOrigin {
  std::string stage;
  std::string axis;
};
using LoopOrigins = std::unordered_map<const ir::VarNode*, LoopOrigin>;

/// Builds the unflattened function `name` from `state`: parameters are the workload's inputs
/// then outputs; every other non-inlined stage gets an Allocate. When `origins` is given, it
/// receives the stage and axis of every loop created. Throws ScheduleError for an attachment
/// that cannot be lowered (a compute_at target that is not the stage's sole consumer, an
/// unbounded region), a vectorized reduction axis or more than 64 vector lanes.
ir::LoweredFunc build_loop_nest(const schedule::LoopState& state,
                                const std::string& name,
                                LoopOrigins* origins = nullptr);

}  // namespace tensortune::lower

// SPDX-License-Identifier: Apache-2.0
// Private to lower/: the checks of reductions run across the threads of a block (a reduction
// axis bound to threadIdx.x), which the CUDA generator turns into a block-wide combine.
#pragma once

#include "tensortune/ir/stmt.h"
#include "tensortune/lower/build_loop_nest.h"

namespace tensortune::lower {

/// Finds the cross-thread reductions of one kernel (a loop bound to threadIdx whose body stores
/// to a buffer allocated outside it at an index that does not use the loop's variable) and
/// throws ScheduleError, naming the stage and axis, for one the CUDA generator cannot combine:
/// bound to threadIdx.y/z, stores of other kinds beside the reduction, more than one updated
/// element or an index that changes inside the loop, an update that is not
/// `B[idx] = B[idx] op value` (op: +, -, *, min, max), a loop bound to threadIdx inside it, or a
/// place not every thread of the block reaches (under a condition or in a loop whose bounds
/// depend on threadIdx), since the combine needs barriers.
void check_cross_thread_reductions(const ir::Stmt& kernel, const LoopOrigins& origins);

}  // namespace tensortune::lower

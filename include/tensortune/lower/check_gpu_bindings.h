// SPDX-License-Identifier: Apache-2.0
// Checks loops bound to GPU block/thread indices against the target.
#pragma once

#include "tensortune/ir/stmt.h"
#include "tensortune/lower/build_loop_nest.h"
#include "tensortune/target/target.h"

namespace tensortune::lower {

/// On a CPU target, any GPU-bound loop is a ScheduleError naming the stage and axis (from
/// `origins`). On a GPU target, each top-level loop nest is one kernel: a binding must have a
/// constant extent (the launch takes the largest bound to each index in a kernel; loops with
/// fewer iterations run on the first threads); threads per block must
/// not exceed target.max_threads_per_block (and 1024/1024/64 per dimension) and shared
/// allocations must fit target.max_shared_memory_bytes. A loop bound to threadIdx whose body
/// updates an element that does not depend on it is a cross-thread reduction: it must be bound to
/// threadIdx.x, update one element as `B[idx] = B[idx] op value` (+, -, *, min, max) and nothing
/// else outside it, hold no thread-bound loop, and be reached by every thread of the block.
void check_gpu_bindings(const ir::Stmt& body,
                        const target::Target& target,
                        const LoopOrigins& origins);

}  // namespace tensortune::lower

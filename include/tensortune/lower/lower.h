// SPDX-License-Identifier: Apache-2.0
// Lowering: a loop state (te + schedule) to loop IR, through a fixed list of passes.
#pragma once

#include "tensortune/ir/stmt.h"
#include "tensortune/schedule/loop_state.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/target/target.h"
#include "tensortune/te/workload.h"

#include <string>

namespace tensortune::lower {

#ifdef NDEBUG
inline constexpr bool kVerifyEachPassByDefault = false;
#else
inline constexpr bool kVerifyEachPassByDefault = true;
#endif

struct LowerOptions {
  /// Run ir::verify after each pass (default on in debug builds); the final IR is always verified.
  bool verify_each_pass = kVerifyEachPassByDefault;
  /// Stop before storage flattening and later passes (multi-dimensional indices remain).
  bool stop_before_flatten = false;
  /// Run the vectorize and unroll passes (off gives the plain loop structure, still annotated).
  bool vectorize_and_unroll = true;
};

/// Lowers the scheduled workload to a function named `name` whose parameters are the workload's
/// inputs then outputs. Throws ScheduleError when the schedule cannot be lowered for `target`
/// (e.g. a GPU binding on a CPU target, a vectorized reduction axis, compute_at into a loop that
/// does not enclose the consumer's reads).
ir::LoweredFunc lower(const schedule::LoopState& state,
                      const target::Target& target,
                      const std::string& name,
                      const LowerOptions& options = {});
/// Applies `schedule` to `workload`, then lowers. The function is named after the workload.
ir::LoweredFunc lower(const te::Workload& workload,
                      const schedule::Schedule& schedule,
                      const target::Target& target,
                      const LowerOptions& options = {});

/// A C identifier made from a workload name ("matmul_64x64x64_float32" stays as it is).
std::string function_name(const te::Workload& workload);

}  // namespace tensortune::lower

// SPDX-License-Identifier: Apache-2.0
// The steps every kernel-handling command shares: resolving a target string, reading the schedule
// chosen on the command line, and lowering + building a kernel for the CPU.
#pragma once

#include "tensortune/codegen/artifact.h"
#include "tensortune/ir/stmt.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/target/target.h"
#include "tensortune/te/workload.h"

#include <string>

namespace tensortune::cli {

/// Parses a target string; an LLVM target ("native", "llvm ...") is completed from the host.
/// Throws UserError on a malformed string.
target::Target resolve_target(const std::string& text);

/// A schedule picked on the command line.
struct ScheduleChoice {
  schedule::Schedule schedule;
  /// "default" or the path of the file it was read from.
  std::string source;
};

/// `choice` is "default" (the empty step list) or the path of a JSON file in the format of
/// schedule::to_json. Throws UserError naming the file when it cannot be read, is not valid JSON,
/// has malformed steps, belongs to another workload, or has a step that does not apply.
ScheduleChoice load_schedule(const std::string& choice, const te::Workload& workload);

/// A lowered function and the machine code built from it.
struct BuiltKernel {
  ir::LoweredFunc func;
  codegen::Artifact artifact;
};

/// Lowers `schedule` for `target` and JIT-compiles it (CPU targets only; UserError otherwise).
BuiltKernel build_kernel(const te::Workload& workload,
                         const schedule::Schedule& schedule,
                         const target::Target& target);

}  // namespace tensortune::cli

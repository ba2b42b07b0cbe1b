// SPDX-License-Identifier: Apache-2.0
// The steps every kernel-handling command shares: resolving a target string, reading the schedule
// chosen on the command line, and lowering + building a kernel for the CPU.
#pragma once

#include "tensortune/codegen/artifact.h"
#include "tensortune/ir/stmt.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/target/target.h"
#include "tensortune/te/workload.h"

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace tensortune::cli {

/// --build-timeout's default for compile, show and bench: minutes for the largest honest build,
/// far less than a runaway one (a huge unroll once took 101 s and 2.1 GB on a 32^3 matmul).
inline constexpr double kDefaultBuildTimeout = 120;
/// The help line of --build-timeout.
inline constexpr const char* kBuildTimeoutHelp =
    "seconds the lowering and code generation may take before the command gives up (default 120)";

/// The build deadline of compile, show and bench, as the measurer's build timeout is tune's: when
/// the object lives longer than `seconds`, "tensortune: error: WHAT: the build took longer than
/// S s (see --build-timeout)" is printed and the process exits with status 1. Lowering and LLVM
/// cannot be interrupted from inside, so the process ends, as the measurer's build worker does.
class BuildDeadline {
 public:
  BuildDeadline(double seconds, std::string what);
  ~BuildDeadline();
  BuildDeadline(const BuildDeadline&) = delete;
  BuildDeadline& operator=(const BuildDeadline&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  std::thread thread_;
};

/// Parses a target string; an LLVM target ("native", "llvm ...") is completed from the host.
/// Throws UserError on a malformed string.
target::Target resolve_target(const std::string& text);

/// Checks that code for the target written `target_text` can run on this machine
/// (codegen::missing_host_features). A command that runs the code (`runs`: tune, tune-model,
/// bench) gets UserError "COMMAND: target 'T' uses CPU features this machine lacks (...)":
/// its candidates would die of SIGILL, each recorded as a failure. One that only builds it
/// (compile, show, compile-model: cross-compiling is fine) gets a warning on stderr.
void check_target_runs_here(const std::string& target_text, const std::string& command, bool runs);

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

/// What `show --emit` prints for schedule `chosen` of `workload` on `target`: "steps" (the readable
/// listing), "ir" (the lowered loop IR), "llvm" or "asm" (CPU targets), "cuda" (the launch summary
/// and CUDA C) or "ptx" (CUDA targets; needs NVRTC). UserError when the emit does not fit the
/// target.
std::string render_kernel(const std::string& emit,
                          const te::Workload& workload,
                          const schedule::Schedule& chosen,
                          const target::Target& target);

}  // namespace tensortune::cli

// SPDX-License-Identifier: Apache-2.0
// Target resolution, schedule files and kernel builds for the command line tools.
#include "pipeline.h"

#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/codegen/host.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "tensortune/support/file.h"
#include "tensortune/support/log.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

namespace tensortune::cli {

target::Target resolve_target(const std::string& text) {
  target::Target target = target::Target::parse(text);
  if (target.is_gpu()) {
    return target;
  }
  return codegen::resolve_host(target);
}

void check_target_runs_here(const std::string& target_text, const std::string& command, bool runs) {
  const std::vector<std::string> missing =
      codegen::missing_host_features(target::Target::parse(target_text));
  if (missing.empty())
    return;
  std::string list;
  for (size_t i = 0; i < missing.size() && i < 8; ++i)
    list += (i > 0 ? ", " : "") + missing[i];
  if (missing.size() > 8)
    list += ", and " + std::to_string(missing.size() - 8) + " more";
  const std::string what = command + ": target '" + target_text +
                           "' uses CPU features this machine lacks (" + list + ")";
  TT_USER_CHECK(!runs) << what
                       << ": its code would die of SIGILL here (tune and bench on a machine that "
                          "has them, or use --target native)";
  std::cerr << "tensortune: warning: " << what << ": the code it builds will not run here\n";
}

namespace {

std::string read_file(const std::string& path, const char* what) {
  return support::read_regular_file(path, support::kMaxTextFileBytes, what);
}

}  // namespace

BuildDeadline::BuildDeadline(double seconds, std::string what) {
  thread_ = std::thread([this, seconds, what = std::move(what)] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (done_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return finished_; }))
      return;
    std::fprintf(stderr,
                 "tensortune: error: %s: the build took longer than %g s (see --build-timeout)\n",
                 what.c_str(), seconds);
    std::fflush(stderr);
    std::_Exit(1);
  });
}

BuildDeadline::~BuildDeadline() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
  }
  done_.notify_one();
  thread_.join();
}

ScheduleChoice load_schedule(const std::string& choice, const te::Workload& workload) {
  if (choice == "default") {
    return ScheduleChoice{schedule::Schedule{workload.key(), {}}, "default"};
  }
  std::string text = read_file(choice, "schedule file");
  ScheduleChoice result{{}, choice};
  try {
    result.schedule = schedule::parse_schedule(text);
    TT_USER_CHECK(result.schedule.workload_key == workload.key())
        << "it is for workload '" << result.schedule.workload_key << "', not '" << workload.key()
        << "'";
    schedule::apply_schedule(workload, result.schedule);  // reports a bad step early
  } catch (const UserError& e) {
    throw UserError("schedule file '" + choice + "': " + e.what());
  }
  TT_LOG(1) << "schedule from '" << choice << "': " << result.schedule.steps.size() << " steps";
  return result;
}

BuiltKernel build_kernel(const te::Workload& workload,
                         const schedule::Schedule& schedule,
                         const target::Target& target) {
  TT_USER_CHECK(!target.is_gpu()) << "target '" << target.to_string()
                                  << "' is a GPU target; this build runs kernels on the CPU only "
                                     "(use --target native or 'llvm ...')";
  BuiltKernel kernel;
  kernel.func = lower::lower(workload, schedule, target);
  TT_LOG(1) << "lowered '" << kernel.func.name << "'";
  kernel.artifact = codegen::build_cpu(kernel.func, target);
  TT_LOG(1) << "built '" << kernel.func.name << "' for -mcpu=" << target.mcpu;
  return kernel;
}

std::string render_kernel(const std::string& emit,
                          const te::Workload& workload,
                          const schedule::Schedule& chosen,
                          const target::Target& target) {
  if (emit == "steps") {
    std::string text = schedule::to_string(chosen);
    return text.empty() ? "# the default schedule: no steps\n" : text;
  }
  ir::LoweredFunc func = lower::lower(workload, chosen, target);
  if (emit == "ir") {
    return ir::to_string(func);
  }
  if (emit == "cuda" || emit == "ptx") {
    TT_USER_CHECK(target.is_gpu()) << "--emit " << emit << " needs a CUDA target (e.g. 'cuda "
                                   << "-arch=sm_90'), not the CPU target '" << target.mcpu << "'";
    codegen::CudaModule module = codegen::generate_cuda(func, target);
    if (emit == "ptx") {
      return codegen::compile_cuda(module.source, target, false).ptx;
    }
    return codegen::launch_summary(module) + module.source;
  }
  TT_USER_CHECK(!target.is_gpu()) << "--emit " << emit << " needs a CPU target; '"
                                  << target.to_string() << "' is a GPU target";
  if (emit == "llvm") {
    return codegen::emit_llvm_ir(func, target);
  }
  return codegen::emit_assembly(func, target);
}

}  // namespace tensortune::cli

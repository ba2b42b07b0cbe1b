// SPDX-License-Identifier: Apache-2.0
// The Builder: compiles a batch of lowered candidates in parallel worker processes, each build
// with a timeout; a failed or timed-out build is a BuildResult with a status, never an exception.
#pragma once

#include "tensortune/ir/stmt.h"
#include "tensortune/measure/measure_input.h"
#include "tensortune/measure/measure_result.h"
#include "tensortune/support/json.h"
#include "tensortune/target/target.h"

#include <memory>
#include <string>
#include <vector>

namespace tensortune::measure {

class WorkerProcess;

struct BuilderOptions {
  /// Build worker processes; 0 = one per hardware thread.
  int workers = 0;
  /// Seconds one candidate may spend in its build worker before it is killed.
  double timeout_s = 30;
  /// The tensortune-worker executable; empty = find_worker().
  std::string worker_path;
};

/// A compiled candidate: its signature and relocatable object code (Ok), or why there is none.
struct BuildResult {
  KernelSignature signature;
  MeasureStatus status = MeasureStatus::Ok;
  std::string message;
  /// An ELF relocatable object defining `signature.name`, or for a CUDA target the kernels'
  /// cubin with their launch shapes (empty unless Ok).
  std::string object;
  /// Code generation in this process plus compilation in the worker.
  double build_seconds = 0;

  bool ok() const { return status == MeasureStatus::Ok; }
  /// Everything but the object code, which travels as a separate blob (see runner.h).
  support::Json to_json() const;
  static BuildResult from_json(const support::Json& json, std::string object);
};

class Builder {
 public:
  /// A CPU target is resolved against the host once, here. For a CUDA target the CUDA C is
  /// generated in this process and NVRTC compiles it to a cubin in the build workers, under the
  /// same timeout (no device needed; BuildResult::object is then the cubin with its launch
  /// description); UserError "measure: cannot build for '...': nvrtc: not available: ..." when
  /// NVRTC cannot be loaded.
  Builder(const target::Target& target, BuilderOptions options = {});
  ~Builder();
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  /// One BuildResult per candidate, in order. Each candidate's LLVM IR (CUDA C) is generated in
  /// this process; optimisation and object emission (NVRTC) run in the workers, killed after the
  /// timeout (CompileTimeout).
  std::vector<BuildResult> build(const std::vector<ir::LoweredFunc>& candidates);

  /// Builds `func` for this machine's CPU whatever the target, in a build worker under the
  /// timeout: a GPU target's reference kernel (the default schedule has no thread bindings, so on
  /// the device it would run on one thread) runs on the host. Same statuses as build().
  BuildResult build_for_host(const ir::LoweredFunc& func);

  const target::Target& target() const { return target_; }
  int num_workers() const { return static_cast<int>(workers_.size()); }

 private:
  BuildResult build_one(const ir::LoweredFunc& func,
                        const target::Target& target,
                        WorkerProcess& worker) const;

  target::Target target_;
  target::Target host_;  ///< build_for_host()'s target
  BuilderOptions options_;
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
};

}  // namespace tensortune::measure

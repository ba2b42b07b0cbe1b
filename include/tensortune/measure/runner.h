// SPDX-License-Identifier: Apache-2.0
// The CPU Runner: times built candidates one at a time in a pre-started worker process that is
// restarted when a candidate kills it, with a run timeout and a memory limit, after checking the
// candidate's outputs against a reference. The request and reply are framed messages (a JSON
// header and binary blobs, see src/measure/protocol.h), so a runner on another machine can serve
// the same requests.
#pragma once

#include "tensortune/measure/builder.h"
#include "tensortune/measure/measure_input.h"
#include "tensortune/measure/measure_result.h"
#include "tensortune/measure/timing.h"

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace tensortune::measure {

class WorkerProcess;

struct RunnerOptions {
  TimingOptions timing;
  /// Seconds one candidate may take in the worker (check run and timing) before it is killed.
  double timeout_s = 10;
  /// Address-space limit of the worker in MiB; 0 = half of the machine's memory (at least 2 GiB).
  int64_t memory_limit_mb = 0;
  /// Threads for parallel loops in the worker; 0 = every hardware thread.
  int threads = 0;
  /// Seed of the random inputs.
  uint64_t seed = 1;
  /// The tensortune-worker executable; empty = find_worker().
  std::string worker_path;
  /// Run GPU candidates (BuildResults of a CUDA target): the worker owns the CUDA device, has no
  /// memory limit (the driver reserves much address space) and times calls with CUDA events.
  /// The Runner then throws UserError "measure: no CUDA device: ..." when there is none.
  bool gpu = false;
};

/// The outputs every candidate of one workload must reproduce, computed once.
struct Reference {
  /// Distinguishes references within a process (the worker caches them by id).
  uint64_t id = 0;
  KernelSignature signature;
  /// The bytes of each output, in parameter order.
  std::vector<std::string> outputs;
  Tolerance tolerance;
  /// The inputs were generated from this seed.
  uint64_t seed = 1;
};

class Runner {
 public:
  /// Starts nothing yet; UserError when options.gpu is set and no CUDA device is usable.
  explicit Runner(RunnerOptions options = {});
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  /// Measures one built candidate: a failed build is returned as it is; otherwise the worker
  /// loads the object, fills the inputs from the reference's seed, poisons the outputs, runs the
  /// kernel once (the warm-up), compares every output with `reference`, and only then times it.
  /// Never throws for anything a candidate does.
  MeasureResult run(const BuildResult& build, const Reference& reference);

  /// Runs a built kernel once on the inputs of `seed` and returns its outputs' bytes (the
  /// reference). A GPU runner runs a kernel built for the CPU (Builder::build_for_host) on the
  /// worker's CPU side. Throws UserError when the kernel fails, with the reason.
  std::vector<std::string> outputs(const BuildResult& build, uint64_t seed);

  const RunnerOptions& options() const { return options_; }
  /// Changes TimingOptions::single_call_above_s for the next runs.
  void set_single_call_limit(double seconds) { options_.timing.single_call_above_s = seconds; }
  /// Changes the timing protocol for the next runs (the Measurer's rounds share it out).
  void set_timing(const TimingOptions& timing) { options_.timing = timing; }
  /// How often the worker was (re)started.
  int worker_starts() const;
  /// Ends the worker process; the next run starts a fresh one. The end-of-job confirmation times
  /// each round in a fresh process, as a later `tensortune bench` would: a kernel's speed also
  /// depends on where its process's memory happens to lie.
  void restart_worker();

 private:
  void send_reference(const Reference& reference);

  RunnerOptions options_;
  std::unique_ptr<WorkerProcess> worker_;
  /// References the current worker process holds (cleared when it restarts).
  std::set<uint64_t> sent_references_;
  int sent_generation_ = -1;
};

}  // namespace tensortune::measure

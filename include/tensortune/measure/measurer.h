// SPDX-License-Identifier: Apache-2.0
// The Measurer: the Builder and the Runner behind one call per batch, the reference outputs of a
// workload, the stop rule after too many consecutive failures, and where the time went.
#pragma once

#include "tensortune/ir/stmt.h"
#include "tensortune/measure/builder.h"
#include "tensortune/measure/measure_result.h"
#include "tensortune/measure/runner.h"
#include "tensortune/target/target.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tensortune::measure {

struct MeasurerOptions {
  BuilderOptions build;
  RunnerOptions run;
  /// Stop after this many failed trials in a row (0 = never).
  int max_consecutive_errors = 150;
  /// The reference kernel is checked against ir::eval when its loop nest executes at most this
  /// many stores (the interpreter is slow); larger workloads skip that check with a log line.
  int64_t interpreter_check_max_stores = int64_t{1} << 25;
  /// A candidate whose check call and one more call are this many times slower than the best
  /// candidate measured so far against the same reference is timed by that second call
  /// (TimingOptions::single_call_above_s); 0 = always the full protocol. Not applied by
  /// measure(..., Protocol::Full).
  double single_call_factor = 0;
  /// A batch is timed in this many round-robin rounds: run.timing.repeat and its budget are
  /// shared out among the rounds (5 repeats in 3 rounds: 2, 2, 1; never more rounds than
  /// repeats), every candidate that passed its check is run again in each round, and its result
  /// holds the repeats of all rounds and their median. On a shared host whose speed moves within
  /// seconds, a candidate's repeats then span the batch's whole timing instead of one moment of
  /// it: two passes over the same records ordered their pairs alike 0.882 of the time on average
  /// in 3 rounds, 0.821 in 1 (bench/record_repeatability --rounds; bench/RESULTS.md). A candidate
  /// that fails in any round is that failure (a kernel that crashes or errs now and then is never
  /// a best); one timed by its check call alone (single_call_factor) is not run again. 1 = each
  /// candidate timed once, in order.
  int rounds = 1;
};

/// Where the measurer's time went, summed over every batch.
struct MeasureTotals {
  int64_t trials = 0;
  std::array<int64_t, 6> by_status{};  // indexed by MeasureStatus
  double build_wall_seconds = 0;       // the parallel build phase
  double run_seconds = 0;              // timed calls
  double verify_seconds = 0;           // check runs and comparisons
  double wall_seconds = 0;             // everything, in measure()
};

class Measurer {
 public:
  /// For a CUDA target ("cuda -arch=sm_90") the candidates build with NVRTC in this process and
  /// run in a GPU-owning worker (RunnerOptions::gpu is set here). Throws UserError "measure: no
  /// CUDA device: <why>" when no device is usable, before starting anything, and the Builder's
  /// UserError when NVRTC is missing.
  Measurer(const target::Target& target, MeasurerOptions options = {});

  /// Builds the default schedule's kernel, runs it in the worker and keeps its outputs as the
  /// reference of every candidate of this workload; first checks that kernel against the
  /// interpreter (see interpreter_check_max_stores). For a CUDA target the default schedule is
  /// built for the host CPU and run there (on the device it has no thread bindings, so it would
  /// run on one GPU thread: hours for a large GEMM); the tuner still measures it on the device as
  /// a candidate, against this reference. Throws UserError when
  /// the default kernel fails to build or run, InternalError when it disagrees with the
  /// interpreter.
  std::shared_ptr<const Reference> make_reference(const ir::LoweredFunc& default_func,
                                                  const Tolerance& tolerance);

  /// Search: hopeless candidates are cut short (MeasurerOptions::single_call_factor). Full: every
  /// candidate gets the whole protocol, for measuring known records again (the side-by-side
  /// confirmation of a tuning job's best): a cut there would store one call's time as a record's
  /// confirmed speed.
  enum class Protocol { Search, Full };

  /// Builds the candidates in parallel, then runs them one at a time against `reference`, in
  /// MeasurerOptions::rounds round-robin rounds. One result per candidate, in order. Throws
  /// UserError when called after the stop rule fired.
  std::vector<MeasureResult> measure(const Reference& reference,
                                     const std::vector<ir::LoweredFunc>& candidates,
                                     Protocol protocol = Protocol::Search);

  /// True once max_consecutive_errors trials in a row failed; stop_reason() says why.
  bool stopped() const { return !stop_reason_.empty(); }
  const std::string& stop_reason() const { return stop_reason_; }
  const MeasureTotals& totals() const { return totals_; }
  const target::Target& target() const { return builder_.target(); }
  const MeasurerOptions& options() const { return options_; }
  Runner& runner() { return runner_; }

 private:
  void record(const MeasureResult& result);

  MeasurerOptions options_;
  Builder builder_;
  Runner runner_;
  uint64_t next_reference_id_ = 1;
  int consecutive_errors_ = 0;
  std::array<int64_t, 6> recent_by_status_{};  // the current run of failures, by status
  std::string last_error_;
  std::map<uint64_t, double> best_seconds_;  ///< per reference id, for single_call_factor
  std::string stop_reason_;
  MeasureTotals totals_;
};

}  // namespace tensortune::measure

// SPDX-License-Identifier: Apache-2.0
// What `tune`, `tune-model` and the Python package's tune() share (defined in tune_common.cpp):
// the search and measurement options with their defaults, and opening the database records go to.
#pragma once

#include "args.h"
#include "tensortune/database/database.h"
#include "tensortune/measure/measurer.h"
#include "tensortune/search/tuner.h"
#include "tensortune/target/target.h"

#include <atomic>
#include <csignal>
#include <string>
#include <vector>

namespace tensortune::cli {

/// Adds the search options of `tune`: --trials, --db, --tuner, --model, --seed, --batch,
/// --eps-greedy, --early-stop, --scheduler, --no-transfer, --no-prior, --prior-weight.
ArgParser& add_search_options(ArgParser& parser);
/// Adds --threads, --build-timeout, --run-timeout, --single-call-factor, --timing-budget,
/// --confirm, --confirm-rounds, --time-budget, and
/// --cache-flush (or, when `flush_by_default`, --no-cache-flush: tune-model's timings flush).
ArgParser& add_measurement_options(ArgParser& parser, bool flush_by_default = false);
/// Seconds of "600", "90s", "10m" or "2h"; UserError otherwise.
double parse_duration(const std::string& text);
/// The measurer's options from those flags (their defaults when absent), for `target`.
measure::MeasurerOptions measurer_options(const ArgParser::Parsed& p,
                                          const target::Target& target,
                                          bool flush_by_default = false);
/// The measurement options a queued job carries (tune --measure-on queue), and back: a worker
/// checks every value of a job row, which any client of the database may have written.
support::Json job_measure_options(const measure::MeasurerOptions& options);
measure::MeasurerOptions measurer_options_of_job(const std::string& json);
/// The search options from --tuner, --model, --trials (default 200), --seed, --batch,
/// --eps-greedy, --early-stop, --scheduler, --no-transfer, --no-prior, --confirm and
/// --confirm-rounds (defaults when absent); --time-budget (trials then default to no limit); the
/// zero-shot model as the initial model unless --no-zero-shot (add_zero_shot_options).
search::TuneOptions tune_options(const ArgParser::Parsed& p);

/// Gives a CPU job's confirmation the machine's speed to judge its rounds by (a 50 ms FMA loop
/// on the target's threads; TuneOptions::machine_speed). A GPU job's kernels do not run on the
/// host's FMA units: left unread.
void read_machine_speed(search::TuneOptions& o, const target::Target& target);

/// Unless --no-shipped: gives each task the shipped tuning logs' best records of its workload
/// that may run on this host (TuneTask::starts), so the job measures them here first and
/// searches on from them. A GPU target gets none.
void add_shipped_starts(const ArgParser::Parsed& p, std::vector<search::TuneTask>& tasks);
/// Opens (creating it and its folder) the database of --db, default tuning_logs/tensortune.db;
/// UserError naming `command` when the folder cannot be created.
database::Database open_tuning_database(const ArgParser::Parsed& p, const std::string& command);

/// While it lives, Ctrl-C (SIGINT) and, with `sigterm`, SIGTERM set flag() instead of ending the
/// process, with a note on stderr, so search::tune stops after saving the batch in flight; a
/// second Ctrl-C aborts at once. The previous handlers come back when it is destroyed. One at a
/// time per process.
class StopOnSignals {
 public:
  explicit StopOnSignals(bool sigterm);
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
  /// The flag search::tune watches.
  const std::atomic<bool>& flag() const;
  /// The signal that asked to stop; 0 when none did.
  int signal() const;
  /// Sets flag() as a signal would, without one (a Python callback that raised).
  void request_stop() const;

 private:
  bool sigterm_;
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

}  // namespace tensortune::cli

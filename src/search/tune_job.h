// SPDX-License-Identifier: Apache-2.0
// Private to search/: one tuning job as named steps, so that search::tune() reads like the
// pipeline it runs (register, warm start, schedule, rounds, confirm, finish).
#pragma once

#include "search/task_state.h"
#include "tensortune/cost_model/cost_model.h"
#include "tensortune/database/database.h"
#include "tensortune/measure/measurer.h"
#include "tensortune/search/task_scheduler.h"
#include "tensortune/search/tuner.h"

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

namespace tensortune::search::detail {

/// The model is trained, but on other workloads' records only: `state` has no measurements of its
/// own yet (a warm start from the database or from the run's other tasks).
bool trained_elsewhere(const TaskState& state, const cost_model::CostModel* model);

/// The next batch of at most `n` distinct, valid, unmeasured configurations of `state`
/// (propose.cpp).
std::vector<Config> propose(TaskState& state,
                            const cost_model::CostModel* model,
                            const TuneOptions& options,
                            size_t n);

/// Adds the measurer's time between two readings of its totals: the parallel build phase, and
/// the rest (running, verifying) as run time.
void add_measure_times(PhaseTimes& t,
                       const measure::MeasureTotals& before,
                       const measure::MeasureTotals& after);

class TuneJob {
 public:
  TuneJob(const std::vector<TuneTask>& tasks,
          const target::Target& target,
          const database::TargetKey& target_key,
          database::Database& db,
          measure::Measurer& measurer,
          const TuneOptions& options,
          const ProgressFn& progress,
          const std::atomic<bool>* stop);

  /// One TaskState per workload; every workload is stored in the database, once each one's
  /// default schedule is known to lower (UserError, nothing written, if not).
  void register_tasks();
  /// The records already stored (the tasks' own and, with transfer, other workloads') resume the
  /// tasks and train the model the tuner guides its search with.
  void warm_start();
  /// The task scheduler, told the resumed bests so that their warm-up round is not repeated.
  void schedule_tasks();
  /// The run row that this job's records point at.
  void start_run();
  /// One round: the scheduler's next task proposes a batch, which is lowered, measured, stored
  /// and learnt from. False when the job is over (budget spent, stop, space exhausted).
  bool run_round();
  /// Each task's top records measured again side by side (unless the job was stopped).
  void confirm_bests();
  /// Ends the run row and returns the job's result.
  TuneResult finish();
  /// Releases the job's claims that are left (a job that ends by an error).
  ~TuneJob();
  TuneJob(const TuneJob&) = delete;
  TuneJob& operator=(const TuneJob&) = delete;

 private:
  struct Batch {
    std::vector<Config> configs;
    size_t size = 0;  ///< trials this round may use
  };
  struct LoweredBatch {
    std::vector<ir::LoweredFunc> funcs;
    std::vector<std::optional<Config>> configs;  ///< nullopt: the default schedule
  };

  bool stop_requested() const { return stop_ != nullptr && stop_->load(); }
  /// Seconds one confirmation round of every task measured so far takes, estimated from this
  /// job's measurements (0 before any).
  double confirm_round_seconds() const;
  /// UserError naming the workload unless its default schedule (and the reference) lowers.
  void check_lowers(const TaskState& state) const;
  Batch propose_batch(int task, PhaseTimes& times);
  LoweredBatch lower_batch(TaskState& state, const Batch& batch, PhaseTimes& times);
  /// Claims the batch's schedules in the database (Database::claim) and drops those another job
  /// stored or is measuring, or that the budget has no room for; done_ becomes the budget used
  /// by every job. False when nothing is left to measure because the budget is spent.
  bool claim_batch(TaskState& state, LoweredBatch& lowered);
  std::vector<database::Record> store(TaskState& state,
                                      const LoweredBatch& lowered,
                                      const std::vector<measure::MeasureResult>& results,
                                      std::vector<int64_t>& ids,
                                      PhaseTimes& times);
  TuneProgress learn(int task,
                     const LoweredBatch& lowered,
                     const std::vector<measure::MeasureResult>& results,
                     const std::vector<database::Record>& records,
                     const std::vector<int64_t>& ids,
                     PhaseTimes& times);
  void report(int task, TuneProgress& progress, int64_t invalid_before, const PhaseTimes& times);

  const std::vector<TuneTask>& tasks_;
  const target::Target& target_;
  const database::TargetKey& target_key_;
  database::Database& db_;
  measure::Measurer& measurer_;
  /// Queues a lowered batch (TuneOptions::measure_on_queue), waits for the workers, and returns
  /// the records they stored, with `results` and `ids` filled as measure() and store() would.
  /// On a stop request the jobs not yet claimed are dropped and only the finished ones count.
  std::vector<database::Record> measure_on_queue(TaskState& state,
                                                 LoweredBatch& lowered,
                                                 std::vector<measure::MeasureResult>& results,
                                                 std::vector<int64_t>& ids,
                                                 PhaseTimes& times);
  const TuneOptions& options_;
  const ProgressFn& progress_;
  const std::atomic<bool>* stop_;

  double start_ = 0;
  detail::MachineSpeed speed_;
  std::vector<std::unique_ptr<TaskState>> states_;
  SampleSet samples_;
  std::unique_ptr<cost_model::CostModel> model_;
  std::optional<TaskScheduler> scheduler_;
  std::vector<bool> owed_;  ///< tasks still owed their first batch
  int64_t done_ = 0;        ///< trials counted against the budget (stored and claimed by any job)
  database::Claimer claimer_;
  int64_t round_ = 0;
  int64_t ok_total_ = 0;
  TuneResult out_;
};

}  // namespace tensortune::search::detail

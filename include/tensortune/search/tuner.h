// SPDX-License-Identifier: Apache-2.0
// The tuning loop: for each round, the task scheduler picks a workload, the tuner proposes a batch
// of unmeasured candidates (model + annealing or evolution, random, grid), the measurer builds and
// times them, the records go to the database in one transaction, and the cost model is retrained.
#pragma once

#include "tensortune/cost_model/xgboost_model.h"
#include "tensortune/database/database.h"
#include "tensortune/measure/machine_load.h"
#include "tensortune/measure/measurer.h"
#include "tensortune/search/evolutionary_search.h"
#include "tensortune/search/task_scheduler.h"
#include "tensortune/target/target.h"
#include "tensortune/te/workload.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tensortune::search {

enum class TunerKind : uint8_t {
  Xgb,     ///< XGBoost model + simulated annealing (the default)
  XgbEvo,  ///< XGBoost model + evolutionary search
  Random,  ///< uniform samples
  Grid,    ///< the space in grid order
};
/// "xgb", "xgb-evo", "random", "grid" and back; UserError on anything else.
const char* tuner_name(TunerKind kind);
TunerKind parse_tuner(const std::string& text);

/// One workload to tune.
struct TuneTask {
  te::Workload workload;
  /// The spec it came from ("matmul:M=..."); stored so records can be replayed and transferred.
  std::string spec;
  /// The operator ("matmul"); records of other shapes of it are compatible.
  std::string op;
  /// How often the workload runs in the model (the task scheduler's weight).
  double weight = 1.0;
  /// Tasks with the same group (>= 0) are forms of one computation (a conv layer, directly and
  /// by Winograd): the scheduler counts only the group's fastest (TaskScheduler::set_groups).
  int group = -1;
  /// Records of this workload tuned elsewhere (the shipped tuning logs): their configurations
  /// are measured here in the task's first batch, so the search starts from them. A record whose
  /// knobs do not fit the task's space is left out.
  std::vector<database::Record> starts{};

  /// The task of a workload spec ("matmul:M=64,N=64,K=64"): the workload, its canonical spec and
  /// its operator name. Throws UserError on a malformed spec.
  static TuneTask from_spec(const std::string& spec, double weight = 1.0);
};

struct TuneOptions {
  TunerKind tuner = TunerKind::Xgb;
  /// The job's trial budget over all tasks on this target. Records already in the database count
  /// towards it, so rerunning a stopped job finishes it and rerunning a finished one measures
  /// nothing.
  int64_t trials = 200;
  /// Candidates per round; the model is retrained after each. 32, not Ansor's 64: on these
  /// 2-core machines a round costs about 10 s of measuring and 1 s of search, and the model's
  /// guidance starts after 32 random trials instead of 64.
  int batch_size = 32;
  uint64_t seed = 0;
  /// Share of each model-guided batch drawn at random (rounded up: at least one when > 0).
  double eps_greedy = 0.05;
  /// The share of a task's first batch drawn at random (from the prior) when the model was
  /// trained on other workloads' records only (warm start): it has never seen this shape, so
  /// half the batch hedges against its bias. Side by side over five seeds (matmul 768x1024x512
  /// warm-started from 1024^3, 32 trials), warm@32 / own@200 went from 0.795-0.985 (median
  /// 0.884) with the eps-greedy share alone to 0.885-0.979 (median 0.900) with half.
  double first_batch_random_share = 0.5;
  /// The share of the batch measured in that first round (rounded up), so the model is
  /// retrained on the new shape's own measurements before it picks the rest. Matmul 768x1024x512
  /// warm-started from 1024^3 records, 32 trials, five seeds, each best timed side by side with
  /// the seed's own 200-trial best: warm@32 / own@200 median 0.899 in one round of 32, 0.947 in
  /// two of 16 (stored: 0.859 and 0.883). 1 = a full first round.
  double first_batch_share = 0.5;
  /// A task stops after this many trials without a better time (0 = never).
  int64_t early_stop = 0;
  TaskSchedulerOptions scheduler;
  /// Use the "random" cost model instead of XGBoost with annealing/evolution (for comparison).
  bool random_model = false;
  /// The model-guided tuners draw their random candidates (the first round, the eps-greedy share,
  /// the annealing's and evolution's fresh starts) from the sketch rules' prior
  /// (SearchSpace::sample_plausible) instead of uniformly. The random tuner always samples
  /// uniformly: it is the baseline.
  bool prior = true;
  /// With `prior`, the model-guided picks (annealing, evolution) score a configuration by the
  /// model's score plus prior_weight x (the range of the model's scores in that call) x
  /// log2(its prior), so the prior keeps steering after the model is trained (weigh_by_prior);
  /// 0 leaves the model alone.
  double prior_weight = 0.5;
  /// Warm-start the model from this workload's records (resume) and other workloads' (transfer);
  /// with `transfer`, each task's search also starts from the best configurations the run's other
  /// tasks have found so far.
  bool warm_start = true;
  bool transfer = true;
  /// At most this many old records are re-lowered to warm-start the model.
  int64_t max_warm_start_records = 3000;
  /// At the end of the job, each task that measured something has its `confirm_top` best records
  /// (of every run) measured again, `confirm_rounds` times round-robin, and the medians stored as
  /// a confirmation (Database::confirm), which `best` ranks by. The best of many noisy single
  /// measurements is biased towards lucky ones (the winner's curse); measured side by side, the
  /// kernels compare as kernels. confirm_top < 2 or confirm_rounds < 1: off.
  /// Each round runs in a fresh worker process, as a later re-time in a new process does, and a
  /// record's confirmed time is the median of its rounds' figures, so a slow moment during a
  /// minority of the rounds does not move it.
  int confirm_top = 5;
  int confirm_rounds = 5;
  /// Before the confirmation, wait up to this many seconds, and at most 5% of the job's time so
  /// far, for the machine to be quiet (less than half a CPU's worth of other runnable tasks,
  /// measure::wait_for_quiet); the load seen is kept in TuneResult::confirm_load. 0 = no wait.
  double confirm_quiet_wait_seconds = 30;
  /// Reads how fast the machine computes now (the CLI: a 50 ms FMA loop on the job's threads,
  /// in GFLOP/s); empty = not read. Read at the job's start and before each confirmation round.
  /// The load count above misses what slows a shared host without a runnable task of its own
  /// (a neighbour on the hypervisor): a round taken while the machine computes more than
  /// confirm_slow_share slower than the fastest of the confirmation's last 8 readings is set
  /// aside and measured again, up to confirm_rounds more rounds (with a time budget, only
  /// before its deadline). When fewer than half the rounds are fast, or the kept ones ran more
  /// than 2.5 confirm_slow_shares slower than the job's start, all are kept and each record's
  /// confirm_spread is raised to the slowdown, so every surface marks the figure noisy instead
  /// of reporting it as settled. A clock a few percent lower after the job's busy spell is
  /// neither: the job's trials ran at it too.
  std::function<double()> machine_speed;
  double confirm_slow_share = 0.06;
  /// Wall seconds the job takes, its confirmation included (0 = no limit): no round is started
  /// that would leave the confirmation less than its estimated time (from this job's
  /// measurements, at most a third of the budget), and the confirmation runs as many of its
  /// rounds as the time left holds, at least 3. The trial budget still applies.
  double time_budget_seconds = 0;
  /// A model trained beforehand on other workloads (the shipped zero-shot model): the
  /// model-guided tuners rank a task's candidates with it until the job's own model is trained,
  /// so the first batches start from what zero-shot would build instead of the prior's draws.
  std::shared_ptr<const cost_model::CostModel> initial_model;
  cost_model::XGBoostOptions xgb;
  AnnealingOptions annealing;
  EvolutionOptions evolution;
  /// Stored in every record.
  std::string tool_version, git_revision;
  /// Measure through the database's queue (tune --measure-on queue): each batch becomes jobs
  /// that `tensortune worker` processes of the target claim, measure and store; the job waits
  /// for them. The confirmation still measures here. `queue_options` is the measurement
  /// options every job carries (JSON), `queue_priority` their urgency among other tuners'
  /// jobs, `queue_lease` how expired leases are treated while waiting.
  bool measure_on_queue = false;
  std::string queue_options = "{}";
  int64_t queue_priority = 0;
  database::LeasePolicy queue_lease;
};

/// Seconds spent per phase.
struct PhaseTimes {
  double search = 0, features = 0, training = 0, build = 0, run = 0, database = 0;
  PhaseTimes& operator+=(const PhaseTimes& o);
};

/// What the progress callback sees after each measured round.
struct TuneProgress {
  int task = 0;
  std::string workload_name;
  int64_t round = 0;
  /// Trials so far (records found in the database included) and the budget (TuneOptions::trials).
  int64_t trials = 0, budget = 0;
  /// Trials measured by this call so far.
  int64_t measured = 0;
  /// TuneOptions::time_budget_seconds.
  double time_budget_seconds = 0;
  /// This task's trials including records found in the database, and its best so far.
  int64_t task_trials = 0;
  double best_seconds = 0, best_gflops = 0;
  /// Whether best_seconds is a confirmed time (a resumed task's confirmed best); a best measured
  /// in this job is a single measurement until the end-of-job confirmation.
  bool best_confirmed = false;
  int64_t round_ok = 0, round_errors = 0, round_invalid = 0;
  double elapsed_seconds = 0;
  PhaseTimes round_times, total_times;
};

struct TaskResult {
  std::string workload_key, workload_name;
  /// Records of this workload and target found in the database before the run.
  int64_t resumed = 0;
  int64_t trials = 0, ok = 0;
  /// The best record and its time as every surface shows it (database::Record::seconds): its
  /// confirmed side-by-side median when best_confirmed, else its stored single measurement.
  double best_seconds = 0, best_gflops = 0;
  int64_t best_record_id = 0;
  bool best_confirmed = false;
  /// The relative spread of the best's middle confirmation rounds (support::middle_spread: of 5
  /// rounds, (4th - 2nd fastest) / median; 0 when unconfirmed). Above kNoisySpread the figure is
  /// too noisy to trust.
  double best_spread = 0;
  /// The confirmed runner-up's time relative to the best's, minus 1 (-1 when there is none): a
  /// gap within best_spread means the two are equally fast as far as this machine can tell.
  double runner_up_gap = -1;
  /// How many records were measured again side by side at the end of the run
  /// (TuneOptions::confirm_top), and the record that single measurements ranked first before
  /// that; best_* then name the confirmed best, with its own stored median.
  int64_t confirmed = 0;
  int64_t unconfirmed_best_id = 0;
  /// Records whose confirmation failed at the end of the run (their schedule no longer replays,
  /// or they failed every time they were measured again): no longer best anywhere.
  int64_t refuted = 0;
  /// (trials of this call when reached, best GFLOP/s) after each improvement.
  std::vector<std::pair<int64_t, double>> curve;
};

/// A confirmation whose middle rounds spread more than this (relative) is too noisy to decide.
constexpr double kNoisySpread = 0.10;

struct TuneResult {
  std::vector<TaskResult> tasks;
  /// The machine's load just before the confirmation (after waiting up to
  /// TuneOptions::confirm_quiet_wait_seconds for a quiet moment); others_runnable is -1 when no
  /// confirmation ran.
  measure::MachineLoad confirm_load;
  /// With TuneOptions::machine_speed: the machine's speed over the confirmation rounds kept,
  /// relative to its fastest reading of the job (the lowest of the job's confirmations; 0 = not
  /// read), how many rounds were set aside as slow and measured again, and whether a
  /// confirmation had to keep slow rounds (its records' spreads then count the slowdown).
  double confirm_speed = 0;
  int64_t confirm_slow_rounds = 0;
  bool confirm_stayed_slow = false;
  int64_t trials = 0;
  int64_t run_id = 0;
  PhaseTimes times;
  double wall_seconds = 0;
  /// True when stopped by the stop flag; `stop_reason` also names the measurer's stop rule or an
  /// exhausted space.
  bool interrupted = false;
  std::string stop_reason;
};

using ProgressFn = std::function<void(const TuneProgress&)>;

/// UserError when two tasks are one workload (same key: matmul:M=64,N=64,K=64 and
/// matmul:K=64,N=64,M=64): the second would measure the same schedules again and report a second
/// best. tune() checks it; a caller can check before it opens anything.
void check_distinct_workloads(const std::vector<TuneTask>& tasks);

/// Tunes `tasks` for `target`, writing every measured candidate to `db` under `target_key` (one
/// transaction per batch) and never measuring a configuration already stored. `stop`, when set to
/// true from another thread or a signal handler, ends the run after the batch in flight is saved.
/// Deterministic for a seed up to measured times. Throws UserError on bad options.
TuneResult tune(const std::vector<TuneTask>& tasks,
                const target::Target& target,
                const database::TargetKey& target_key,
                database::Database& db,
                measure::Measurer& measurer,
                const TuneOptions& options,
                const ProgressFn& progress = {},
                const std::atomic<bool>* stop = nullptr);

}  // namespace tensortune::search

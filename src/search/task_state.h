// SPDX-License-Identifier: Apache-2.0
// Private to search/: the state the tuning loop keeps per task (its space, evaluator, what was
// measured, its best configurations) and the samples the cost model trains on.
#pragma once

#include "tensortune/cost_model/cost_model.h"
#include "tensortune/database/database.h"
#include "tensortune/measure/measure_result.h"
#include "tensortune/measure/measurer.h"
#include "tensortune/measure/runner.h"
#include "tensortune/search/evolutionary_search.h"
#include "tensortune/search/search_space.h"
#include "tensortune/search/tuner.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tensortune::search::detail {

/// One measured candidate as the model sees it, before per-group normalisation.
struct RawSample {
  std::string group;
  std::vector<float> features;
  double gflops = 0;  ///< 0 for a failed candidate
};

/// The model's training set: normalises each group by its best throughput.
class SampleSet {
 public:
  void add(RawSample sample);
  size_t size() const { return samples_.size(); }
  std::vector<cost_model::Sample> normalised() const;

 private:
  std::vector<RawSample> samples_;
};

struct TaskState {
  TaskState(const TuneTask& task, const target::Target& target, uint64_t seed);
  TaskState(const TaskState&) = delete;
  TaskState& operator=(const TaskState&) = delete;

  /// Names the database's best record of the task as its best, with the time every surface shows
  /// for it (Record::seconds: its confirmation when it has one, else its stored median; none
  /// when no record may be best).
  void take_best_from(const database::Database& db, const database::TargetKey& target_key);
  /// Records a measured configuration: updates measured keys, the best and the top list.
  void note_measured(const Config* config,
                     const std::string& schedule_json,
                     double seconds,
                     int64_t record_id,
                     int64_t trial_index);
  /// The schedule JSON a record of `config` stores (different configurations can give the same
  /// steps: a knob that another knob makes irrelevant).
  std::string schedule_text(const Config& config) const;
  /// Starting points of the search: the best measured configurations, fastest first, with the
  /// best of each other sketch within 1.5x of the task's best in up to half of the places (once
  /// one sketch leads, the top list is all its neighbours and a sketch close behind would never
  /// be refined), then the transferred ones (database, then this run's other tasks).
  std::vector<Config> top_configs(size_t n) const;
  bool is_measured(const std::string& key) const { return measured.count(key) != 0; }

  const TuneTask* task;
  double flops;
  SearchSpace space;
  CandidateEvaluator evaluator;
  support::Rng rng;
  std::unordered_set<std::string> measured;            ///< config keys
  std::unordered_set<std::string> measured_schedules;  ///< steps JSON of measured records
  std::vector<std::pair<double, Config>> top;          ///< (seconds, config), fastest first
  std::map<int, std::pair<double, Config>>
      sketch_best;                      ///< per sketch: its fastest (seconds, config)
  std::vector<Config> transfer_starts;  ///< good configs of other shapes
  bool zero_shot_started = false;       ///< the initial model's zero-shot pick is among them
  std::vector<Config> peer_starts;  ///< the best of this run's other tasks, mapped to this space
  std::shared_ptr<const measure::Reference> reference;
  TaskResult result;
  double grid_offset = 0;
  int64_t since_improvement = 0;
  /// The best's time on the stored medians' scale (Record::rank_seconds), which new single
  /// measurements compare with: a confirmed best's shown time may be taken on a slower moment.
  double best_rank_seconds = 0;
  /// The default schedule has a record: it is measured once per task and target, so reports and
  /// users can compare against it.
  bool default_measured = false;
  /// The default schedule: no steps on a CPU; on a GPU, schedule::default_gpu_steps (what the
  /// compiler gives an untuned workload; no steps would run on one GPU thread). The reference
  /// output is always computed with no steps, on the host.
  std::vector<schedule::Step> default_steps;
};

/// Loads the task's own records (resume: measured keys, best, samples) and, with `transfer`,
/// records of other workloads on the same target (samples and starting points). Returns how many
/// records were re-lowered for features.
int64_t warm_start(std::vector<std::unique_ptr<TaskState>>& states,
                   const database::Database& db,
                   const database::TargetKey& target_key,
                   const target::Target& target,
                   const TuneOptions& options,
                   SampleSet& samples);

/// Sets `states[self].peer_starts`: the best `per_peer` configurations of up to `max_peers` other
/// tasks of the run, each mapped to the nearest configuration of this task's space (tasks whose
/// sketches this space lacks map to nothing). Tasks of the same operator come first, then the
/// nearest in FLOPs: a register tile or vector axis one layer of a network found starts the
/// search of its other layers, within the run, before any of them is in the database.
void collect_peer_starts(std::vector<std::unique_ptr<TaskState>>& states,
                         size_t self,
                         size_t per_peer,
                         size_t max_peers);

/// Seconds since the Unix epoch (record timestamps, tuning run start and end).
int64_t unix_now();

/// The database record of one measured candidate; `config` is null for the default schedule.
/// Builds the task's reference (the plain schedule's kernel, run once; its outputs check every
/// candidate) unless it has one. UserError when the plain schedule does not lower.
void ensure_reference(TaskState& state, measure::Measurer& measurer);

database::Record make_record(const TaskState& state,
                             const Config* config,
                             const measure::MeasureResult& result,
                             const database::TargetKey& target_key,
                             const TuneOptions& options,
                             int64_t run_id);

/// The machine's speed through a job's confirmations (TuneOptions::machine_speed).
struct MachineSpeed {
  std::function<double()> read;  ///< empty: rounds are not judged
  /// The fastest reading of the job: how slow the kept rounds ran is reported against it.
  double fastest = 0;
  /// The confirmation's latest readings (at most kRecent), against whose fastest a round is
  /// judged slow. Not the job's fastest: after a long job a host's clock settles a few percent
  /// below its start for good, and against that every round read slow, was measured again and
  /// then kept as noisy. A burst of another process still shows against its neighbours.
  std::vector<double> recent;
  static constexpr size_t kRecent = 8;
  /// Kept rounds slower than the job's fastest reading by more than this many slow_shares mark
  /// the confirmation's figures noisy (stayed_slow).
  static constexpr double kSettledShares = 2.5;
  double slow_share = 0.06;
  /// measure::now_seconds() after which a slow round is no longer measured again (0 = never
  /// after): a job with a time budget keeps its deadline.
  double remeasure_until = 0;
  /// Over the job: the lowest relative speed of the rounds a confirmation kept (0 = none read),
  /// and the rounds set aside as slow.
  double kept_speed = 0;
  int64_t slow_rounds = 0;
  /// True once a confirmation kept slow rounds (fewer than half its rounds were fast against
  /// their neighbours, or all well slower than the job's start).
  bool stayed_slow = false;

  /// Reads the speed now and raises `fastest`; 0 when there is no read.
  double sample();
  /// Reads the speed now for a confirmation round; `reference` becomes the fastest of this
  /// reading and the confirmation's recent ones.
  double sample_round(double& reference);
};

/// The end of a job (TuneOptions::confirm_top): the task's `top` best records, and the best
/// `top` / 2 (at least 1) that run `run_id` measured when they are not among them, measured
/// again side by side, `rounds` times round-robin, and stored with Database::confirm; the task's
/// result then names the confirmed best. A resumed job's new records were timed on the machine
/// as it is now, the old best when it may have been faster: only side by side do they compare.
/// Does nothing for a task that measured nothing in this run or has fewer than 2 working
/// records. A stop requested through `stop` (when not null) before the last round ends it
/// without storing anything (a partial confirmation would rank records by fewer rounds than
/// the rest); returns false then, true otherwise. With `speed` (when not null and its read is
/// set), each round is judged by the machine's speed before it (TuneOptions::machine_speed).
bool confirm_best(TaskState& state,
                  database::Database& db,
                  const database::TargetKey& target_key,
                  measure::Measurer& measurer,
                  int top,
                  int rounds,
                  int64_t run_id,
                  const std::atomic<bool>* stop,
                  MachineSpeed* speed = nullptr);

}  // namespace tensortune::search::detail

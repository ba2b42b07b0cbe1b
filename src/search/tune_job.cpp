// SPDX-License-Identifier: Apache-2.0
// The steps of one tuning job: propose a batch for the scheduler's task, lower, measure, store,
// retrain, report; then confirm the bests side by side.
#include "search/tune_job.h"

#include "tensortune/cost_model/random_model.h"
#include "tensortune/cost_model/xgboost_model.h"
#include "tensortune/lower/lower.h"
#include "tensortune/measure/timing.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/search/zero_shot.h"
#include "tensortune/support/error.h"
#include "tensortune/support/log.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <unistd.h>
#include <unordered_set>

namespace tensortune::search::detail {

namespace {

/// In-run transfer: the best configurations of how many other tasks, and how many of each, start
/// a task's search (TaskState::peer_starts).
constexpr size_t kPeerTasks = 6;
constexpr size_t kPeerConfigs = 2;

double now() {
  return measure::now_seconds();
}

support::Json options_json(const std::vector<TuneTask>& tasks,
                           const TuneOptions& o,
                           const measure::MeasurerOptions& m) {
  support::Json j = support::Json::object();
  j["tuner"] = tuner_name(o.tuner);
  j["trials"] = o.trials;
  j["batch_size"] = o.batch_size;
  j["seed"] = static_cast<int64_t>(o.seed);
  j["eps_greedy"] = o.eps_greedy;
  j["first_batch_random_share"] = o.first_batch_random_share;
  j["first_batch_share"] = o.first_batch_share;
  j["early_stop"] = o.early_stop;
  j["scheduler"] = policy_name(o.scheduler.policy);
  j["model"] = o.random_model ? "random" : "xgb";
  j["prior"] = o.prior;
  j["prior_weight"] = o.prior ? o.prior_weight : 0.0;
  j["confirm_top"] = o.confirm_top;
  j["confirm_rounds"] = o.confirm_rounds;
  j["time_budget_seconds"] = o.time_budget_seconds;
  j["initial_model"] = o.initial_model != nullptr;
  // Times taken with cold weights are not comparable with warm ones.
  j["cache_flush"] = m.run.timing.cache_flush;
  j["measure_rounds"] = m.rounds;
  support::Json workloads = support::Json::array();
  for (const TuneTask& t : tasks)
    workloads.push_back(t.workload.key());
  j["workloads"] = std::move(workloads);
  return j;
}

}  // namespace

void add_measure_times(PhaseTimes& t,
                       const measure::MeasureTotals& before,
                       const measure::MeasureTotals& after) {
  const double build = after.build_wall_seconds - before.build_wall_seconds;
  t.build += build;
  t.run += (after.wall_seconds - before.wall_seconds) - build;
}

TuneJob::TuneJob(const std::vector<TuneTask>& tasks,
                 const target::Target& target,
                 const database::TargetKey& target_key,
                 database::Database& db,
                 measure::Measurer& measurer,
                 const TuneOptions& options,
                 const ProgressFn& progress,
                 const std::atomic<bool>* stop)
    : tasks_(tasks),
      target_(target),
      target_key_(target_key),
      db_(db),
      measurer_(measurer),
      options_(options),
      progress_(progress),
      stop_(stop),
      start_(now()) {
  speed_.read = options.machine_speed;
  speed_.slow_share = options.confirm_slow_share;
  speed_.sample();  // what the machine computes at the start, before any load of the job
  claimer_.owner = static_cast<int64_t>(std::random_device{}() >> 1) << 31 ^
                   static_cast<int64_t>(::getpid()) ^ static_cast<int64_t>(unix_now());
  claimer_.pid = ::getpid();
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0)
    claimer_.host = host;
}

TuneJob::~TuneJob() {
  try {
    db_.release_claims(claimer_.owner);
  } catch (const std::exception& e) {  // a destructor must not throw; the claims expire anyway
    TT_LOG(0) << "tune: could not release the job's claims: " << e.what();
  }
}

void TuneJob::register_tasks() {
  support::Rng seeds(options_.seed);
  for (const TuneTask& t : tasks_)
    states_.push_back(std::make_unique<TaskState>(t, target_, seeds.next()));
  // A workload that cannot be lowered (int32 indices overflow, ...) fails the job before anything
  // is written: otherwise its candidates are all dropped as invalid and the job ends "exhausted",
  // leaving a workload and a run row behind.
  for (const auto& s : states_)
    check_lowers(*s);
  for (const TuneTask& t : tasks_) {
    db_.put_workload({t.workload.key(), t.workload.name(), t.workload.canonical_text(),
                      t.workload.flop_count(), t.op, t.spec});
  }
}

void TuneJob::check_lowers(const TaskState& state) const {
  const te::Workload& w = state.task->workload;
  try {
    lower::lower(schedule::apply_steps(w, state.default_steps), target_, lower::function_name(w));
    if (!state.default_steps.empty())  // the reference is the plain schedule
      lower::lower(schedule::apply_steps(w, {}), target_, lower::function_name(w));
  } catch (const UserError& e) {
    throw UserError("tune: workload '" + w.name() + "' cannot be lowered: " + e.what());
  }
}

void TuneJob::warm_start() {
  double t0 = now();
  const int64_t warm = detail::warm_start(states_, db_, target_key_, target_, options_, samples_);
  out_.times.features += now() - t0;
  if (options_.tuner == TunerKind::Xgb || options_.tuner == TunerKind::XgbEvo) {
    if (options_.random_model) {
      model_ = std::make_unique<cost_model::RandomModel>(options_.seed);
    } else {
      model_ = std::make_unique<cost_model::XGBoostModel>(options_.xgb);
    }
    t0 = now();
    if (samples_.size() > 0)
      model_->train(samples_.normalised());
    out_.times.training += now() - t0;
  }
  TT_LOG(1) << "search: warm start from " << warm << " records (" << samples_.size() << " samples)";
  for (const auto& s : states_)
    done_ += s->result.resumed;
}

void TuneJob::schedule_tasks() {
  std::vector<double> weights, flops;
  std::vector<std::string> ops;
  std::vector<int> groups;
  for (const TuneTask& t : tasks_) {
    weights.push_back(t.weight);
    flops.push_back(t.workload.flop_count());
    ops.push_back(t.op);
    groups.push_back(t.group);
  }
  TaskSchedulerOptions sched = options_.scheduler;
  sched.seed = options_.seed;
  scheduler_.emplace(weights, flops, ops, sched);
  scheduler_->set_groups(groups);
  // A task resumed with a best from the database has had its warm-up round: the gradient rule
  // picks among the resumed tasks at once, instead of giving each one another round first.
  for (size_t i = 0; i < states_.size(); ++i) {
    if (states_[i]->best_rank_seconds > 0)
      scheduler_->report(static_cast<int>(i), states_[i]->best_rank_seconds);
  }
  // Tasks still owed their first batch (a resumed one with a best has had it). While the
  // trials left cannot give each a whole batch, each takes an even share of them, so a small
  // budget over many workloads reaches every one instead of the first few.
  owed_.assign(states_.size(), false);
  for (size_t i = 0; i < states_.size(); ++i)
    owed_[i] = states_[i]->result.best_seconds <= 0;
  const auto never_measured = static_cast<int64_t>(std::count(owed_.begin(), owed_.end(), true));
  if (never_measured > 0 && options_.trials - done_ < never_measured) {
    TT_LOG(0) << "tune: " << std::max<int64_t>(0, options_.trials - done_) << " trials left for "
              << never_measured << " workloads never measured: the last ones get none";
  }
}

void TuneJob::start_run() {
  database::TuningRun run;
  run.workload_key = tasks_.front().workload.key();
  run.target = target_key_;
  run.options = options_json(tasks_, options_, measurer_.options()).dump();
  run.started = unix_now();
  out_.run_id = db_.start_run(run);
}

bool TuneJob::run_round() {
  if (done_ >= options_.trials)
    return false;
  if (options_.time_budget_seconds > 0) {
    // A round that would end well past the deadline is not started: half a mean round's time
    // left is the least that is worth one. The confirmation is inside the budget too: the
    // time its rounds take is kept for it, up to a third of the budget (confirm_bests runs
    // fewer rounds when that is short).
    const double elapsed = now() - start_;
    const double mean_round = round_ > 0 ? elapsed / static_cast<double>(round_) : 0;
    const double reserve = std::min(options_.time_budget_seconds / 3,
                                    options_.confirm_rounds * confirm_round_seconds());
    if (elapsed + mean_round / 2 + reserve >= options_.time_budget_seconds) {
      out_.stop_reason = "the time budget is spent";
      return false;
    }
  }
  if (stop_requested()) {
    out_.interrupted = true;
    out_.stop_reason = "stopped on request";
    return false;
  }
  const int ti = scheduler_->next();
  if (ti < 0) {
    out_.stop_reason = "every task is finished (space exhausted or early stop)";
    return false;
  }
  TaskState& state = *states_[static_cast<size_t>(ti)];
  PhaseTimes times;
  const int64_t invalid_before = state.evaluator.invalid();
  const Batch batch = propose_batch(ti, times);
  if (batch.configs.empty()) {
    TT_LOG(1) << "search: the space of " << state.result.workload_name << " is exhausted";
    scheduler_->finish(ti);
    return true;
  }
  LoweredBatch lowered = lower_batch(state, batch, times);
  if (!claim_batch(state, lowered)) {
    out_.stop_reason = "the trial budget is spent (by this and other jobs on the database)";
    return false;
  }
  if (lowered.funcs.empty())
    return true;  // other jobs measure these: the next proposals differ
  std::vector<measure::MeasureResult> results;
  std::vector<int64_t> ids;
  std::vector<database::Record> records;
  if (options_.measure_on_queue) {
    records = measure_on_queue(state, lowered, results, ids, times);
  } else {
    const measure::MeasureTotals before = measurer_.totals();
    results = measurer_.measure(*state.reference, lowered.funcs);
    add_measure_times(times, before, measurer_.totals());
    records = store(state, lowered, results, ids, times);
  }
  TuneProgress progress = learn(ti, lowered, results, records, ids, times);
  report(ti, progress, invalid_before, times);
  if (measurer_.stopped()) {
    out_.stop_reason = measurer_.stop_reason();
    return false;
  }
  return true;
}

TuneJob::Batch TuneJob::propose_batch(int task, PhaseTimes& times) {
  TaskState& state = *states_[static_cast<size_t>(task)];
  const double ev0 = state.evaluator.seconds();
  const double t0 = now();
  // Until the job's own model has learnt something, a model trained beforehand guides: on a CPU
  // only, the shipped one having been trained on CPU code.
  const cost_model::CostModel* guide = model_.get();
  if (guide != nullptr && !guide->trained() && options_.initial_model &&
      options_.initial_model->trained() && !options_.random_model && !target_.is_gpu()) {
    guide = options_.initial_model.get();
  }
  // On a GPU, zero-shot ranks by the sketch prior whatever the model.
  const bool zero_shot_guides = target_.is_gpu()
                                    ? !options_.random_model
                                    : guide != nullptr && guide == options_.initial_model.get();
  if (zero_shot_guides && state.top.empty() && !state.zero_shot_started &&
      options_.tuner != TunerKind::Random) {
    // The first batch measures what zero-shot builds (under the same model on a CPU), so no
    // tuned record ends slower than the zero-shot pick it replaces at compile time: from an
    // empty database (no shipped logs), 10 minutes of ResNet-18 tuning otherwise built 8.93 ms
    // against the zero-shot build's 8.67.
    state.zero_shot_started = true;
    const std::optional<ZeroShotPick> pick =
        ZeroShot(options_.initial_model).pick(state.task->workload, target_);
    if (pick && !pick->configuration.is_null()) {
      state.transfer_starts.insert(state.transfer_starts.begin(),
                                   state.space.from_json(pick->configuration));
    }
  }
  int64_t size = options_.batch_size;
  if (!options_.random_model && trained_elsewhere(state, guide)) {
    // Part of a batch, then retrain on this shape; never fewer than the transferred
    // configurations and the default schedule.
    const double part = options_.first_batch_share * static_cast<double>(size);
    const auto starts = static_cast<int64_t>(state.transfer_starts.size()) + 1;
    size = std::max(static_cast<int64_t>(std::ceil(part)), std::min(size, starts));
  }
  if (owed_[static_cast<size_t>(task)]) {
    const auto owing = std::count(owed_.begin(), owed_.end(), true);
    size = std::min(size, std::max<int64_t>(1, (options_.trials - done_) / owing));
    owed_[static_cast<size_t>(task)] = false;
  }
  Batch batch;
  batch.size = static_cast<size_t>(std::min<int64_t>(size, options_.trials - done_));
  if (options_.transfer && model_)  // only the model-guided tuners start from them
    detail::collect_peer_starts(states_, static_cast<size_t>(task), kPeerConfigs, kPeerTasks);
  batch.configs = propose(state, guide, options_, batch.size);
  times.features = state.evaluator.seconds() - ev0;
  times.search = now() - t0 - times.features;
  return batch;
}

TuneJob::LoweredBatch TuneJob::lower_batch(TaskState& state,
                                           const Batch& batch,
                                           PhaseTimes& times) {
  // The reference is lowered once per task. The default schedule is measured once per task, as
  // one of the trials.
  const double t0 = now();
  LoweredBatch out;
  std::optional<ir::LoweredFunc> def;
  if (!state.default_measured) {
    def = state.evaluator.lower_steps(state.default_steps);
    TT_USER_CHECK(def.has_value())
        << "tune: the default schedule of " << state.result.workload_name << " does not lower";
  }
  // Measuring on the queue, the workers build references of their own; this job needs one only
  // for its confirmation, which makes it then.
  if (!options_.measure_on_queue)
    detail::ensure_reference(state, measurer_);
  const size_t room = state.default_measured ? batch.size : batch.size - 1;
  for (const Config& c : batch.configs) {
    if (out.funcs.size() >= room)
      break;
    if (std::optional<ir::LoweredFunc> f = state.evaluator.lower_config(c)) {
      out.funcs.push_back(std::move(*f));
      out.configs.emplace_back(c);
    }
  }
  if (!state.default_measured) {  // last, so a slow default costs a single call
    out.funcs.push_back(*def);
    out.configs.emplace_back(std::nullopt);
    state.default_measured = true;
  }
  times.features += now() - t0;
  return out;
}

bool TuneJob::claim_batch(TaskState& state, LoweredBatch& lowered) {
  database::ClaimRequest q;
  for (const TuneTask& t : tasks_)
    q.budget_keys.push_back(t.workload.key());
  q.budget = options_.trials;
  q.workload_key = state.task->workload.key();
  q.target = target_key_;
  q.claimer = claimer_;
  q.now = unix_now();
  for (const std::optional<Config>& c : lowered.configs) {
    q.schedules.push_back(
        c ? state.schedule_text(*c)
          : schedule::to_json(schedule::Schedule{q.workload_key, state.default_steps}).dump());
  }
  const double t0 = now();
  const database::ClaimResult claimed = db_.claim(q);
  out_.times.database += now() - t0;
  done_ = claimed.used;
  LoweredBatch kept;
  for (size_t i = 0; i < lowered.configs.size(); ++i) {
    if (claimed.claimed[i]) {
      kept.funcs.push_back(std::move(lowered.funcs[i]));
      kept.configs.push_back(std::move(lowered.configs[i]));
      continue;
    }
    // Not proposed again: another job stores it, or the budget ends first.
    const std::optional<Config>& c = lowered.configs[i];
    state.note_measured(c ? &*c : nullptr, q.schedules[i], 0, 0, 0);
  }
  if (kept.funcs.size() < lowered.funcs.size()) {
    TT_LOG(1) << "search: " << lowered.funcs.size() - kept.funcs.size() << " of "
              << lowered.funcs.size() << " candidates of " << state.result.workload_name
              << " left to other jobs or beyond the budget";
  }
  lowered = std::move(kept);
  return !lowered.funcs.empty() || done_ < options_.trials;
}

std::vector<database::Record> TuneJob::store(TaskState& state,
                                             const LoweredBatch& lowered,
                                             const std::vector<measure::MeasureResult>& results,
                                             std::vector<int64_t>& ids,
                                             PhaseTimes& times) {
  const double t0 = now();
  std::vector<database::Record> records;
  for (size_t i = 0; i < lowered.configs.size(); ++i) {
    const std::optional<Config>& c = lowered.configs[i];
    records.push_back(detail::make_record(state, c ? &*c : nullptr, results[i], target_key_,
                                          options_, out_.run_id));
  }
  ids = db_.add_records(records);
  times.database = now() - t0;
  return records;
}

std::vector<database::Record> TuneJob::measure_on_queue(
    TaskState& state,
    LoweredBatch& lowered,
    std::vector<measure::MeasureResult>& results,
    std::vector<int64_t>& ids,
    PhaseTimes& times) {
  double t0 = now();
  std::vector<database::Job> jobs;
  for (const std::optional<Config>& c : lowered.configs) {
    database::Job j;
    j.record = detail::make_record(state, c ? &*c : nullptr, measure::MeasureResult{}, target_key_,
                                   options_, out_.run_id);
    j.options = options_.queue_options;
    j.owner = claimer_.owner;
    j.priority = options_.queue_priority;
    jobs.push_back(std::move(j));
  }
  const std::vector<int64_t> job_ids = db_.enqueue(jobs, unix_now());
  times.database += now() - t0;
  // Waiting for the workers is this job's measuring time: their own build and run times are
  // in the records.
  t0 = now();
  std::vector<database::Job> finished;
  double last_note = now();
  for (;;) {
    finished = db_.jobs(job_ids);
    const bool all = std::all_of(finished.begin(), finished.end(), [](const database::Job& j) {
      return j.state == "done" || j.state == "error";
    });
    if (all)
      break;
    if (stop_requested()) {
      // What no worker has claimed is dropped; what runs is stored by its worker and counted.
      db_.cancel_jobs(claimer_.owner);
      const auto running = std::any_of(finished.begin(), finished.end(),
                                       [](const database::Job& j) { return j.state == "running"; });
      if (!running) {
        finished = db_.jobs(job_ids);
        break;
      }
    }
    // The tuner, too, returns the jobs of workers that died to the queue: with every worker
    // gone nobody else would.
    db_.requeue_expired(unix_now(), options_.queue_lease);
    if (now() - last_note > 60) {
      TT_LOG(0) << "tune: waiting for queue workers of '" << target_key_.target << "' ("
                << std::count_if(finished.begin(), finished.end(),
                                 [](const database::Job& j) { return j.state == "queued"; })
                << " of " << finished.size() << " jobs not claimed yet; see 'tensortune workers')";
      last_note = now();
    }
    db_.wait_for("done", 1.0);
  }
  // The finished jobs, in batch order; jobs dropped on a stop leave the batch.
  LoweredBatch kept;
  std::vector<database::Record> records;
  for (size_t i = 0; i < job_ids.size(); ++i) {
    auto it = std::find_if(finished.begin(), finished.end(),
                           [&](const database::Job& j) { return j.id == job_ids[i]; });
    if (i == 0) {
      times.run += now() - t0;
      t0 = now();
    }
    if (it == finished.end() || it->record_id == 0)
      continue;
    std::optional<database::Record> r = db_.record(it->record_id);
    TT_CHECK(r.has_value()) << "tune: record " << it->record_id << " of job " << it->id
                            << " is missing";
    measure::MeasureResult m;
    m.status = measure::parse_status(r->status);
    m.message = r->error;
    m.repeats = r->repeats;
    m.median_seconds = r->median_seconds;
    m.build_seconds = r->build_seconds;
    m.run_seconds = r->run_seconds;
    m.wall_seconds = r->wall_seconds;
    results.push_back(m);
    ids.push_back(r->id);
    records.push_back(std::move(*r));
    kept.funcs.push_back(std::move(lowered.funcs[i]));
    kept.configs.push_back(std::move(lowered.configs[i]));
  }
  lowered = std::move(kept);
  times.database += now() - t0;
  return records;
}

TuneProgress TuneJob::learn(int task,
                            const LoweredBatch& lowered,
                            const std::vector<measure::MeasureResult>& results,
                            const std::vector<database::Record>& records,
                            const std::vector<int64_t>& ids,
                            PhaseTimes& times) {
  TaskState& state = *states_[static_cast<size_t>(task)];
  TuneProgress p;
  const double best_before = state.best_rank_seconds;
  for (size_t i = 0; i < lowered.configs.size(); ++i) {
    ++done_;
    ++out_.trials;
    ++state.result.trials;
    const bool ok = results[i].ok();
    p.round_ok += ok ? 1 : 0;
    p.round_errors += ok ? 0 : 1;
    const Config* config = lowered.configs[i] ? &*lowered.configs[i] : nullptr;
    state.note_measured(config, records[i].schedule, ok ? results[i].median_seconds : 0, ids[i],
                        out_.trials);
    if (const std::vector<float>* f = config ? state.evaluator.features(*config) : nullptr) {
      samples_.add({state.result.workload_key, *f,
                    ok ? state.flops / results[i].median_seconds * 1e-9 : 0.0});
    }
  }
  ok_total_ += p.round_ok;
  state.result.ok += p.round_ok;
  const bool improved =
      state.best_rank_seconds > 0 && (best_before <= 0 || state.best_rank_seconds < best_before);
  state.since_improvement =
      improved ? 0 : state.since_improvement + static_cast<int64_t>(lowered.configs.size());
  scheduler_->report(task, state.best_rank_seconds);
  if (options_.early_stop > 0 && state.since_improvement >= options_.early_stop) {
    TT_LOG(1) << "search: " << state.result.workload_name << " stopped improving";
    scheduler_->finish(task);
  }
  if (model_) {
    const double t0 = now();
    model_->train(samples_.normalised());
    times.training = now() - t0;
  }
  return p;
}

void TuneJob::report(int task, TuneProgress& p, int64_t invalid_before, const PhaseTimes& times) {
  out_.times += times;
  const TaskState& state = *states_[static_cast<size_t>(task)];
  p.task = task;
  p.workload_name = state.result.workload_name;
  p.round = ++round_;
  p.trials = done_;
  p.measured = out_.trials;
  p.budget = options_.trials;
  p.time_budget_seconds = options_.time_budget_seconds;
  p.task_trials = state.result.resumed + state.result.trials;
  p.best_seconds = state.result.best_seconds;
  p.best_gflops = state.result.best_gflops;
  p.best_confirmed = state.result.best_confirmed;
  p.round_invalid = state.evaluator.invalid() - invalid_before;
  p.elapsed_seconds = now() - start_;
  p.round_times = times;
  p.total_times = out_.times;
  if (progress_)
    progress_(p);
}

TuneResult TuneJob::finish() {
  db_.finish_run(out_.run_id, out_.trials, ok_total_, unix_now());
  for (const auto& s : states_)
    out_.tasks.push_back(s->result);
  out_.wall_seconds = now() - start_;
  return std::move(out_);
}

}  // namespace tensortune::search::detail

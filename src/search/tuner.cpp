// SPDX-License-Identifier: Apache-2.0
// The tuning loop: schedule a task, propose a batch, measure it, store it, retrain, report.
#include "tensortune/search/tuner.h"

#include "task_state.h"
#include "tensortune/cost_model/random_model.h"
#include "tensortune/measure/timing.h"
#include "tensortune/support/error.h"
#include "tensortune/support/log.h"
#include "tensortune/te/operators.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace tensortune::search {

using detail::TaskState;
using detail::unix_now;

const char* tuner_name(TunerKind kind) {
  switch (kind) {
    case TunerKind::Xgb:
      return "xgb";
    case TunerKind::XgbEvo:
      return "xgb-evo";
    case TunerKind::Random:
      return "random";
    case TunerKind::Grid:
      return "grid";
  }
  return "?";
}

TunerKind parse_tuner(const std::string& text) {
  for (TunerKind k : {TunerKind::Xgb, TunerKind::XgbEvo, TunerKind::Random, TunerKind::Grid}) {
    if (text == tuner_name(k))
      return k;
  }
  throw UserError("unknown tuner '" + text + "' (expected xgb, xgb-evo, random or grid)");
}

TuneTask TuneTask::from_spec(const std::string& spec, double weight) {
  const te::WorkloadSpec s = te::parse_workload_spec(spec);
  return {te::make_workload(s), s.to_string(), s.name, weight};
}

PhaseTimes& PhaseTimes::operator+=(const PhaseTimes& o) {
  search += o.search;
  features += o.features;
  training += o.training;
  build += o.build;
  run += o.run;
  database += o.database;
  return *this;
}

namespace {

/// In-run transfer: the best configurations of how many other tasks, and how many of each, start
/// a task's search (TaskState::peer_starts).
constexpr size_t kPeerTasks = 6;
constexpr size_t kPeerConfigs = 2;

double now() {
  return measure::now_seconds();
}

void check_options(const std::vector<TuneTask>& tasks, const TuneOptions& o) {
  TT_USER_CHECK(!tasks.empty()) << "tune: no workloads to tune";
  check_distinct_workloads(tasks);
  TT_USER_CHECK(o.trials >= 0) << "tune: --trials must be >= 0 (got " << o.trials << ")";
  TT_USER_CHECK(o.batch_size >= 1) << "tune: --batch must be >= 1 (got " << o.batch_size << ")";
  TT_USER_CHECK(o.eps_greedy >= 0 && o.eps_greedy <= 1)
      << "tune: eps-greedy share must be in [0, 1] (got " << o.eps_greedy << ")";
  TT_USER_CHECK(o.first_batch_random_share >= 0 && o.first_batch_random_share <= 1)
      << "tune: the first batch's random share must be in [0, 1] (got "
      << o.first_batch_random_share << ")";
  TT_USER_CHECK(o.first_batch_share > 0 && o.first_batch_share <= 1)
      << "tune: the first guided batch's share must be in (0, 1] (got " << o.first_batch_share
      << ")";
  TT_USER_CHECK(o.early_stop >= 0) << "tune: --early-stop must be >= 0";
  TT_USER_CHECK(o.prior_weight >= 0 && std::isfinite(o.prior_weight))
      << "tune: the prior's weight must be finite and >= 0 (got " << o.prior_weight << ")";
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
  // Times taken with cold weights are not comparable with warm ones.
  j["cache_flush"] = m.run.timing.cache_flush;
  j["measure_rounds"] = m.rounds;
  support::Json workloads = support::Json::array();
  for (const TuneTask& t : tasks)
    workloads.push_back(t.workload.key());
  j["workloads"] = std::move(workloads);
  return j;
}

/// Adds the measurer's time between two readings of its totals: the parallel build phase, and
/// the rest (running, verifying) as run time.
void add_measure_times(PhaseTimes& t,
                       const measure::MeasureTotals& before,
                       const measure::MeasureTotals& after) {
  const double build = after.build_wall_seconds - before.build_wall_seconds;
  t.build += build;
  t.run += (after.wall_seconds - before.wall_seconds) - build;
}

/// The model's scores of `configs` for one task; -infinity for invalid configurations.
std::vector<float> model_scores(TaskState& state,
                                const cost_model::CostModel& model,
                                const std::vector<Config>& configs) {
  std::vector<std::vector<float>> rows;
  std::vector<size_t> where;
  const std::vector<const std::vector<float>*> features = state.evaluator.features(configs);
  for (size_t i = 0; i < configs.size(); ++i) {
    if (const std::vector<float>* f = features[i]) {
      rows.push_back(*f);
      where.push_back(i);
    }
  }
  std::vector<float> scores(configs.size(), -std::numeric_limits<float>::infinity());
  if (rows.empty())
    return scores;
  const std::vector<float> predicted = model.predict(rows);
  for (size_t k = 0; k < where.size(); ++k)
    scores[where[k]] = predicted[k];
  return scores;
}

/// The model is trained, but on other workloads' records only: `state` has no measurements of its
/// own yet (a warm start from the database or from the run's other tasks).
bool trained_elsewhere(const TaskState& state, const cost_model::CostModel* model) {
  return model != nullptr && model->trained() && state.top.empty();
}

/// The next batch of at most `n` distinct, valid, unmeasured configurations of `state`.
std::vector<Config> propose(TaskState& state,
                            const cost_model::CostModel* model,
                            const TuneOptions& options,
                            size_t n) {
  const MeasuredFn measured = [&](const std::string& key) {
    return state.is_measured(key);
  };
  std::vector<Config> picked;
  std::unordered_set<std::string> taken, taken_schedules;
  auto take = [&](const Config& c) {
    if (picked.size() >= n || measured(state.space.key(c)))
      return;
    if (!taken.insert(state.space.key(c)).second)
      return;
    // Another configuration with the same steps was (or is about to be) measured.
    const std::string text = state.schedule_text(c);
    if (state.measured_schedules.count(text) != 0 || !taken_schedules.insert(text).second)
      return;
    if (state.evaluator.features(c) == nullptr)
      return;  // invalid: dropped and counted
    picked.push_back(c);
  };
  if (options.tuner == TunerKind::Grid) {
    while (picked.size() < n && state.grid_offset < state.space.size()) {
      const std::vector<Config> chunk = state.space.enumerate(state.grid_offset, n);
      state.grid_offset += static_cast<double>(chunk.size());
      for (const Config& c : chunk)
        take(c);
      if (chunk.empty())
        break;
    }
    return picked;
  }
  // Before the task has measurements of its own, the model-guided tuners measure the best
  // configurations of other shapes of the same operator (nearest in this space) as they are: those
  // of the database, then those of this run's other tasks, up to half the batch.
  if (options.tuner != TunerKind::Random && model != nullptr && state.top.empty()) {
    for (const Config& c : state.transfer_starts)
      take(c);
    const size_t peer_room = picked.size() + n / 2;
    for (size_t i = 0; i < state.peer_starts.size() && picked.size() < peer_room; ++i)
      take(state.peer_starts[i]);
  }
  const bool guided = options.tuner != TunerKind::Random && model != nullptr && model->trained();
  if (guided) {
    // Rounded up, so a small batch still explores (5% of 16 would be none).
    const double share = trained_elsewhere(state, model)
                             ? std::max(options.eps_greedy, options.first_batch_random_share)
                             : options.eps_greedy;
    const auto n_random = static_cast<size_t>(std::ceil(share * static_cast<double>(n)));
    const double prior_weight = options.prior ? options.prior_weight : 0.0;
    const ScoreFn score = [&](const std::vector<Config>& c) {
      std::vector<float> s = model_scores(state, *model, c);
      weigh_by_prior(state.space, c, prior_weight, s);
      return s;
    };
    const size_t wanted = n - std::min(n, n_random);
    const std::vector<Config> starts = state.top_configs(
        options.tuner == TunerKind::Xgb ? static_cast<size_t>(options.annealing.chains / 2)
                                        : static_cast<size_t>(options.evolution.population / 4));
    AnnealingOptions annealing = options.annealing;
    EvolutionOptions evolution = options.evolution;
    annealing.plausible_starts = evolution.plausible_starts = options.prior;
    const std::vector<Config> best = options.tuner == TunerKind::Xgb
                                         ? simulated_annealing(state.space, score, measured, starts,
                                                               wanted, state.rng, annealing)
                                         : evolutionary_search(state.space, score, measured, starts,
                                                               wanted, state.rng, evolution);
    for (const Config& c : best)
      take(c);
  }
  // The random share, and the whole batch while the model knows nothing yet: drawn from the
  // prior by the model-guided tuners.
  const bool plausible = options.prior && options.tuner != TunerKind::Random;
  for (int attempt = 0; picked.size() < n && attempt < 4; ++attempt) {
    std::unordered_set<std::string> local = taken;
    for (const Config& c :
         random_unmeasured(state.space, measured, local, n - picked.size(), state.rng, plausible)) {
      take(c);
    }
  }
  return picked;
}

}  // namespace

TuneResult tune(const std::vector<TuneTask>& tasks,
                const target::Target& target,
                const database::TargetKey& target_key,
                database::Database& db,
                measure::Measurer& measurer,
                const TuneOptions& options,
                const ProgressFn& progress,
                const std::atomic<bool>* stop) {
  check_options(tasks, options);
  const double start = now();
  support::Rng seeds(options.seed);
  std::vector<std::unique_ptr<TaskState>> states;
  std::vector<double> weights, flops;
  std::vector<std::string> ops;
  for (const TuneTask& t : tasks) {
    states.push_back(std::make_unique<TaskState>(t, target, seeds.next()));
    db.put_workload({t.workload.key(), t.workload.name(), t.workload.canonical_text(),
                     t.workload.flop_count(), t.op, t.spec});
    weights.push_back(t.weight);
    flops.push_back(t.workload.flop_count());
    ops.push_back(t.op);
  }
  TuneResult out;
  PhaseTimes& total = out.times;
  detail::SampleSet samples;
  double t0 = now();
  const int64_t warm = detail::warm_start(states, db, target_key, target, options, samples);
  total.features += now() - t0;

  std::unique_ptr<cost_model::CostModel> model;
  if (options.tuner == TunerKind::Xgb || options.tuner == TunerKind::XgbEvo) {
    if (options.random_model) {
      model = std::make_unique<cost_model::RandomModel>(options.seed);
    } else {
      model = std::make_unique<cost_model::XGBoostModel>(options.xgb);
    }
    t0 = now();
    if (samples.size() > 0)
      model->train(samples.normalised());
    total.training += now() - t0;
  }
  TT_LOG(1) << "search: warm start from " << warm << " records (" << samples.size() << " samples)";

  int64_t stored = 0;
  for (const auto& s : states)
    stored += s->result.resumed;
  int64_t done = stored;
  TaskSchedulerOptions sched = options.scheduler;
  sched.seed = options.seed;
  TaskScheduler scheduler(weights, flops, ops, sched);
  std::vector<int> groups;
  for (const TuneTask& t : tasks)
    groups.push_back(t.group);
  scheduler.set_groups(groups);
  // A task resumed with a best from the database has had its warm-up round: the gradient rule
  // picks among the resumed tasks at once, instead of giving each one another round first.
  for (size_t i = 0; i < states.size(); ++i) {
    if (states[i]->result.best_seconds > 0)
      scheduler.report(static_cast<int>(i), states[i]->result.best_seconds);
  }
  database::TuningRun run;
  run.workload_key = tasks.front().workload.key();
  run.target = target_key;
  run.options = options_json(tasks, options, measurer.options()).dump();
  run.started = unix_now();
  out.run_id = db.start_run(run);

  // Tasks still owed their first batch (a resumed one with a best has had it). While the
  // trials left cannot give each a whole batch, each takes an even share of them, so a small
  // budget over many workloads reaches every one instead of the first few.
  std::vector<bool> owed(states.size());
  for (size_t i = 0; i < states.size(); ++i)
    owed[i] = states[i]->result.best_seconds <= 0;
  const auto never_measured = static_cast<int64_t>(std::count(owed.begin(), owed.end(), true));
  if (never_measured > 0 && options.trials - done < never_measured) {
    TT_LOG(0) << "tune: " << std::max<int64_t>(0, options.trials - done) << " trials left for "
              << never_measured << " workloads never measured: the last ones get none";
  }
  int64_t round = 0, ok_total = 0;
  while (done < options.trials) {
    if (stop != nullptr && stop->load()) {
      out.interrupted = true;
      out.stop_reason = "stopped on request";
      break;
    }
    const int ti = scheduler.next();
    if (ti < 0) {
      out.stop_reason = "every task is finished (space exhausted or early stop)";
      break;
    }
    TaskState& state = *states[static_cast<size_t>(ti)];
    PhaseTimes rt;
    const double ev0 = state.evaluator.seconds();
    const int64_t invalid0 = state.evaluator.invalid();
    t0 = now();
    int64_t size = options.batch_size;
    if (!options.random_model && trained_elsewhere(state, model.get())) {
      // Part of a batch, then retrain on this shape; never fewer than the transferred
      // configurations and the default schedule.
      const double part = options.first_batch_share * static_cast<double>(size);
      const auto starts = static_cast<int64_t>(state.transfer_starts.size()) + 1;
      size = std::max(static_cast<int64_t>(std::ceil(part)), std::min(size, starts));
    }
    if (owed[static_cast<size_t>(ti)]) {
      const auto owing = std::count(owed.begin(), owed.end(), true);
      size = std::min(size, std::max<int64_t>(1, (options.trials - done) / owing));
      owed[static_cast<size_t>(ti)] = false;
    }
    const auto n = static_cast<size_t>(std::min<int64_t>(size, options.trials - done));
    if (options.transfer && model)  // only the model-guided tuners start from them
      detail::collect_peer_starts(states, static_cast<size_t>(ti), kPeerConfigs, kPeerTasks);
    const std::vector<Config> batch = propose(state, model.get(), options, n);
    rt.features = state.evaluator.seconds() - ev0;
    rt.search = now() - t0 - rt.features;
    if (batch.empty()) {
      TT_LOG(1) << "search: the space of " << state.result.workload_name << " is exhausted";
      scheduler.finish(ti);
      continue;
    }
    // Lower the batch (and the reference, once per task) for the measurer. The default schedule
    // is measured once per task, as one of the trials.
    t0 = now();
    std::vector<ir::LoweredFunc> funcs;
    std::vector<std::optional<Config>> kept;
    std::optional<ir::LoweredFunc> def;
    if (!state.default_measured) {
      def = state.evaluator.lower_steps(state.default_steps);
      TT_USER_CHECK(def.has_value())
          << "tune: the default schedule of " << state.result.workload_name << " does not lower";
    }
    if (!state.reference) {
      const std::optional<ir::LoweredFunc> plain =
          state.default_steps.empty() && def ? def : state.evaluator.lower_steps({});
      TT_USER_CHECK(plain.has_value())
          << "tune: the default schedule of " << state.result.workload_name << " does not lower";
      state.reference = measurer.make_reference(
          *plain, measure::Tolerance::for_reduction(state.task->workload.max_reduction_length()));
    }
    const size_t room = state.default_measured ? n : n - 1;
    for (const Config& c : batch) {
      if (funcs.size() >= room)
        break;
      if (std::optional<ir::LoweredFunc> f = state.evaluator.lower_config(c)) {
        funcs.push_back(std::move(*f));
        kept.emplace_back(c);
      }
    }
    if (!state.default_measured) {  // last, so a slow default costs a single call
      funcs.push_back(*def);
      kept.emplace_back(std::nullopt);
      state.default_measured = true;
    }
    rt.features += now() - t0;
    const measure::MeasureTotals before = measurer.totals();
    const std::vector<measure::MeasureResult> results = measurer.measure(*state.reference, funcs);
    add_measure_times(rt, before, measurer.totals());

    t0 = now();
    std::vector<database::Record> records;
    for (size_t i = 0; i < kept.size(); ++i) {
      records.push_back(detail::make_record(state, kept[i] ? &*kept[i] : nullptr, results[i],
                                            target_key, options, out.run_id));
    }
    const std::vector<int64_t> ids = db.add_records(records);
    rt.database = now() - t0;

    TuneProgress p;
    const double best_before = state.result.best_seconds;
    for (size_t i = 0; i < kept.size(); ++i) {
      ++done;
      ++out.trials;
      ++state.result.trials;
      const bool ok = results[i].ok();
      p.round_ok += ok ? 1 : 0;
      p.round_errors += ok ? 0 : 1;
      const Config* config = kept[i] ? &*kept[i] : nullptr;
      state.note_measured(config, records[i].schedule, ok ? results[i].median_seconds : 0, ids[i],
                          out.trials);
      if (const std::vector<float>* f = config ? state.evaluator.features(*config) : nullptr) {
        samples.add({state.result.workload_key, *f,
                     ok ? state.flops / results[i].median_seconds * 1e-9 : 0.0});
      }
    }
    ok_total += p.round_ok;
    state.result.ok += p.round_ok;
    const bool improved = state.result.best_seconds > 0 &&
                          (best_before <= 0 || state.result.best_seconds < best_before);
    state.since_improvement =
        improved ? 0 : state.since_improvement + static_cast<int64_t>(kept.size());
    scheduler.report(ti, state.result.best_seconds);
    if (options.early_stop > 0 && state.since_improvement >= options.early_stop) {
      TT_LOG(1) << "search: " << state.result.workload_name << " stopped improving";
      scheduler.finish(ti);
    }
    if (model) {
      t0 = now();
      model->train(samples.normalised());
      rt.training = now() - t0;
    }
    total += rt;
    p.task = ti;
    p.workload_name = state.result.workload_name;
    p.round = ++round;
    p.trials = done;
    p.measured = out.trials;
    p.budget = options.trials;
    p.task_trials = state.result.resumed + state.result.trials;
    p.best_seconds = state.result.best_seconds;
    p.best_gflops = state.result.best_gflops;
    p.round_invalid = state.evaluator.invalid() - invalid0;
    p.elapsed_seconds = now() - start;
    p.round_times = rt;
    p.total_times = total;
    if (progress)
      progress(p);
    if (measurer.stopped()) {
      out.stop_reason = measurer.stop_reason();
      break;
    }
  }
  if (!out.interrupted && stop != nullptr && stop->load()) {
    // Asked to stop during the last batch: the trials are done, but a stop skips the
    // confirmation as it would anywhere else.
    out.interrupted = true;
    out.stop_reason = "stopped on request";
  }
  if (!out.interrupted) {
    const measure::MeasureTotals before = measurer.totals();
    for (const auto& s : states) {
      if (!detail::confirm_best(*s, db, target_key, measurer, options.confirm_top,
                                options.confirm_rounds, out.run_id, stop)) {
        out.interrupted = true;  // stopped during the confirmation: none stored from then on
        out.stop_reason = "stopped on request";
        break;
      }
    }
    add_measure_times(total, before, measurer.totals());
  }
  db.finish_run(out.run_id, out.trials, ok_total, unix_now());
  for (const auto& s : states)
    out.tasks.push_back(s->result);
  out.wall_seconds = now() - start;
  return out;
}

void check_distinct_workloads(const std::vector<TuneTask>& tasks) {
  std::set<std::string> seen;
  for (const TuneTask& t : tasks) {
    TT_USER_CHECK(seen.insert(t.workload.key()).second)
        << "tune: workload '" << t.workload.name()
        << "' is given twice; give it once, with --weight for its share";
  }
}

}  // namespace tensortune::search

// SPDX-License-Identifier: Apache-2.0
// Per-task tuning state, the model's sample set, warm start from the database (resume and
// transfer) and the conversion of measurements to records.
#include "task_state.h"

#include "tensortune/cost_model/features.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "tensortune/support/log.h"
#include "tensortune/te/operators.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

namespace tensortune::search::detail {

namespace {

constexpr size_t kTopKept = 16;
/// Another sketch's best starts the search too while it is within this factor of the best.
constexpr double kSketchStartSlack = 1.5;

double gflops_of(double flops, double seconds) {
  return seconds > 0 ? flops / seconds * 1e-9 : 0.0;
}

/// The configuration a record's knobs describe in `space`, when they still fit it.
std::optional<Config> config_of(const SearchSpace& space, const database::Record& r) {
  try {
    const support::Json knobs = support::Json::parse(r.knobs);
    if (!knobs.is_object() || !knobs.contains("sketch"))
      return std::nullopt;
    return space.from_json(knobs);
  } catch (const UserError&) {
    return std::nullopt;
  }
}

/// The configuration of `space` nearest to a record of another shape (SearchSpace::nearest).
std::optional<Config> nearest_config_of(const SearchSpace& space, const database::Record& r) {
  try {
    return space.nearest(support::Json::parse(r.knobs));
  } catch (const UserError&) {
    return std::nullopt;
  }
}

/// A record's steps as canonical JSON text; nullopt when they no longer parse.
std::optional<std::string> canonical_schedule(const database::Record& r) {
  try {
    const schedule::Schedule stored = schedule::parse_schedule(r.schedule);
    return schedule::to_json(schedule::Schedule{r.workload_key, stored.steps}).dump();
  } catch (const UserError&) {
    return std::nullopt;
  }
}

/// Features of a record's steps on `workload`; nullopt when they no longer apply.
std::optional<std::vector<float>> features_of_record(const te::Workload& workload,
                                                     const database::Record& r,
                                                     const target::Target& target) {
  try {
    return feature_vector(workload, schedule::parse_schedule(r.schedule).steps, target);
  } catch (const UserError& e) {  // steps that no longer parse
    TT_LOG(2) << "search: record " << r.id << " no longer applies: " << e.what();
    return std::nullopt;
  }
}

/// The newest `limit` records, keeping every Ok one first when there are too many.
std::vector<const database::Record*> pick_records(const std::vector<database::Record>& records,
                                                  int64_t limit) {
  std::vector<const database::Record*> out;
  for (const database::Record& r : records)
    out.push_back(&r);
  std::stable_sort(out.begin(), out.end(),
                   [](const database::Record* a, const database::Record* b) {
                     return a->ok() != b->ok() ? a->ok() : a->id > b->id;
                   });
  if (static_cast<int64_t>(out.size()) > limit)
    out.resize(static_cast<size_t>(std::max<int64_t>(0, limit)));
  return out;
}

int64_t resume_task(TaskState& state,
                    const database::Database& db,
                    const database::TargetKey& target_key,
                    const target::Target& target,
                    int64_t limit,
                    SampleSet& samples) {
  const std::string& key = state.task->workload.key();
  const std::vector<database::Record> records = db.history(key, target_key);
  state.result.resumed = static_cast<int64_t>(records.size());
  const std::string default_text =
      schedule::to_json(schedule::Schedule{key, state.default_steps}).dump();
  std::vector<std::optional<Config>> configs;
  for (const database::Record& r : records) {
    const std::optional<std::string> text = canonical_schedule(r);
    std::optional<Config> config = config_of(state.space, r);
    // The knobs count only while they still give the record's steps. A space whose rules changed
    // since (a knob value that read B in place now packs it in padded panels) maps them to other
    // steps: the record then counts as measured by its steps alone, so the configuration is
    // measured as it is now, and the model learns from the steps that were timed.
    if (config && text != state.schedule_text(*config))
      config.reset();
    configs.push_back(config);
    if (!config && text == default_text)
      state.default_measured = true;
    state.note_measured(config ? &*config : nullptr, r.schedule,
                        r.may_be_best() ? r.rank_seconds : 0, r.id, 0);
  }
  // The best is the database's (ranked by confirmations), reported with its own measurement.
  if (state.result.best_record_id != 0)
    state.take_best_from(db, target_key);
  int64_t lowered = 0;
  for (const database::Record* r : pick_records(records, limit)) {
    std::optional<std::vector<float>> f;
    if (const std::optional<Config>& config = configs[static_cast<size_t>(r - records.data())]) {
      if (const std::vector<float>* cached = state.evaluator.features(*config))
        f = *cached;
    } else {
      f = features_of_record(state.task->workload, *r, target);
    }
    if (!f)
      continue;
    ++lowered;
    samples.add({key, std::move(*f), r->ok() ? gflops_of(state.flops, r->median_seconds) : 0.0});
  }
  return lowered;
}

int64_t transfer_from(const database::WorkloadInfo& info,
                      std::vector<std::unique_ptr<TaskState>>& states,
                      const database::Database& db,
                      const database::TargetKey& target_key,
                      const target::Target& target,
                      int64_t limit,
                      SampleSet& samples) {
  std::optional<te::Workload> workload;
  try {
    workload = te::make_workload(info.spec);
  } catch (const UserError&) {
    return 0;
  }
  if (workload->key() != info.key)
    return 0;  // the operator library changed since
  const std::vector<database::Record> records = db.history(info.key, target_key);
  int64_t lowered = 0;
  for (const database::Record* r : pick_records(records, limit)) {
    std::optional<std::vector<float>> f = features_of_record(*workload, *r, target);
    if (!f)
      continue;
    ++lowered;
    samples.add({info.key, std::move(*f),
                 r->ok() ? gflops_of(workload->flop_count(), r->median_seconds) : 0.0});
  }
  // The best configurations of the same operator start the search of each task, when their knobs
  // fit its space.
  for (const std::unique_ptr<TaskState>& s : states) {
    if (s->task->op != info.op || s->task->op.empty())
      continue;
    for (const database::Record& r : db.best(info.key, target_key, 4)) {
      if (std::optional<Config> c = nearest_config_of(s->space, r))
        s->transfer_starts.push_back(*c);
    }
  }
  return lowered;
}

}  // namespace

void SampleSet::add(RawSample sample) {
  samples_.push_back(std::move(sample));
}

std::vector<cost_model::Sample> SampleSet::normalised() const {
  std::map<std::string, double> best;
  for (const RawSample& s : samples_)
    best[s.group] = std::max(best[s.group], s.gflops);
  std::vector<cost_model::Sample> out;
  out.reserve(samples_.size());
  for (const RawSample& s : samples_) {
    const double b = best[s.group];
    out.push_back({s.group, s.features, b > 0 ? static_cast<float>(s.gflops / b) : 0.0f});
  }
  return out;
}

TaskState::TaskState(const TuneTask& t, const target::Target& target, uint64_t seed)
    : task(&t),
      flops(t.workload.flop_count()),
      space(SearchSpace::generate(t.workload, target)),
      evaluator(t.workload, space, target),
      rng(seed),
      default_steps(target.is_gpu() ? schedule::default_gpu_steps(t.workload)
                                    : std::vector<schedule::Step>{}) {
  result.workload_key = t.workload.key();
  result.workload_name = t.workload.name();
}

void TaskState::note_measured(const Config* config,
                              const std::string& schedule_json,
                              double seconds,
                              int64_t record_id,
                              int64_t trial_index) {
  measured_schedules.insert(schedule_json);
  if (config)
    measured.insert(space.key(*config));
  if (seconds <= 0)
    return;
  const bool better = best_rank_seconds <= 0 || seconds < best_rank_seconds;
  if (better) {
    best_rank_seconds = seconds;
    result.best_seconds = seconds;
    result.best_confirmed = false;
    result.best_spread = 0;
    result.best_gflops = gflops_of(flops, seconds);
    result.best_record_id = record_id;
    result.curve.emplace_back(trial_index, result.best_gflops);
  }
  if (!config)
    return;
  auto [it, fresh] = sketch_best.emplace(config->sketch, std::make_pair(seconds, *config));
  if (!fresh && seconds < it->second.first) {
    it->second = {seconds, *config};
  }
  top.emplace_back(seconds, *config);
  std::stable_sort(top.begin(), top.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (top.size() > kTopKept)
    top.resize(kTopKept);
}

void TaskState::take_best_from(const database::Database& db,
                               const database::TargetKey& target_key) {
  const std::vector<database::Record> best = db.best(task->workload.key(), target_key, 1);
  result.best_record_id = best.empty() ? 0 : best[0].id;
  result.best_seconds = best.empty() ? 0 : best[0].seconds();
  result.best_gflops = best.empty() ? 0 : gflops_of(flops, best[0].seconds());
  result.best_confirmed = !best.empty() && best[0].confirmed();
  result.best_spread = best.empty() ? 0 : best[0].confirm_spread;
  best_rank_seconds = best.empty() ? 0 : best[0].rank_seconds;
}

std::string TaskState::schedule_text(const Config& config) const {
  return schedule::to_json(schedule::Schedule{task->workload.key(), space.steps(config)}).dump();
}

std::vector<Config> TaskState::top_configs(size_t n) const {
  std::vector<std::pair<double, Config>> others;  // other sketches' bests close to the best
  if (!top.empty()) {
    for (const auto& [sketch, entry] : sketch_best) {
      if (sketch != top[0].second.sketch && entry.first <= kSketchStartSlack * top[0].first)
        others.push_back(entry);
    }
    std::stable_sort(others.begin(), others.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    others.resize(std::min(others.size(), n / 2));
  }
  std::vector<Config> out;
  const auto add = [&](const Config& c) {
    if (out.size() < n && std::find(out.begin(), out.end(), c) == out.end())
      out.push_back(c);
  };
  size_t next = 0;
  for (; next < top.size() && out.size() + others.size() < n; ++next)
    add(top[next].second);
  for (const auto& entry : others)
    add(entry.second);
  for (; next < top.size(); ++next)
    add(top[next].second);  // room left by other sketches' bests that were listed already
  for (const std::vector<Config>* list : {&transfer_starts, &peer_starts}) {
    for (size_t i = 0; i < list->size() && out.size() < n; ++i)
      out.push_back((*list)[i]);
  }
  return out;
}

void collect_peer_starts(std::vector<std::unique_ptr<TaskState>>& states,
                         size_t self,
                         size_t per_peer,
                         size_t max_peers) {
  TaskState& me = *states[self];
  std::vector<std::pair<double, size_t>> order;  // (distance, task)
  for (size_t j = 0; j < states.size(); ++j) {
    const TaskState& other = *states[j];
    if (j == self || other.top.empty())
      continue;
    const bool same_op = !me.task->op.empty() && other.task->op == me.task->op;
    const double flops_distance =
        std::abs(std::log2(std::max(other.flops, 1.0)) - std::log2(std::max(me.flops, 1.0)));
    order.emplace_back((same_op ? 0.0 : 1e6) + flops_distance, j);
  }
  std::stable_sort(order.begin(), order.end());
  me.peer_starts.clear();
  std::unordered_set<std::string> keys;
  size_t peers = 0;
  for (const auto& [distance, j] : order) {
    if (peers >= max_peers)
      break;
    const TaskState& other = *states[j];
    bool mapped = false;
    for (size_t k = 0; k < std::min(per_peer, other.top.size()); ++k) {
      const std::optional<Config> c = me.space.nearest(other.space.to_json(other.top[k].second));
      if (c && keys.insert(me.space.key(*c)).second) {
        me.peer_starts.push_back(*c);
        mapped = true;
      }
    }
    peers += mapped ? 1 : 0;
  }
}

int64_t warm_start(std::vector<std::unique_ptr<TaskState>>& states,
                   const database::Database& db,
                   const database::TargetKey& target_key,
                   const target::Target& target,
                   const TuneOptions& options,
                   SampleSet& samples) {
  int64_t lowered = 0;
  std::unordered_set<std::string> own;
  for (const auto& s : states) {
    own.insert(s->task->workload.key());
    lowered += resume_task(*s, db, target_key, target,
                           options.warm_start ? options.max_warm_start_records : 0, samples);
    // This very workload's records from elsewhere start its search before other shapes' do.
    for (const database::Record& r : s->task->starts) {
      if (std::optional<Config> c = nearest_config_of(s->space, r))
        s->transfer_starts.push_back(*c);
    }
  }
  if (!options.warm_start || !options.transfer)
    return lowered;
  for (const database::WorkloadInfo& info : db.workloads()) {
    if (own.count(info.key) != 0 || info.spec.empty())
      continue;
    const int64_t left = options.max_warm_start_records - lowered;
    if (left <= 0)
      break;
    lowered +=
        transfer_from(info, states, db, target_key, target, std::min<int64_t>(left, 500), samples);
  }
  return lowered;
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void ensure_reference(TaskState& state, measure::Measurer& measurer) {
  if (state.reference)
    return;
  const std::optional<ir::LoweredFunc> plain = state.evaluator.lower_steps({});
  TT_USER_CHECK(plain.has_value())
      << "tune: the default schedule of " << state.result.workload_name << " does not lower";
  state.reference = measurer.make_reference(
      *plain, measure::Tolerance::for_reduction(state.task->workload.max_reduction_length()));
}

database::Record make_record(const TaskState& state,
                             const Config* config,
                             const measure::MeasureResult& result,
                             const database::TargetKey& target_key,
                             const TuneOptions& options,
                             int64_t run_id) {
  database::Record r;
  r.workload_key = state.task->workload.key();
  r.target = target_key;
  r.schedule =
      config ? state.schedule_text(*config)
             : schedule::to_json(schedule::Schedule{r.workload_key, state.default_steps}).dump();
  r.knobs = config ? state.space.to_json(*config).dump() : "{}";
  r.status = measure::status_name(result.status);
  r.error = result.message;
  r.repeats = result.repeats;
  r.median_seconds = result.ok() ? result.median_seconds : 0.0;
  r.build_seconds = result.build_seconds;
  r.run_seconds = result.run_seconds;
  r.wall_seconds = result.wall_seconds;
  r.seed = static_cast<int64_t>(options.seed);
  r.tool_version = options.tool_version;
  r.git_revision = options.git_revision;
  r.timestamp = unix_now();
  r.run_id = run_id;
  return r;
}

}  // namespace tensortune::search::detail

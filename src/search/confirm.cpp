// SPDX-License-Identifier: Apache-2.0
// The end of a tuning job: the task's best records measured again side by side (see
// TuneOptions::confirm_top and Database::confirm).
#include "search/confirm.h"

#include "search/task_state.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "tensortune/support/log.h"
#include "tensortune/support/stats.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace tensortune::search::detail {

void choose_best_after_confirmation(TaskState& state,
                                    database::Database& db,
                                    const database::TargetKey& target_key,
                                    const std::vector<int64_t>& failed) {
  const auto is_failed = [&](int64_t id) {
    return std::find(failed.begin(), failed.end(), id) != failed.end();
  };
  const std::vector<database::Record> ranked =
      db.best(state.result.workload_key, target_key, static_cast<int64_t>(failed.size()) + 1);
  const auto first = std::find_if(ranked.begin(), ranked.end(), [&](const database::Record& r) {
    return r.ok() && r.median_seconds > 0 && !is_failed(r.id);
  });
  state.result.unconfirmed_best_id = state.result.best_record_id;
  if (first == ranked.end()) {
    TT_LOG(0) << "confirm: no best record of " << state.result.workload_name
              << " survived its confirmation";
    state.result.best_record_id = 0;
    state.result.best_seconds = 0;
    state.result.best_gflops = 0;
  } else {
    state.result.best_record_id = first->id;
    // Its own stored measurement, not the rank time (a figure on the stored scale).
    state.result.best_seconds = first->median_seconds;
    state.result.best_gflops = state.flops / first->median_seconds * 1e-9;
  }
}

bool confirm_best(TaskState& state,
                  database::Database& db,
                  const database::TargetKey& target_key,
                  measure::Measurer& measurer,
                  int top,
                  int rounds,
                  int64_t run_id,
                  const std::atomic<bool>* stop) {
  auto stopping = [&] {
    return stop != nullptr && stop->load();
  };
  if (top < 2 || rounds < 1 || state.result.trials == 0 || !state.reference || measurer.stopped())
    return true;
  std::vector<database::Record> best = db.best(state.result.workload_key, target_key, top);
  // This run's best, unless the database's best already holds them.
  std::vector<database::Record> run;
  for (database::Record& r : db.history(state.result.workload_key, target_key)) {
    if (r.run_id == run_id && r.ok())
      run.push_back(std::move(r));
  }
  std::stable_sort(run.begin(), run.end(), [](const auto& a, const auto& b) {
    return a.median_seconds < b.median_seconds;
  });
  run.resize(std::min(run.size(), std::max<size_t>(1, static_cast<size_t>(top) / 2)));
  for (database::Record& r : run) {
    if (std::none_of(best.begin(), best.end(),
                     [&](const database::Record& b) { return b.id == r.id; }))
      best.push_back(std::move(r));
  }
  std::vector<int64_t> ids;
  std::vector<ir::LoweredFunc> funcs;
  for (const database::Record& r : best) {
    std::optional<ir::LoweredFunc> f;
    try {
      f = state.evaluator.lower_steps(schedule::parse_schedule(r.schedule).steps);
    } catch (const UserError& e) {  // a record of an older schedule format
      TT_LOG(1) << "confirm: record " << r.id << " does not parse: " << e.what();
    }
    if (f) {
      ids.push_back(r.id);
      funcs.push_back(std::move(*f));
    }
  }
  if (funcs.size() < 2)
    return true;
  // Round-robin: every round measures each record once, so drift of the machine during the
  // confirmation hits them alike.
  std::vector<std::vector<double>> times(funcs.size());
  for (int round = 0; round < rounds && !measurer.stopped(); ++round) {
    if (stopping())
      return false;
    const std::vector<measure::MeasureResult> results =
        measurer.measure(*state.reference, funcs, measure::Measurer::Protocol::Full);
    for (size_t i = 0; i < funcs.size(); ++i) {
      if (results[i].ok()) {
        times[i].push_back(results[i].median_seconds);
      } else {
        TT_LOG(0) << "confirm: record " << ids[i] << " of " << state.result.workload_name
                  << " failed when measured again: " << results[i].message;
      }
    }
  }
  if (stopping())  // the last round ran while the stop came: its times are suspect too
    return false;
  std::vector<int64_t> kept, failed;
  std::vector<double> seconds;
  for (size_t i = 0; i < funcs.size(); ++i) {
    if (!times[i].empty()) {
      kept.push_back(ids[i]);
      seconds.push_back(support::median(times[i]));
    } else if (!measurer.stopped()) {  // a stopped measurer says nothing of the record
      failed.push_back(ids[i]);
    }
  }
  if (kept.size() >= 2) {
    db.confirm(kept, seconds, unix_now());
    state.result.confirmed = static_cast<int64_t>(kept.size());
  }
  if (kept.size() >= 2 || !failed.empty())
    choose_best_after_confirmation(state, db, target_key, failed);
  return true;
}

}  // namespace tensortune::search::detail

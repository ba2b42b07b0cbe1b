// SPDX-License-Identifier: Apache-2.0
// The end of a tuning job: the task's best records measured again side by side (see
// TuneOptions::confirm_top and Database::confirm). A record that no longer replays, or fails
// every time it is measured again, gets a failed confirmation and stops being best.
#include "search/task_state.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "tensortune/support/log.h"
#include "tensortune/support/stats.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace tensortune::search::detail {
namespace {

/// The task's `top` best records, plus this run's best when the database's best lack them.
std::vector<database::Record> candidates(const TaskState& state,
                                         const database::Database& db,
                                         const database::TargetKey& target_key,
                                         int top,
                                         int64_t run_id) {
  std::vector<database::Record> best = db.best(state.result.workload_key, target_key, top);
  std::vector<database::Record> run;
  for (database::Record& r : db.history(state.result.workload_key, target_key)) {
    if (r.run_id == run_id && r.may_be_best())
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
  return best;
}

bool confirm_once(TaskState& state,
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
  if (top < 2 || rounds < 1 || state.result.trials == 0 || measurer.stopped())
    return true;
  ensure_reference(state, measurer);  // a job that measured on the queue has none yet
  std::vector<int64_t> ids;
  std::vector<ir::LoweredFunc> funcs;
  std::vector<int64_t> refuted;
  for (const database::Record& r : candidates(state, db, target_key, top, run_id)) {
    // A record imported from elsewhere, or of an older schedule format, may not replay here: it
    // cannot be measured, so it must not stay the best either.
    std::optional<ir::LoweredFunc> f;
    std::string why = "its schedule does not lower";
    try {
      const std::vector<schedule::Step> steps = schedule::parse_schedule(r.schedule).steps;
      schedule::apply_steps(state.task->workload, steps);  // names the step that fails
      f = state.evaluator.lower_steps(steps);
    } catch (const UserError& e) {
      why = e.what();
    }
    if (!f) {
      TT_LOG(0) << "confirm: record " << r.id << " of " << state.result.workload_name
                << " does not replay onto its workload (" << why << "); it is no longer best";
      db.fail_confirmation(r.id, "does not replay onto the workload: " + why, unix_now());
      refuted.push_back(r.id);
      continue;
    }
    ids.push_back(r.id);
    funcs.push_back(std::move(*f));
  }
  // Round-robin: every round measures each record once, so drift of the machine during the
  // confirmation hits them alike. Each round runs in a fresh worker process, as a later re-time
  // in a new process would.
  std::vector<std::vector<double>> times(funcs.size());
  std::vector<std::string> errors(funcs.size());
  int measured_rounds = 0;
  for (int round = 0; round < rounds && !measurer.stopped() && funcs.size() >= 2; ++round) {
    if (stopping())
      return false;
    measurer.runner().restart_worker();
    const std::vector<measure::MeasureResult> results =
        measurer.measure(*state.reference, funcs, measure::Measurer::Protocol::Full);
    ++measured_rounds;
    for (size_t i = 0; i < funcs.size(); ++i) {
      if (results[i].ok()) {
        times[i].push_back(results[i].median_seconds);
      } else {
        errors[i] = results[i].message;
        TT_LOG(0) << "confirm: record " << ids[i] << " of " << state.result.workload_name
                  << " failed when measured again: " << results[i].message;
      }
    }
  }
  if (stopping())  // the last round ran while the stop came: its times are suspect too
    return false;
  std::vector<int64_t> kept;
  std::vector<double> seconds, spreads;
  for (size_t i = 0; i < funcs.size(); ++i) {
    if (!times[i].empty()) {
      kept.push_back(ids[i]);
      // The median of the rounds: a slow moment during a minority of them does not move it.
      seconds.push_back(support::median(times[i]));
      // Its uncertainty likewise: the spread of the middle rounds. One round of 5 at twice the
      // time (another process's burst) leaves the median where it was; max - min would call
      // the figure 100% uncertain.
      spreads.push_back(support::middle_spread(times[i]));
    } else if (measured_rounds > 0 && !measurer.stopped()) {
      // Failed every round (a build that timed out, a kernel that crashes): its stored time is
      // not reproducible. A stopped measurer says nothing of the record.
      db.fail_confirmation(ids[i], "failed when measured again: " + errors[i], unix_now());
      refuted.push_back(ids[i]);
    }
  }
  state.result.refuted += static_cast<int64_t>(refuted.size());
  const int64_t before = state.result.best_record_id;
  if (!refuted.empty())
    state.take_best_from(db, target_key);  // the best that is left, by single measurements
  if (kept.size() >= 2) {
    // The best by single measurements, unless the confirmation refuted it.
    state.result.unconfirmed_best_id =
        std::count(refuted.begin(), refuted.end(), before) ? state.result.best_record_id : before;
    db.confirm(kept, seconds, spreads, measured_rounds, unix_now());
    state.result.confirmed = static_cast<int64_t>(kept.size());
    state.take_best_from(db, target_key);  // with its confirmed time
    // How far behind the best the runner-up of the side-by-side figures is.
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    state.result.runner_up_gap = sorted[1] / sorted[0] - 1;
  }
  return true;
}

}  // namespace

bool confirm_best(TaskState& state,
                  database::Database& db,
                  const database::TargetKey& target_key,
                  measure::Measurer& measurer,
                  int top,
                  int rounds,
                  int64_t run_id,
                  const std::atomic<bool>* stop) {
  if (!confirm_once(state, db, target_key, measurer, top, rounds, run_id, stop))
    return false;
  if (state.result.confirmed == 0 || state.result.best_confirmed)
    return true;
  // The confirmed records' rank times (their side-by-side order on the stored medians' scale)
  // fell behind an unconfirmed record's single measurement: it joins the next confirmation, so
  // that the best that every surface names has a confirmed time.
  const int64_t unconfirmed_best = state.result.unconfirmed_best_id;
  const int64_t confirmed = state.result.confirmed;
  if (!confirm_once(state, db, target_key, measurer, top, rounds, run_id, stop))
    return false;
  state.result.unconfirmed_best_id = unconfirmed_best;
  state.result.confirmed = std::max(confirmed, state.result.confirmed);
  return true;
}

}  // namespace tensortune::search::detail

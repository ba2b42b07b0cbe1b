// SPDX-License-Identifier: Apache-2.0
// The end of a tuning job (TuneJob::confirm_bests): the task's best records measured again side by
// side (see TuneOptions::confirm_top and Database::confirm). A record that no longer replays, or
// fails every time it is measured again, gets a failed confirmation and stops being best.
#include "search/task_state.h"
#include "search/tune_job.h"
#include "tensortune/measure/machine_load.h"
#include "tensortune/measure/timing.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "tensortune/support/log.h"
#include "tensortune/support/stats.h"

#include <algorithm>
#include <cmath>
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
                  const std::atomic<bool>* stop,
                  MachineSpeed* speed) {
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
  // in a new process would. With a speed read, a round the machine ran slow for is measured
  // again (up to `rounds` more), so the figures are what the kernels do on a quiet machine.
  const bool judged = speed != nullptr && speed->read;
  std::vector<double> round_speed;               // the machine's speed before each round
  std::vector<double> round_reference;           // the recent fastest reading it is judged by
  std::vector<std::vector<double>> round_times;  // [round][record], NaN = failed
  std::vector<std::string> errors(funcs.size());
  auto fast = [&](size_t round) {
    return !judged || round_speed[round] >= (1 - speed->slow_share) * round_reference[round];
  };
  auto fast_rounds = [&] {
    int n = 0;
    for (size_t k = 0; k < round_speed.size(); ++k)
      n += fast(k) ? 1 : 0;
    return n;
  };
  const int limit = judged ? 2 * rounds : rounds;
  auto may_remeasure = [&] {
    return speed == nullptr || speed->remeasure_until <= 0 ||
           measure::now_seconds() < speed->remeasure_until;
  };
  while (static_cast<int>(round_times.size()) < limit && !measurer.stopped() && funcs.size() >= 2 &&
         (static_cast<int>(round_times.size()) < rounds ||
          (fast_rounds() < rounds && may_remeasure()))) {
    if (stopping())
      return false;
    double reference = 0;
    round_speed.push_back(judged ? speed->sample_round(reference) : 0.0);
    round_reference.push_back(reference);
    measurer.runner().restart_worker();
    const std::vector<measure::MeasureResult> results =
        measurer.measure(*state.reference, funcs, measure::Measurer::Protocol::Full);
    std::vector<double>& t = round_times.emplace_back(funcs.size(), std::nan(""));
    for (size_t i = 0; i < funcs.size(); ++i) {
      if (results[i].ok()) {
        t[i] = results[i].median_seconds;
      } else {
        errors[i] = results[i].message;
        TT_LOG(0) << "confirm: record " << ids[i] << " of " << state.result.workload_name
                  << " failed when measured again: " << results[i].message;
      }
    }
  }
  if (stopping())  // the last round ran while the stop came: its times are suspect too
    return false;
  const int measured_rounds = static_cast<int>(round_times.size());
  // The fast rounds when at least half the planned ones are; else every round, with the
  // slowdown counted in each figure's uncertainty.
  const int kept_rounds = fast_rounds();
  const bool only_fast = judged && kept_rounds >= (rounds + 1) / 2;
  double slowdown = 0;
  if (judged && measured_rounds > 0) {
    std::vector<double> kept_speeds;
    for (int k = 0; k < measured_rounds; ++k) {
      if (!only_fast || fast(static_cast<size_t>(k)))
        kept_speeds.push_back(
            speed->fastest > 0 ? round_speed[static_cast<size_t>(k)] / speed->fastest : 1.0);
    }
    const double relative = support::median(kept_speeds);
    speed->kept_speed = speed->kept_speed > 0 ? std::min(speed->kept_speed, relative) : relative;
    speed->slow_rounds += only_fast ? measured_rounds - kept_rounds : 0;
    // Against the job's start, a clock that settled after the busy spell (6-8% on a Zen 5) is
    // how the machine runs now, as the job's own trials did; a slowdown well past that (another
    // process through the whole confirmation) makes the figures noisy.
    if (!only_fast || relative < 1 - MachineSpeed::kSettledShares * speed->slow_share) {
      slowdown = 1 - relative;
      speed->stayed_slow = true;
    }
    if (!only_fast || kept_rounds < measured_rounds) {
      TT_LOG(0) << "confirm: " << state.result.workload_name << ": "
                << measured_rounds - kept_rounds << " of " << measured_rounds
                << " rounds ran with the machine more than " << 100 * speed->slow_share
                << "% slower than its recent fastest reading"
                << (!only_fast                 ? "; kept, the figures may read slow"
                    : measured_rounds > rounds ? "; measured again"
                                               : "; set aside (no time to measure again)");
    }
  }
  std::vector<int64_t> kept;
  std::vector<double> seconds, spreads;
  for (size_t i = 0; i < funcs.size(); ++i) {
    std::vector<double> times, all;
    for (int k = 0; k < measured_rounds; ++k) {
      const double t = round_times[static_cast<size_t>(k)][i];
      if (std::isnan(t))
        continue;
      all.push_back(t);
      if (!only_fast || fast(static_cast<size_t>(k)))
        times.push_back(t);
    }
    if (times.empty())
      times = all;  // it failed in every fast round: its slow rounds' figures are all there is
    if (!times.empty()) {
      kept.push_back(ids[i]);
      // The median of the rounds: a slow moment during a minority of them does not move it.
      seconds.push_back(support::median(times));
      // Its uncertainty likewise: the spread of the middle rounds. One round of 5 at twice the
      // time (another process's burst) leaves the median where it was; max - min would call
      // the figure 100% uncertain. A machine that stayed slow makes it at least that slowdown.
      spreads.push_back(std::max(support::middle_spread(times), slowdown));
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
    db.confirm(kept, seconds, spreads, only_fast ? kept_rounds : measured_rounds, unix_now());
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

double MachineSpeed::sample() {
  if (!read)
    return 0;
  const double now = read();
  fastest = std::max(fastest, now);
  return now;
}

double MachineSpeed::sample_round(double& reference) {
  const double now = sample();
  reference = now;
  for (const double r : recent)
    reference = std::max(reference, r);
  recent.push_back(now);
  if (recent.size() > kRecent)
    recent.erase(recent.begin());
  return now;
}

bool confirm_best(TaskState& state,
                  database::Database& db,
                  const database::TargetKey& target_key,
                  measure::Measurer& measurer,
                  int top,
                  int rounds,
                  int64_t run_id,
                  const std::atomic<bool>* stop,
                  MachineSpeed* speed) {
  if (!confirm_once(state, db, target_key, measurer, top, rounds, run_id, stop, speed))
    return false;
  if (state.result.confirmed == 0 || state.result.best_confirmed)
    return true;
  // The confirmed records' rank times (their side-by-side order on the stored medians' scale)
  // fell behind an unconfirmed record's single measurement: it joins the next confirmation, so
  // that the best that every surface names has a confirmed time.
  const int64_t unconfirmed_best = state.result.unconfirmed_best_id;
  const int64_t confirmed = state.result.confirmed;
  if (!confirm_once(state, db, target_key, measurer, top, rounds, run_id, stop, speed))
    return false;
  state.result.unconfirmed_best_id = unconfirmed_best;
  state.result.confirmed = std::max(confirmed, state.result.confirmed);
  return true;
}

double TuneJob::confirm_round_seconds() const {
  const measure::MeasureTotals& totals = measurer_.totals();
  if (options_.confirm_top < 2 || totals.trials == 0)
    return 0;
  // confirm_best measures a task's top records and up to half as many of this run's bests, each
  // built and timed again as a trial is; a fresh worker per round adds little.
  const auto tasks = std::count_if(states_.begin(), states_.end(),
                                   [](const auto& s) { return s->result.trials > 0; });
  const int per_task = options_.confirm_top + std::max(1, options_.confirm_top / 2);
  return totals.wall_seconds / static_cast<double>(totals.trials) * static_cast<double>(per_task) *
         static_cast<double>(tasks);
}

void TuneJob::confirm_bests() {
  if (!out_.interrupted && stop_requested()) {
    // Asked to stop during the last batch: the trials are done, but a stop skips the
    // confirmation as it would anywhere else.
    out_.interrupted = true;
    out_.stop_reason = "stopped on request";
  }
  if (out_.interrupted)
    return;
  const bool any = std::any_of(states_.begin(), states_.end(),
                               [](const auto& s) { return s->result.trials > 0; });
  if (options_.confirm_top < 2 || options_.confirm_rounds < 1 || !any)
    return;
  // A figure taken while other work runs is slow by however much that work takes: wait a while
  // for a quiet moment, and keep what was seen with the run either way.
  // A short job waits for a share of its own time at most.
  double wait =
      std::min(options_.confirm_quiet_wait_seconds, 0.05 * (measure::now_seconds() - start_));
  int rounds = options_.confirm_rounds;
  const double round_seconds = confirm_round_seconds();
  const double t0 = measure::now_seconds();
  if (options_.time_budget_seconds > 0) {
    // Within the budget: as many rounds as the time left holds (at least 3, a median of
    // something), a quiet wait only from what they leave, no slow round measured again after
    // the deadline.
    const double deadline = start_ + options_.time_budget_seconds;
    if (round_seconds > 0) {
      const auto fit = static_cast<int>(std::floor((deadline - t0) / round_seconds));
      rounds = std::clamp(fit, std::min(3, options_.confirm_rounds), options_.confirm_rounds);
    }
    wait = std::clamp(deadline - t0 - rounds * round_seconds, 0.0, wait);
    speed_.remeasure_until = deadline;
  }
  out_.confirm_load = wait > 0 ? measure::wait_for_quiet(std::min(1.0, wait), wait)
                               : measure::sample_machine_load(0.05);
  if (out_.confirm_load.busy()) {
    TT_LOG(0) << "tune: the machine is busy (" << out_.confirm_load.others_runnable
              << " other runnable tasks on average); confirming anyway, the figures may read slow";
  }
  const measure::MeasureTotals before = measurer_.totals();
  for (const auto& s : states_) {
    if (!detail::confirm_best(*s, db_, target_key_, measurer_, options_.confirm_top, rounds,
                              out_.run_id, stop_, &speed_)) {
      out_.interrupted = true;  // stopped during the confirmation: none stored from then on
      out_.stop_reason = "stopped on request";
      break;
    }
  }
  TT_LOG(1) << "tune: confirmation of " << rounds << " rounds took " << measure::now_seconds() - t0
            << " s (estimated " << rounds * round_seconds << " s)";
  out_.confirm_speed = speed_.kept_speed;
  out_.confirm_slow_rounds = speed_.slow_rounds;
  out_.confirm_stayed_slow = speed_.stayed_slow;
  add_measure_times(out_.times, before, measurer_.totals());
}

}  // namespace tensortune::search::detail

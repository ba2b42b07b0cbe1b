// SPDX-License-Identifier: Apache-2.0
// search::tune() as a list of named steps (tune_job.cpp), and the tuner and task spellings.
#include "tensortune/search/tuner.h"

#include "search/tune_job.h"
#include "tensortune/support/error.h"
#include "tensortune/te/operators.h"

#include <cmath>
#include <set>

namespace tensortune::search {

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
  detail::TuneJob job(tasks, target, target_key, db, measurer, options, progress, stop);
  job.register_tasks();  // a TaskState per workload; the workloads stored
  job.warm_start();      // stored records resume the tasks and train the model
  job.schedule_tasks();  // the task scheduler, told the resumed bests
  job.start_run();       // the run row that the records point at
  while (job.run_round()) {
    // propose, lower, measure, store, learn, report: until the budget, a stop or exhaustion
  }
  job.confirm_bests();  // each task's top records measured again side by side
  return job.finish();
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

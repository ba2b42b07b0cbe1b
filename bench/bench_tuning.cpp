// SPDX-License-Identifier: Apache-2.0
// bench_tuning.h: tune_up_to and the --only filter of the vs_vendor benchmarks.
#include "bench_tuning.h"

#include "tensortune/search/tuner.h"

#include <fmt/format.h>
#include <vector>

namespace tensortune::bench {

measure::MeasurerOptions tune_measurer_options() {
  measure::MeasurerOptions mo;
  mo.build.timeout_s = 10;
  mo.single_call_factor = 10;
  mo.run.timing.budget_s = 1.0;
  mo.rounds = 3;
  return mo;
}

void tune_up_to(const TuneJob& job,
                database::Database& db,
                const target::Target& target,
                const database::TargetKey& key,
                const measure::MeasurerOptions& options,
                const std::function<void(const std::string&)>& progress) {
  std::vector<search::TuneTask> tasks;
  tasks.push_back(search::TuneTask::from_spec(job.spec));
  const auto stored = static_cast<int64_t>(db.history(tasks[0].workload.key(), key).size());
  if (stored >= job.trials) {
    return;
  }
  progress(fmt::format("{}: tuning {} -> {} trials", job.name, stored, job.trials));
  measure::Measurer measurer(target, options);
  search::TuneOptions tune;
  tune.trials = job.trials;
  tune.tool_version = job.tool_version;
  const search::TuneResult r =
      search::tune(tasks, target, key, db, measurer, tune, [&](const search::TuneProgress& p) {
        progress(fmt::format("  {}: {}/{} trials, best {:.1f} GFLOP/s, {:.0f} s", job.name,
                             p.task_trials, job.trials, p.best_gflops, p.elapsed_seconds));
      });
  if (!r.stop_reason.empty()) {
    progress(job.name + ": tuning stopped: " + r.stop_reason);
  }
}

bool selected(const std::string& name, const std::string& only) {
  if (only.empty()) {
    return true;
  }
  size_t start = 0;
  while (start <= only.size()) {
    const size_t comma = std::min(only.find(',', start), only.size());
    const std::string item = only.substr(start, comma - start);
    if (!item.empty() && name.find(item) != std::string::npos) {
      return true;
    }
    start = comma + 1;
  }
  return false;
}

}  // namespace tensortune::bench

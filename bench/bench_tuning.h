// SPDX-License-Identifier: Apache-2.0
// What the benchmarks that tune or measure records share (vs_vendor, vs_vendor_gpu,
// tune_convergence, record_repeatability): the measurement options of `tensortune tune`, tuning
// one case up to a number of records with them, and the --only case filter.
#pragma once

#include "tensortune/database/database.h"
#include "tensortune/measure/measurer.h"
#include "tensortune/target/target.h"

#include <cstdint>
#include <functional>
#include <string>

namespace tensortune::bench {

/// The measurement options `tensortune tune` uses: a 10 s build timeout, a candidate 10x slower
/// than the best timed by its check call, 1 s of timed repeats at most, in 3 rounds.
measure::MeasurerOptions tune_measurer_options();

/// One case to tune: `spec` up to `trials` records, `name` in the progress lines.
struct TuneJob {
  std::string name;
  std::string spec;
  int64_t trials = 0;
  std::string tool_version;
};

/// Tunes job.spec on `target` in a job of its own (XGB, seed 0) until `db` holds job.trials
/// records of it under `key`; nothing when it holds that many already. Progress lines ("gemm_1024:
/// tuning 0 -> 200 trials", one per round) go to `progress`. Throws UserError for an unknown spec
/// and what the measurer or the tuner throws.
void tune_up_to(const TuneJob& job,
                database::Database& db,
                const target::Target& target,
                const database::TargetKey& key,
                const measure::MeasurerOptions& options,
                const std::function<void(const std::string&)>& progress);

/// True when `name` contains one of the comma-separated items of `only`, or `only` is empty.
bool selected(const std::string& name, const std::string& only);

}  // namespace tensortune::bench

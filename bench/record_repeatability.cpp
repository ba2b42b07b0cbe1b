// SPDX-License-Identifier: Apache-2.0
// How far the order of a database's records can be trusted: a seeded sample of each workload's
// successful records (CPU targets) is measured again, twice, with the measurement options of
// `tensortune tune`, and the pairwise agreement of the orders is printed: stored vs each new pass,
// and the two new passes against each other. A cost model scored on these records (pairwise
// ranking accuracy, bench/cost_model_quality) cannot be expected to agree with the stored order
// better than the measurements agree with themselves. Pairs are also scored apart from those
// whose stored throughputs lie within --close (default 5%) of each other.
// Each line also scores the orders by the fastest repeat of each measurement (min) beside the
// median of its repeats, the statistic the database ranks by.
// Each pass measures the sample as `tensortune tune` measures a batch (--rounds=R round-robin
// rounds, MeasurerOptions::rounds; 3 as tune, 1 = each record timed once, in order).
// `record_repeatability --help` lists the options.
// Run on a quiet machine, OMP_WAIT_POLICY=passive; it takes about 2 x N measurements per workload.
#include "args.h"
#include "bench_tuning.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/database/database.h"
#include "tensortune/lower/lower.h"
#include "tensortune/measure/measurer.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/rng.h"
#include "tensortune/te/operators.h"

#include <algorithm>
#include <fmt/format.h>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace tt = tensortune;

namespace {

/// The share of pairs (with different values in `a`) that `a` and `b` order alike; pairs whose
/// `a` values lie within `close` of each other (relative to the larger) are skipped when `far`.
double agreement(const std::vector<double>& a,
                 const std::vector<double>& b,
                 double close,
                 bool far) {
  double pairs = 0;
  double agree = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = i + 1; j < a.size(); ++j) {
      if (a[i] == a[j] || (far && std::abs(a[i] - a[j]) < close * std::max(a[i], a[j]))) {
        continue;
      }
      pairs += 1;
      agree += (a[i] > a[j]) == (b[i] > b[j]) ? 1 : 0;
    }
  }
  return pairs > 0 ? agree / pairs : 1.0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

/// Throughput (1 / seconds) from the fastest of `repeats`; 0 without any.
double min_rate(const std::vector<double>& repeats) {
  return repeats.empty() ? 0.0 : 1 / *std::min_element(repeats.begin(), repeats.end());
}

int repeatability(const std::vector<std::string>& args) {
  tt::cli::ArgParser spec(
      "record_repeatability", "record_repeatability DB [options]",
      "How far the order of a database's records can be trusted: a seeded sample of each "
      "workload's successful CPU records measured again, twice, as `tensortune tune` measures; "
      "the pairwise agreement of the stored order and the two new ones.",
      "");
  spec.positional("DB", "the tuning database", 1, 1)
      .option("sample", "N", "records per workload (default 40, at least 2)")
      .option("only", "SUBSTR", "only the workloads whose key contains SUBSTR")
      .option("close", "X", "pairs within X of each other are also scored apart (default 0.05)")
      .option("seed", "S", "the sample's seed (default 1)")
      .option("rounds", "R",
              "round-robin rounds per pass, MeasurerOptions::rounds (default: as tune)");
  const std::optional<tt::cli::ArgParser::Parsed> parsed = tt::cli::parse_command_line(spec, args);
  if (!parsed) {
    return 0;  // --help
  }
  const tt::cli::ArgParser::Parsed& given = *parsed;
  const std::string path = given.positionals().front();
  const std::string only = given.get("only");
  const auto sample = static_cast<size_t>(given.get_int("sample", 40, 2, 1000000));
  const double close = given.get_double("close", 0.05, 0, 1);
  const auto seed = static_cast<uint64_t>(given.get_int("seed", 1, 0, INT64_MAX));
  const int rounds =
      static_cast<int>(given.get_int("rounds", tt::bench::tune_measurer_options().rounds, 1, 1000));
  const tt::database::Database db = tt::database::Database::open(path, true);
  std::vector<double> all_first, all_second, all_passes, far_first, far_passes;
  std::vector<double> min_first, min_passes_between;
  for (const tt::database::TargetKey& key : db.targets()) {
    const tt::target::Target target =
        tt::codegen::resolve_host(tt::target::Target::parse(key.target));
    if (target.is_gpu()) {
      continue;
    }
    tt::measure::MeasurerOptions options = tt::bench::tune_measurer_options();
    options.rounds = rounds;
    tt::measure::Measurer measurer(target, options);
    for (const tt::database::WorkloadInfo& w : db.workloads()) {
      if (!only.empty() && w.key.find(only) == std::string::npos) {
        continue;
      }
      std::vector<tt::database::Record> records;
      for (tt::database::Record& r : db.history(w.key, key)) {
        if (r.ok()) {
          records.push_back(std::move(r));
        }
      }
      if (records.size() < 2) {
        continue;
      }
      tt::support::Rng rng(seed);
      for (size_t i = records.size() - 1; i > 0; --i) {  // Fisher-Yates, seeded
        std::swap(
            records[i],
            records[static_cast<size_t>(rng.uniform() * static_cast<double>(i + 1)) % (i + 1)]);
      }
      records.resize(std::min(records.size(), sample));
      const tt::te::Workload workload = tt::te::make_workload(w.spec);
      std::vector<tt::ir::LoweredFunc> funcs;
      std::vector<double> stored, stored_min;
      for (const tt::database::Record& r : records) {
        funcs.push_back(
            tt::lower::lower(workload, tt::schedule::parse_schedule(r.schedule), target));
        stored.push_back(1 / r.median_seconds);
        stored_min.push_back(min_rate(r.repeats));
      }
      const auto reference = measurer.make_reference(
          tt::lower::lower(workload, tt::schedule::Schedule{workload.key(), {}}, target),
          tt::measure::Tolerance::for_reduction(workload.max_reduction_length()));
      std::vector<std::vector<double>> passes(2), min_passes(2);
      for (size_t p = 0; p < passes.size(); ++p) {
        for (const tt::measure::MeasureResult& m :
             measurer.measure(*reference, funcs, tt::measure::Measurer::Protocol::Full)) {
          passes[p].push_back(m.ok() ? 1 / m.median_seconds : 0.0);
          min_passes[p].push_back(m.ok() ? min_rate(m.repeats) : 0.0);
        }
      }
      const double first = agreement(stored, passes[0], close, false);
      const double second = agreement(stored, passes[1], close, false);
      const double between = agreement(passes[0], passes[1], close, false);
      const double far = agreement(stored, passes[0], close, true);
      const double far_between = agreement(passes[0], passes[1], close, true);
      min_first.push_back(agreement(stored_min, min_passes[0], close, false));
      min_passes_between.push_back(agreement(min_passes[0], min_passes[1], close, false));
      all_first.push_back(first);
      all_second.push_back(second);
      all_passes.push_back(between);
      far_first.push_back(far);
      far_passes.push_back(far_between);
      std::cout << fmt::format(
          "{:3} records  stored~pass1 {:.3f}  stored~pass2 {:.3f}  pass1~pass2 {:.3f}  | pairs "
          "{:.0f}% apart: stored~pass1 {:.3f}  pass1~pass2 {:.3f}  | by min: stored~pass1 "
          "{:.3f}  pass1~pass2 {:.3f}  {}\n",
          funcs.size(), first, second, between, close * 100, far, far_between, min_first.back(),
          min_passes_between.back(), w.key);
    }
  }
  if (all_first.empty()) {
    std::cout << "record_repeatability: no workload with two successful CPU records\n";
    return 1;
  }
  std::cout << fmt::format(
      "medians over {} workloads: stored~pass1 {:.3f}  stored~pass2 {:.3f}  pass1~pass2 {:.3f}  "
      "| pairs {:.0f}% apart: stored~pass1 {:.3f}  pass1~pass2 {:.3f}  | by min: stored~pass1 "
      "{:.3f}  pass1~pass2 {:.3f}\n",
      all_first.size(), median(all_first), median(all_second), median(all_passes), close * 100,
      median(far_first), median(far_passes), median(min_first), median(min_passes_between));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tt::cli::run_program("record_repeatability", argc, argv, repeatability);
}

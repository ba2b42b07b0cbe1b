// SPDX-License-Identifier: Apache-2.0
// The measurer's throughput and stability. Part 1: a batch of 64 matmul 512^3 candidates (a grid
// of tilings, like a tuner's batch) through Measurer::measure on this machine's cores; prints
// trials per second and the share of the time spent building, running, verifying and elsewhere.
// Part 2: the best candidate measured 20 times in separate trials; prints the coefficient of
// variation of the reported medians. `measure_throughput --help` lists the options.
#include "args.h"
#include "pipeline.h"
#include "tensortune/lower/lower.h"
#include "tensortune/measure/measurer.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/te/operators.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <fmt/format.h>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace tensortune;  // NOLINT(google-build-using-namespace): a small program

constexpr int kSize = 512;
constexpr int kRepeatMeasurements = 20;

/// 4 x 4 x 4 tilings: rows per tile, columns per tile (vectorized), and the reduction split.
std::vector<ir::LoweredFunc> candidates(const te::Workload& w, const target::Target& target) {
  std::vector<ir::LoweredFunc> out;
  for (int64_t ti : {2, 4, 8, 16}) {
    for (int64_t tj : {8, 16, 32, 64}) {
      for (int64_t kf : {8, 32, 128, 512}) {
        using namespace schedule;  // NOLINT(google-build-using-namespace)
        std::vector<Step> steps = {Tile{"C", "i", "j", ti, tj},
                                   Split{"C", "k", kf, false},
                                   Reorder{"C", {"i.o", "j.o", "k.o", "k.i", "i.i", "j.i"}},
                                   Annotate{"C", "i.o", ir::ForKind::Parallel},
                                   Annotate{"C", "i.i", ir::ForKind::Unrolled},
                                   Annotate{"C", "j.i", ir::ForKind::Vectorized}};
        out.push_back(lower::lower(w, Schedule{w.key(), steps}, target));
      }
    }
  }
  return out;
}

double share(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : 0.0;
}

/// Measures `kernel` kRepeatMeasurements times, each a separate trial, and prints the spread of
/// the reported medians.
void print_stability(measure::Measurer& measurer,
                     const measure::Reference& reference,
                     const ir::LoweredFunc& kernel,
                     int threads) {
  std::vector<double> medians;
  double within = 0;  // the mean over trials of (max - min) / median of the repeats
  for (int i = 0; i < kRepeatMeasurements; ++i) {
    measure::MeasureResult r = measurer.measure(reference, {kernel}).at(0);
    if (r.ok()) {
      medians.push_back(r.median_seconds);
      auto [lo, hi] = std::minmax_element(r.repeats.begin(), r.repeats.end());
      within += (*hi - *lo) / r.median_seconds;
    }
  }
  if (medians.size() < 2) {
    std::cout << "  stability: the kernel failed\n";
    return;
  }
  double mean = 0;
  for (double m : medians) {
    mean += m;
  }
  mean /= static_cast<double>(medians.size());
  double var = 0;
  for (double m : medians) {
    var += (m - mean) * (m - mean);
  }
  double cv = std::sqrt(var / static_cast<double>(medians.size() - 1)) / mean;
  auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  std::cout << fmt::format(
      "  stability, {} thread(s): {} trials of the best candidate: mean {:.3f} ms, min {:.3f}, "
      "max {:.3f}, CV {:.2f}% (repeats within a trial span {:.1f}% of its median on average)\n",
      threads, medians.size(), mean * 1e3, *lo * 1e3, *hi * 1e3, 100 * cv,
      100 * within / static_cast<double>(medians.size()));
}

int run(const std::vector<std::string>& args) {
  cli::ArgParser spec("measure_throughput",
                      "measure_throughput [--threads N] [--repeat N] [--min-repeat-ms MS]",
                      "The measurer's throughput (a batch of 64 matmul 512^3 candidates) and "
                      "stability (the best one measured 20 times, on N threads and on one).",
                      "");
  spec.option("threads", "N", "threads of the kernels (default: this machine's cores)")
      .option("repeat", "N", "timed repeats per measurement (default: the measurer's)")
      .option("min-repeat-ms", "MS", "shortest timed repeat (default: the measurer's)");
  const std::optional<cli::ArgParser::Parsed> parsed = cli::parse_command_line(spec, args);
  if (!parsed) {
    return 0;  // --help
  }
  const cli::ArgParser::Parsed& p = *parsed;
  const int cores = static_cast<int>(
      p.get_int("threads", std::max(1U, std::thread::hardware_concurrency()), 1, 1024));
  te::Workload w = te::make_workload(fmt::format("matmul:M={0},N={0},K={0}", kSize));
  target::Target target = cli::resolve_target(fmt::format("llvm -cores={}", cores));
  measure::MeasurerOptions options;  // the defaults a tuning job uses
  options.run.threads = cores;
  options.run.timing.repeat =
      static_cast<int>(p.get_int("repeat", options.run.timing.repeat, 1, 100000));
  options.run.timing.min_repeat_ms =
      p.get_double("min-repeat-ms", options.run.timing.min_repeat_ms, 0, 1e6);
  measure::Measurer measurer(target, options);
  double t0 = measure::now_seconds();
  auto reference = measurer.make_reference(lower::lower(w, schedule::Schedule{w.key(), {}}, target),
                                           measure::Tolerance::for_reduction(kSize));
  double reference_seconds = measure::now_seconds() - t0;
  std::vector<ir::LoweredFunc> batch = candidates(w, target);

  double start = measure::now_seconds();
  std::vector<measure::MeasureResult> results = measurer.measure(*reference, batch);
  double wall = measure::now_seconds() - start;
  const measure::MeasureTotals& totals = measurer.totals();
  size_t best = 0;
  int ok = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    ok += results[i].ok() ? 1 : 0;
    if (results[i].ok() &&
        (!results[best].ok() || results[i].median_seconds < results[best].median_seconds)) {
      best = i;
    }
  }
  double build = totals.build_wall_seconds;
  double runs = totals.run_seconds;
  double verify = totals.verify_seconds;
  std::cout << fmt::format(
      "measure_throughput: {} matmul {}^3 float32 candidates, {} cores, repeat {}, "
      "min_repeat_ms {}\n",
      batch.size(), kSize, cores, options.run.timing.repeat, options.run.timing.min_repeat_ms);
  std::cout << fmt::format("  reference (default schedule, once per workload): {:.2f} s\n",
                           reference_seconds);
  std::cout << fmt::format("  {} trials ({} ok) in {:.2f} s: {:.2f} trials/s\n", results.size(), ok,
                           wall, static_cast<double>(results.size()) / wall);
  std::cout << fmt::format(
      "  time: build {:.1f}% (parallel phase), run {:.1f}%, verify {:.1f}%, overhead {:.1f}%\n",
      share(build, wall), share(runs, wall), share(verify, wall),
      share(wall - build - runs - verify, wall));
  double flop = w.flop_count();
  std::cout << fmt::format("  best candidate #{}: {:.1f} GFLOP/s; slowest ok: {:.1f} GFLOP/s\n",
                           best, flop / results[best].median_seconds / 1e9, [&] {
                             double slowest = 0;
                             for (const auto& r : results) {
                               slowest = r.ok() ? std::max(slowest, r.median_seconds) : slowest;
                             }
                             return slowest > 0 ? flop / slowest / 1e9 : 0.0;
                           }());

  print_stability(measurer, *reference, batch[best], cores);
  // The same on one thread, where another tenant's load on the second core cannot interfere.
  measure::MeasurerOptions single = options;
  single.run.threads = 1;
  measure::Measurer one_thread(target, single);
  auto reference1 =
      one_thread.make_reference(lower::lower(w, schedule::Schedule{w.key(), {}}, target),
                                measure::Tolerance::for_reduction(kSize));
  print_stability(one_thread, *reference1, batch[best], 1);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return cli::run_program("measure_throughput", argc, argv, run);
}

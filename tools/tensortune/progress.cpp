// SPDX-License-Identifier: Apache-2.0
// The tuning progress bar and its plain-line form.
#include "progress.h"

#include "args.h"

#include <fmt/format.h>
#include <iostream>
#include <unistd.h>

namespace tensortune::cli {

ProgressStyle parse_progress_style(const std::string& text) {
  if (text == "bar")
    return ProgressStyle::Bar;
  if (text == "lines")
    return ProgressStyle::Lines;
  if (text == "none")
    return ProgressStyle::None;
  if (text == "auto" || text.empty()) {
    return isatty(STDERR_FILENO) != 0 ? ProgressStyle::Bar : ProgressStyle::Lines;
  }
  throw UsageError("--progress must be auto, bar, lines or none (got '" + text + "')", "tune");
}

bool clock_budget(const search::TuneProgress& p) {
  return p.time_budget_seconds > 0 && p.budget >= (int64_t{1} << 40);
}

std::string format_duration(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600)
    return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60)
    return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

void ProgressPrinter::update(const search::TuneProgress& p) {
  if (style_ == ProgressStyle::None)
    return;
  // With a time budget and no trial limit, progress and the ETA follow the clock.
  const bool timed = clock_budget(p);
  double share = p.budget > 0 ? static_cast<double>(p.trials) / static_cast<double>(p.budget) : 1.0;
  if (p.time_budget_seconds > 0)
    share = std::max(share, std::min(1.0, p.elapsed_seconds / p.time_budget_seconds));
  // Until the end-of-job confirmation the best is a single measurement, and says so.
  const std::string peak =
      (peak_ > 0 ? fmt::format(" ({:.0f}% of peak)", 100.0 * p.best_gflops / peak_) : "") +
      (p.best_confirmed ? "" : " unconfirmed");
  std::string eta = "-";
  if (p.measured > 0 && p.trials < p.budget) {
    double left = timed ? 1e300
                        : p.elapsed_seconds / static_cast<double>(p.measured) *
                              static_cast<double>(p.budget - p.trials);
    if (p.time_budget_seconds > 0)
      left = std::min(left, std::max(0.0, p.time_budget_seconds - p.elapsed_seconds));
    eta = format_duration(left);
  }
  const std::string of = timed ? "" : fmt::format("/{}", p.budget);
  if (style_ == ProgressStyle::Lines) {
    std::cerr << fmt::format(
        "round {:>3}  {:>5}{} trials  {}  best {:.1f} GFLOP/s{}  ok {} err {}  "
        "[search {:.1f}s features {:.1f}s train {:.1f}s build {:.1f}s run {:.1f}s]  ETA {}\n",
        p.round, p.trials, of, p.workload_name, p.best_gflops, peak, p.round_ok, p.round_errors,
        p.round_times.search, p.round_times.features, p.round_times.training, p.round_times.build,
        p.round_times.run, eta);
    return;
  }
  constexpr int kWidth = 24;
  const int filled = static_cast<int>(share * kWidth + 0.5);
  std::cerr << fmt::format("\r[{}{}] {:>5}{} trials  best {:.1f} GFLOP/s{}  ETA {}   ",
                           std::string(static_cast<size_t>(std::min(filled, kWidth)), '#'),
                           std::string(static_cast<size_t>(kWidth - std::min(filled, kWidth)), '.'),
                           p.trials, of, p.best_gflops, peak, eta)
            << std::flush;
  drawn_ = true;
}

void ProgressPrinter::finish() {
  if (drawn_)
    std::cerr << "\n";
  drawn_ = false;
}

}  // namespace tensortune::cli

// SPDX-License-Identifier: Apache-2.0
// Progress of a tuning job on stderr: a one-line bar redrawn in place on a terminal, plain lines
// otherwise.
#pragma once

#include "tensortune/search/tuner.h"

#include <string>

namespace tensortune::cli {

enum class ProgressStyle { Bar, Lines, None };

/// `auto` picks Bar when stderr is a terminal, else Lines.
ProgressStyle parse_progress_style(const std::string& text);

class ProgressPrinter {
 public:
  ProgressPrinter(ProgressStyle style, double peak_gflops) : style_(style), peak_(peak_gflops) {}
  void update(const search::TuneProgress& p);
  /// Ends the bar's line (call before printing anything else on stderr).
  void finish();

 private:
  ProgressStyle style_;
  double peak_;
  bool drawn_ = false;
};

/// A time budget without a trial limit: the clock, not 2^40 trials, is the budget.
bool clock_budget(const search::TuneProgress& p);

/// "1h02m", "3m05s", "42s".
std::string format_duration(double seconds);

}  // namespace tensortune::cli

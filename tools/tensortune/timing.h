// SPDX-License-Identifier: Apache-2.0
// The CPU measurement protocol of DESIGN.md: one warm-up call, `number` doubled until one repeat
// lasts at least min_repeat_ms, then `repeat` repeats; the median is reported and all are kept.
// (The measure module takes this over in a later issue.)
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace tensortune::cli {

struct TimingOptions {
  /// Repeats whose times are kept (>= 1).
  int repeat = 5;
  /// The least duration of one repeat; `number` grows until a repeat lasts this long.
  double min_repeat_ms = 50;
  /// Upper bound on `number` (calls per repeat), so a no-op cannot loop for ever.
  int64_t max_number = int64_t{1} << 30;
};

struct TimingResult {
  /// Calls per repeat.
  int64_t number = 0;
  /// Seconds per call of each repeat, in the order they ran.
  std::vector<double> repeats;
  /// The median of `repeats`.
  double median_seconds = 0;
};

/// Times `fn` with the protocol above. `fn` runs once for warm-up, then during calibration, then
/// repeat * number times.
TimingResult time_calls(const std::function<void()>& fn, const TimingOptions& options);

/// The median of `values` (the mean of the two middle ones for an even count); 0 when empty.
double median(std::vector<double> values);

}  // namespace tensortune::cli

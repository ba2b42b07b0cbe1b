// SPDX-License-Identifier: Apache-2.0
// The CPU measurement protocol (see timing.h). steady_clock is monotonic; a repeat of at least
// tens of milliseconds makes its resolution irrelevant.
#include "timing.h"

#include <algorithm>
#include <chrono>

namespace tensortune::cli {
namespace {

/// Seconds taken by `number` calls of `fn`.
double run_batch(const std::function<void()>& fn, int64_t number) {
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < number; ++i) {
    fn();
  }
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count();
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) {
    return 0;
  }
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

TimingResult time_calls(const std::function<void()>& fn, const TimingOptions& options) {
  fn();  // warm-up: page faults, instruction cache, thread pool start-up
  const double min_seconds = options.min_repeat_ms / 1000.0;
  TimingResult result;
  result.number = 1;
  while (result.number < options.max_number && run_batch(fn, result.number) < min_seconds) {
    result.number = std::min(options.max_number, result.number * 2);
  }
  for (int r = 0; r < std::max(1, options.repeat); ++r) {
    result.repeats.push_back(run_batch(fn, result.number) / static_cast<double>(result.number));
  }
  result.median_seconds = median(result.repeats);
  return result;
}

}  // namespace tensortune::cli

// SPDX-License-Identifier: Apache-2.0
// The CPU timing protocol (see timing.h). steady_clock is monotonic; a repeat of at least
// milliseconds makes its resolution irrelevant.
#include "tensortune/measure/timing.h"

#include "tensortune/runtime/parallel.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace tensortune::measure {
namespace {

/// Seconds taken by `number` calls of `call`.
double run_batch(const std::function<void()>& call, int64_t number) {
  double start = now_seconds();
  for (int64_t i = 0; i < number; ++i) {
    call();
  }
  return now_seconds() - start;
}

}  // namespace

support::Json TimingOptions::to_json() const {
  support::Json out = support::Json::object();
  out["repeat"] = repeat;
  out["min_repeat_ms"] = min_repeat_ms;
  out["max_number"] = max_number;
  out["cache_flush"] = cache_flush;
  out["single_call_above_s"] = single_call_above_s;
  out["budget_s"] = budget_s;
  return out;
}

TimingOptions TimingOptions::from_json(const support::Json& json) {
  TimingOptions t;
  t.repeat = static_cast<int>(json.at("repeat").as_int("timing field 'repeat'"));
  t.min_repeat_ms = json.at("min_repeat_ms").as_double("timing field 'min_repeat_ms'");
  t.max_number = json.at("max_number").as_int("timing field 'max_number'");
  t.cache_flush = json.at("cache_flush").as_bool("timing field 'cache_flush'");
  if (json.contains("single_call_above_s")) {
    t.single_call_above_s =
        json.at("single_call_above_s").as_double("timing field 'single_call_above_s'");
  }
  if (json.contains("budget_s")) {
    t.budget_s = json.at("budget_s").as_double("timing field 'budget_s'");
  }
  return t;
}

double now_seconds() {
  std::chrono::duration<double> t = std::chrono::steady_clock::now().time_since_epoch();
  return t.count();
}

TimingResult time_calls(const std::function<void()>& call,
                        double warmup_seconds,
                        const TimingOptions& options,
                        const std::function<void()>& flush) {
  // The runtime's threads are woken before each batch (after the flush), so the kernel meets them
  // ready, as it does between a model's kernels.
  return time_batches(
      [&](int64_t number) {
        tt_parallel_wake();
        return run_batch(call, number);
      },
      warmup_seconds, options, flush);
}

TimingResult time_batches(const std::function<double(int64_t)>& batch,
                          double warmup_seconds,
                          const TimingOptions& options,
                          const std::function<void()>& flush) {
  TimingResult result;
  const int repeat = std::max(1, options.repeat);
  if (options.cache_flush) {
    result.number = 1;
    double spent = 0;
    for (int r = 0; r < repeat && (r == 0 || options.budget_s <= 0 || spent < options.budget_s);
         ++r) {
      if (flush) {
        flush();
      }
      result.repeats.push_back(batch(1));
      spent += result.repeats.back();
    }
    result.total_calls = static_cast<int64_t>(result.repeats.size());
    result.median_seconds = median(result.repeats);
    return result;
  }
  const double min_seconds = options.min_repeat_ms / 1000.0;
  const int64_t max_number = std::max<int64_t>(1, options.max_number);
  // First guess from the warm-up call, which is usually slower than a warm call.
  double per_call = std::max(warmup_seconds, 1e-9);
  auto guess = static_cast<int64_t>(std::ceil(min_seconds / per_call));
  int64_t number = std::clamp<int64_t>(guess, 1, max_number);
  for (;;) {
    double elapsed = batch(number);
    result.total_calls += number;
    if (elapsed >= min_seconds || number == max_number) {
      result.repeats.push_back(elapsed / static_cast<double>(number));
      break;
    }
    // Too short: aim 20% past the goal from what this batch took, at least doubling.
    double scale = elapsed > 0 ? 1.2 * min_seconds / elapsed : 2.0;
    auto next = static_cast<int64_t>(std::ceil(static_cast<double>(number) * std::max(2.0, scale)));
    number = std::min(max_number, next);
  }
  result.number = number;
  double spent = result.repeats.back() * static_cast<double>(number);
  while (static_cast<int>(result.repeats.size()) < repeat &&
         (options.budget_s <= 0 || spent < options.budget_s)) {
    const double elapsed = batch(number);
    result.repeats.push_back(elapsed / static_cast<double>(number));
    result.total_calls += number;
    spent += elapsed;
  }
  result.median_seconds = median(result.repeats);
  return result;
}

TimingResult time_with_warmup(const std::function<void()>& call,
                              const TimingOptions& options,
                              const std::function<void()>& flush) {
  double warmup = run_batch(call, 1);
  return time_calls(call, warmup, options, flush);
}

}  // namespace tensortune::measure

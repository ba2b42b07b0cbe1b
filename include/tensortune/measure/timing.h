// SPDX-License-Identifier: Apache-2.0
// The CPU timing protocol (docs/design/measurement.md): after the warm-up call, `number`
// grows until one repeat lasts at least min_repeat_ms; then `repeat` repeats are timed and their
// median is the result. With cache_flush, number is 1 and caches are flushed before each repeat.
#pragma once

#include "tensortune/support/json.h"
#include "tensortune/support/stats.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace tensortune::measure {

struct TimingOptions {
  /// Repeats whose times are kept (>= 1).
  int repeat = 5;
  /// The least duration of one repeat; `number` grows until a repeat lasts this long.
  double min_repeat_ms = 20;
  /// Upper bound on `number` (calls per repeat), so a no-op cannot loop for ever.
  int64_t max_number = int64_t{1} << 30;
  /// Flush the caches before every repeat (number is then 1).
  bool cache_flush = false;
  /// When the check call (the warm-up) and one more call both took longer than this many
  /// seconds, and the second lasted min_repeat_ms, the second is the only timed call: repeats =
  /// {its time}, number = 1 (0 = always run the full protocol). A tuner sets it to a multiple of
  /// the best time so far, so hopeless candidates cost two calls; the second is warm, so a fast
  /// kernel whose first call was slow (cold caches, sleeping threads) still gets the full protocol.
  double single_call_above_s = 0;
  /// Once the timed repeats have taken this many seconds in all, no more are added (at least one
  /// is kept; 0 = no budget). A tuner sets it so that a slow candidate costs a few calls, not
  /// `repeat` of them.
  double budget_s = 0;

  support::Json to_json() const;
  /// Throws UserError naming the field for a malformed document.
  static TimingOptions from_json(const support::Json& json);
};

struct TimingResult {
  /// Calls per repeat.
  int64_t number = 0;
  /// Seconds per call of each repeat, in the order they ran.
  std::vector<double> repeats;
  /// The median of `repeats`.
  double median_seconds = 0;
  /// Every call made while timing, calibration included.
  int64_t total_calls = 0;
};

/// Times `call`, which has already been run once (the warm-up) and took `warmup_seconds`; that
/// time seeds the first guess of `number`. Calibration batches shorter than min_repeat_ms are
/// discarded; the first one that is long enough is the first repeat (it ran exactly like one).
/// `flush` runs before each repeat when options.cache_flush is set and is not timed.
TimingResult time_calls(const std::function<void()>& call,
                        double warmup_seconds,
                        const TimingOptions& options,
                        const std::function<void()>& flush = {});

/// time_calls with the batches timed by `batch`, which makes `number` calls and returns the
/// seconds they took in all (the GPU runner times batches with device events).
TimingResult time_batches(const std::function<double(int64_t)>& batch,
                          double warmup_seconds,
                          const TimingOptions& options,
                          const std::function<void()>& flush = {});

/// Runs `call` once as the warm-up, timing it, then time_calls.
TimingResult time_with_warmup(const std::function<void()>& call,
                              const TimingOptions& options,
                              const std::function<void()>& flush = {});

/// The median of `values` (the mean of the two middle ones for an even count); 0 when empty.
using support::median;

/// Seconds on the monotonic clock since an arbitrary origin.
double now_seconds();

}  // namespace tensortune::measure

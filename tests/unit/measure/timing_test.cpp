// SPDX-License-Identifier: Apache-2.0
// The timing protocol, checked as a protocol (call counts, the calibration rule, the median), not
// as a statement about the machine's speed.
#include "tensortune/measure/timing.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace tensortune::measure {
namespace {

/// Busy-waits `seconds` (sleeping could take much longer than asked on a loaded machine).
void spin_for(double seconds) {
  double until = now_seconds() + seconds;
  while (now_seconds() < until) {
  }
}

TEST(Timing, ChosenNumberMakesTheFirstRepeatLastAtLeastMinRepeatMs) {
  TimingOptions options;
  options.repeat = 3;
  options.min_repeat_ms = 5;
  int64_t calls = 0;
  // The warm-up claims 100x the real time, so the first guess of `number` is far too small and
  // calibration has to grow it.
  TimingResult r = time_calls(
      [&] {
        ++calls;
        spin_for(20e-6);
      },
      2e-3, options);
  ASSERT_EQ(r.repeats.size(), 3U);
  EXPECT_GE(r.number, 2);
  EXPECT_GE(r.repeats[0] * static_cast<double>(r.number), options.min_repeat_ms / 1000);
  EXPECT_EQ(calls, r.total_calls);
  EXPECT_GE(r.total_calls, 3 * r.number);
  EXPECT_DOUBLE_EQ(r.median_seconds, median(r.repeats));
}

TEST(Timing, ALongCallIsTimedOncePerRepeat) {
  TimingOptions options;
  options.repeat = 4;
  options.min_repeat_ms = 1;
  int64_t calls = 0;
  TimingResult r = time_calls(
      [&] {
        ++calls;
        spin_for(2e-3);
      },
      2e-3, options);
  EXPECT_EQ(r.number, 1);
  EXPECT_EQ(calls, 4);  // the first repeat doubles as the calibration batch
  for (double seconds : r.repeats) {
    EXPECT_GE(seconds, 2e-3);
  }
}

TEST(Timing, ABudgetStopsTheRepeatsOfASlowCandidate) {
  // A fake batch of `number` calls that take 0.3 s each, so the test does not depend on speed.
  int64_t batches = 0;
  auto slow = [&](int64_t number) {
    ++batches;
    return 0.3 * static_cast<double>(number);
  };
  TimingOptions options;
  options.repeat = 5;
  options.min_repeat_ms = 1;
  EXPECT_EQ(time_batches(slow, 0.3, options).repeats.size(), 5U);
  options.budget_s = 1.0;  // 0.3, 0.6, 0.9, then 1.2 >= 1.0
  TimingResult r = time_batches(slow, 0.3, options);
  EXPECT_EQ(r.repeats.size(), 4U);
  EXPECT_EQ(r.total_calls, 4);
  EXPECT_DOUBLE_EQ(r.median_seconds, 0.3);
  options.budget_s = 0.1;  // one repeat is always kept
  EXPECT_EQ(time_batches(slow, 0.3, options).repeats.size(), 1U);
  options.cache_flush = true;
  EXPECT_EQ(time_batches(slow, 0.3, options).repeats.size(), 1U);
  // A fast candidate is not affected: five repeats of 1 ms calls stay far under the budget.
  options.cache_flush = false;
  options.budget_s = 1.0;
  EXPECT_EQ(
      time_batches([](int64_t number) { return 1e-3 * static_cast<double>(number); }, 1e-3, options)
          .repeats.size(),
      5U);
}

TEST(Timing, NumberStopsAtItsBound) {
  TimingOptions options;
  options.repeat = 2;
  options.min_repeat_ms = 1e9;  // never reached: the bound stops the growth
  options.max_number = 8;
  int64_t calls = 0;
  TimingResult r = time_calls([&] { ++calls; }, 1e-9, options);
  EXPECT_EQ(r.number, 8);
  EXPECT_EQ(r.repeats.size(), 2U);
  EXPECT_EQ(calls, r.total_calls);
}

TEST(Timing, CacheFlushRunsOneCallPerRepeatAfterAFlush) {
  TimingOptions options;
  options.repeat = 5;
  options.cache_flush = true;
  std::vector<char> order;
  TimingResult r =
      time_calls([&] { order.push_back('c'); }, 1e-6, options, [&] { order.push_back('f'); });
  EXPECT_EQ(r.number, 1);
  EXPECT_EQ(r.repeats.size(), 5U);
  EXPECT_EQ(std::string(order.begin(), order.end()), "fcfcfcfcfc");
}

TEST(Timing, WarmupComesFirstAndIsNotARepeat) {
  TimingOptions options;
  options.repeat = 1;
  options.min_repeat_ms = 0;
  int64_t calls = 0;
  TimingResult r = time_with_warmup([&] { ++calls; }, options);
  EXPECT_EQ(r.number, 1);
  EXPECT_EQ(calls, 1 + r.total_calls);
}

TEST(Timing, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

}  // namespace
}  // namespace tensortune::measure

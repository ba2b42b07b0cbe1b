// SPDX-License-Identifier: Apache-2.0
// The single-call shortcut for hopeless candidates (TimingOptions::single_call_above_s): a slow
// check call alone never decides it, a second (warm) call does.
#include "measure/worker_reply.h"

#include <gtest/gtest.h>

#include <functional>

namespace tensortune::measure::detail {
namespace {

TimingOptions limit(double seconds) {
  TimingOptions t;
  t.single_call_above_s = seconds;
  t.min_repeat_ms = 20;
  return t;
}

/// A warm call that takes `seconds` and counts itself in `*calls`.
std::function<double()> counting_call(double seconds, int* calls) {
  return [seconds, calls] {
    ++*calls;
    return seconds;
  };
}

TEST(SingleCall, ACheckCallUnderTheLimitMakesNoSecondCall) {
  int calls = 0;
  auto again = counting_call(1.0, &calls);
  MeasureResult r;
  double warmup = 0.5e-3;
  EXPECT_FALSE(timed_by_single_call(&warmup, limit(1e-3), again, &r));
  EXPECT_EQ(calls, 0);
  EXPECT_DOUBLE_EQ(warmup, 0.5e-3);
  EXPECT_TRUE(r.repeats.empty());
  // No limit: never a shortcut, however slow the check call.
  warmup = 100;
  EXPECT_FALSE(timed_by_single_call(&warmup, limit(0), again, &r));
  EXPECT_EQ(calls, 0);
}

TEST(SingleCall, ASlowColdCallOfAFastKernelGetsTheFullProtocol) {
  // A 9 us kernel whose first call took 130 us (threads waking, cold caches), limit 90 us.
  int calls = 0;
  auto again = counting_call(9e-6, &calls);
  MeasureResult r;
  double warmup = 130e-6;
  EXPECT_FALSE(timed_by_single_call(&warmup, limit(90e-6), again, &r));
  EXPECT_EQ(calls, 1);
  EXPECT_DOUBLE_EQ(warmup, 9e-6);  // the timing loop's first guess is the warm call
  EXPECT_TRUE(r.repeats.empty());
}

TEST(SingleCall, AKernelSlowTwiceIsTimedByItsWarmCall) {
  int calls = 0;
  auto again = counting_call(40e-3, &calls);
  MeasureResult r;
  double warmup = 50e-3;
  EXPECT_TRUE(timed_by_single_call(&warmup, limit(1e-3), again, &r));
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(r.repeats.size(), 1U);
  EXPECT_DOUBLE_EQ(r.repeats[0], 40e-3);
  EXPECT_DOUBLE_EQ(r.median_seconds, 40e-3);
  EXPECT_EQ(r.number, 1);
}

TEST(SingleCall, ACallShorterThanARepeatIsNeverTheMeasurement) {
  // relu 4x4: a 3 ns kernel whose calls read as the timer's 30 ns, ten times the best; and a
  // small parallel kernel whose call is 100 us of waking threads. Both get the full protocol.
  for (double call : {30e-9, 100e-6}) {
    MeasureResult r;
    double warmup = call;
    EXPECT_FALSE(timed_by_single_call(
        &warmup, limit(call / 10), [&] { return call; }, &r));
    EXPECT_TRUE(r.repeats.empty());
  }
}

}  // namespace
}  // namespace tensortune::measure::detail

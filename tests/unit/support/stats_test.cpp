// SPDX-License-Identifier: Apache-2.0
#include "tensortune/support/stats.h"

#include <gtest/gtest.h>

namespace tensortune::support {
namespace {

TEST(Median, OddCountIsTheMiddleValueAndEvenCountTheMeanOfTheTwo) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(MiddleSpread, OfFiveIsTheFourthLessTheSecondOverTheMedian) {
  // One round of five at twice the time: the median stays at 10, and so does the spread.
  EXPECT_DOUBLE_EQ(middle_spread({10, 20, 9.5, 10.5, 10}), (10.5 - 10) / 10);
  EXPECT_DOUBLE_EQ(middle_spread({5, 1, 4, 2, 3}), (4.0 - 2.0) / 3.0);
}

TEST(MiddleSpread, OfTwoOrThreeIsTheWholeRange) {
  EXPECT_DOUBLE_EQ(middle_spread({10, 12, 11}), 2.0 / 11.0);
  EXPECT_DOUBLE_EQ(middle_spread({8, 12}), 4.0 / 10.0);
}

TEST(MiddleSpread, OfEightDropsTheTwoAtEachEnd) {
  EXPECT_DOUBLE_EQ(middle_spread({1, 2, 3, 4, 5, 6, 7, 100}), (6.0 - 3.0) / 4.5);
}

TEST(MiddleSpread, IsZeroForOneValueOrNoPositiveMedian) {
  EXPECT_DOUBLE_EQ(middle_spread({}), 0);
  EXPECT_DOUBLE_EQ(middle_spread({7}), 0);
  EXPECT_DOUBLE_EQ(middle_spread({0, 0, 1}), 0);
}

}  // namespace
}  // namespace tensortune::support

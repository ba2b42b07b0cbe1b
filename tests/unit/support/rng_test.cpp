// SPDX-License-Identifier: Apache-2.0
// Rng: the reference xoshiro256** sequence, determinism, and the bounds and balance of the derived
// distributions.
#include "tensortune/support/rng.h"

#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace tensortune::support {
namespace {

// First outputs of xoshiro256** seeded by four splitmix64 outputs, from an independent
// transcription of the reference C code (prng.di.unimi.it) into Python.
TEST(Rng, MatchesReferenceXoshiro256StarStar) {
  Rng zero(0);
  EXPECT_EQ(zero.next(), 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(zero.next(), 0xbf6e1f784956452aULL);
  EXPECT_EQ(zero.next(), 0x1a5f849d4933e6e0ULL);
  EXPECT_EQ(zero.next(), 0x6aa594f1262d2d2cULL);
  Rng answer(42);
  EXPECT_EQ(answer.next(), 0x15780b2e0c2ec716ULL);
  EXPECT_EQ(answer.next(), 0x6104d9866d113a7eULL);
}

TEST(Rng, SameSeedGivesSameSequence) {
  Rng a(1234);
  Rng b(1234);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(a.next(), b.next()) << "at draw " << i;
  }
  Rng c(1234);
  Rng d(1234);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(c.uniform_int(-5, 17), d.uniform_int(-5, 17));
    ASSERT_EQ(c.uniform(), d.uniform());
  }
}

TEST(Rng, DifferentSeedsDiffer) {
  Rng a(1);
  Rng b(2);
  int equal = 0;
  for (int i = 0; i < 100; ++i) {
    equal += a.next() == b.next() ? 1 : 0;
  }
  EXPECT_EQ(equal, 0);
}

TEST(Rng, UniformIntStaysInBoundsAndHitsEveryValue) {
  Rng rng(7);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 7000; ++i) {
    int64_t v = rng.uniform_int(-3, 3);
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 3);
    ++counts[static_cast<size_t>(v + 3)];
  }
  for (int c : counts) {
    EXPECT_GT(c, 850);  // expected 1000 each; a biased or broken draw falls far outside
    EXPECT_LT(c, 1150);
  }
}

TEST(Rng, UniformIntHandlesDegenerateAndExtremeRanges) {
  Rng rng(9);
  EXPECT_EQ(rng.uniform_int(5, 5), 5);
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  bool negative = false;
  bool positive = false;
  for (int i = 0; i < 64; ++i) {
    int64_t v = rng.uniform_int(kMin, kMax);
    negative = negative || v < 0;
    positive = positive || v > 0;
  }
  EXPECT_TRUE(negative);
  EXPECT_TRUE(positive);
  for (int i = 0; i < 100; ++i) {
    int64_t v = rng.uniform_int(kMax - 1, kMax);
    EXPECT_TRUE(v == kMax - 1 || v == kMax);
    int64_t w = rng.uniform_int(kMin, kMin + 2);
    EXPECT_TRUE(w >= kMin && w <= kMin + 2);
  }
}

TEST(Rng, UniformIntRejectsEmptyRange) {
  Rng rng(1);
  EXPECT_THROW(rng.uniform_int(3, 2), InternalError);
}

TEST(Rng, UniformIsInUnitIntervalWithMeanNearHalf) {
  Rng rng(11);
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
}

TEST(Rng, UniformFloatStaysInHalfOpenRange) {
  Rng rng(13);
  for (int i = 0; i < 10000; ++i) {
    float f = rng.uniform_float(-1.0F, 1.0F);
    ASSERT_GE(f, -1.0F);
    ASSERT_LT(f, 1.0F);
  }
  EXPECT_EQ(rng.uniform_float(2.5F, 2.5F), 2.5F);
  // A range one ulp wide: rounding must never return the upper bound.
  float lo = 1.0F;
  float hi = std::nextafter(lo, 2.0F);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(rng.uniform_float(lo, hi), lo);
  }
}

TEST(Rng, ForkIsDeterministicAndIndependentOfParent) {
  Rng a(21);
  Rng b(21);
  Rng child_a = a.fork();
  Rng child_b = b.fork();
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(child_a.next(), child_b.next());
  }
  Rng parent(21);
  Rng child = parent.fork();
  int equal = 0;
  for (int i = 0; i < 50; ++i) {
    equal += parent.next() == child.next() ? 1 : 0;
  }
  EXPECT_EQ(equal, 0);
}

TEST(Rng, PickCoversAllIndices) {
  Rng rng(5);
  std::vector<bool> hit(4, false);
  for (int i = 0; i < 200; ++i) {
    size_t k = rng.pick(4);
    ASSERT_LT(k, 4U);
    hit[k] = true;
  }
  EXPECT_EQ(hit, std::vector<bool>(4, true));
}

}  // namespace
}  // namespace tensortune::support

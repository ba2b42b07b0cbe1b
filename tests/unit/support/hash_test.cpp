// SPDX-License-Identifier: Apache-2.0
// FNV-1a against its published test vectors, and the hex and combine helpers.
#include "tensortune/support/hash.h"

#include <gtest/gtest.h>

#include <set>

namespace tensortune::support {
namespace {

TEST(Fnv1a64, MatchesPublishedTestVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

TEST(Fnv1a64, HashesEmbeddedNulBytes) {
  std::string with_nul("a\0b", 3);
  EXPECT_NE(fnv1a64(with_nul), fnv1a64("ab"));
  EXPECT_NE(fnv1a64(with_nul), fnv1a64("a"));
}

TEST(HashHex, IsSixteenLowerCaseHexDigits) {
  EXPECT_EQ(hash_hex(""), "cbf29ce484222325");
  EXPECT_EQ(hash_hex("foobar"), "85944171f73967e8");
  std::string h = hash_hex("matmul M=512");
  ASSERT_EQ(h.size(), 16U);
  for (char c : h) {
    EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << h;
  }
}

TEST(HashHex, KeepsLeadingZeros) {
  // Search a few strings for a hash below 2^60, whose hex form starts with '0'.
  bool found = false;
  for (int i = 0; i < 200 && !found; ++i) {
    std::string text = "k" + std::to_string(i);
    if (fnv1a64(text) < (1ULL << 60)) {
      EXPECT_EQ(hash_hex(text)[0], '0');
      EXPECT_EQ(hash_hex(text).size(), 16U);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(HashCombine, DependsOnOrderAndBothInputs) {
  uint64_t a = fnv1a64("a");
  uint64_t b = fnv1a64("b");
  EXPECT_NE(hash_combine(hash_combine(0, a), b), hash_combine(hash_combine(0, b), a));
  EXPECT_NE(hash_combine(a, b), hash_combine(a, b + 1));
  EXPECT_NE(hash_combine(a, b), hash_combine(a + 1, b));
  EXPECT_EQ(hash_combine(a, b), hash_combine(a, b));
}

TEST(HashCombine, SpreadsSmallIntegers) {
  std::set<uint64_t> seen;
  for (uint64_t i = 0; i < 1000; ++i) {
    seen.insert(hash_combine(12345, i));
  }
  EXPECT_EQ(seen.size(), 1000U);
}

}  // namespace
}  // namespace tensortune::support

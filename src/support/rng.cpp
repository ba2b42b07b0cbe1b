// SPDX-License-Identifier: Apache-2.0
// xoshiro256** (Blackman and Vigna, "Scrambled linear pseudorandom number generators", 2021),
// seeded through splitmix64 as its authors recommend. Every derived value (integers, doubles,
// floats) is computed here from raw bits, so sequences are identical on every platform.
#include "tensortune/support/rng.h"

#include "tensortune/support/error.h"

#include <cmath>
#include <limits>

namespace tensortune::support {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

}  // namespace

Rng::Rng(uint64_t seed) : s_{} {
  uint64_t state = seed;
  for (uint64_t& word : s_) {
    word = splitmix64(state);  // never all zero: splitmix64 is a bijection of a moving counter
  }
}

uint64_t Rng::next() {
  uint64_t result = rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

int64_t Rng::uniform_int(int64_t lo, int64_t hi) {
  TT_CHECK(lo <= hi) << "uniform_int: empty range [" << lo << ", " << hi << "]";
  uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);  // hi - lo, mod 2^64
  if (span == std::numeric_limits<uint64_t>::max()) {
    return static_cast<int64_t>(next());
  }
  uint64_t n = span + 1;
  // Reject the lowest (2^64 mod n) raw values so that every residue is equally likely.
  uint64_t threshold = (0 - n) % n;
  uint64_t r = next();
  while (r < threshold) {
    r = next();
  }
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + r % n);
}

double Rng::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;  // 53 random mantissa bits
}

float Rng::uniform_float(float lo, float hi) {
  TT_CHECK(lo <= hi) << "uniform_float: empty range [" << lo << ", " << hi << ")";
  float unit = static_cast<float>(next() >> 40) * 0x1.0p-24F;  // 24 random bits, exact in float
  float value = lo + (hi - lo) * unit;
  // Rounding can land exactly on hi; the range is half-open.
  return value < hi ? value : (lo < hi ? std::nextafter(hi, lo) : lo);
}

Rng Rng::fork() {
  return Rng(next());
}

}  // namespace tensortune::support

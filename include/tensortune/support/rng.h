// SPDX-License-Identifier: Apache-2.0
// A small deterministic random generator: the same seed gives the same sequence on every platform
// (std distributions are implementation-defined, so they are not used for anything reproducible).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tensortune::support {

/// xoshiro256** seeded through splitmix64.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  /// Next raw 64-bit value.
  uint64_t next();
  /// Uniform integer in [lo, hi]; requires lo <= hi.
  int64_t uniform_int(int64_t lo, int64_t hi);
  /// Uniform double in [0, 1).
  double uniform();
  /// Uniform float in [lo, hi).
  float uniform_float(float lo, float hi);
  /// An independent generator derived from this one (for parallel chains).
  Rng fork();
  /// Picks an index in [0, n); requires n > 0.
  size_t pick(size_t n) { return static_cast<size_t>(uniform_int(0, static_cast<int64_t>(n) - 1)); }

 private:
  uint64_t s_[4];
};

}  // namespace tensortune::support

// SPDX-License-Identifier: Apache-2.0
// Helpers of the cost model tests: lower a scheduled workload for the default CPU target, read a
// feature by name, and build measured-looking samples from real matmul schedules.
#pragma once

#include "tensortune/cost_model/cost_model.h"
#include "tensortune/cost_model/features.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/support/error.h"
#include "tensortune/support/rng.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tensortune::cost_model::testing {

inline ir::LoweredFunc lower_steps(const std::string& spec,
                                   const std::vector<schedule::Step>& steps) {
  te::Workload workload = te::make_workload(spec);
  return lower::lower(workload, schedule::Schedule{workload.key(), steps}, target::Target{});
}

inline size_t index_of(const std::vector<std::string>& names, const std::string& name) {
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) {
    throw InternalError("no feature named '" + name + "'");
  }
  return static_cast<size_t>(it - names.begin());
}

/// A feature of the program vector by name.
inline float program_feature(const ProgramFeatures& f, const std::string& name) {
  return f.vector.at(index_of(program_feature_names(), name));
}

/// A feature of a store row by name.
inline float store_feature(const StoreFeatures& row, const std::string& name) {
  return row.values.at(index_of(store_feature_names(), name));
}

inline float log_scaled(double x) {
  return static_cast<float>(std::log2(1.0 + x));
}

/// The matmul schedule family of the learning tests: tile (i, j) by (x, y), split k by z, order
/// i.o j.o k.o i.i k.i j.i, optionally vectorize j.i and parallelize i.o.
inline std::vector<schedule::Step> tiled_matmul(
    int64_t x, int64_t y, int64_t z, bool vectorize, bool parallel) {
  using schedule::Annotate;
  std::vector<schedule::Step> steps{
      schedule::Tile{"C", "i", "j", x, y}, schedule::Split{"C", "k", z, false},
      schedule::Reorder{"C", {"i.o", "j.o", "k.o", "i.i", "k.i", "j.i"}}};
  if (vectorize) {
    steps.push_back(Annotate{"C", "j.i", ir::ForKind::Vectorized});
  }
  if (parallel) {
    steps.push_back(Annotate{"C", "i.o", ir::ForKind::Parallel});
  }
  return steps;
}

/// Samples from real lowered matmul schedules in two groups (two shapes); the score is a known
/// monotone function of one structural property, the register tile size x * y:
/// log2(x * y) / 10, which is 1 for the 32 x 32 tile.
inline std::vector<Sample> tile_size_samples(size_t per_group, uint64_t seed) {
  const std::vector<int64_t> factors{1, 2, 4, 8, 16, 32};
  support::Rng rng(seed);
  std::vector<Sample> samples;
  for (const std::string spec : {"matmul:M=64,N=64,K=64", "matmul:M=32,N=128,K=64"}) {
    for (size_t n = 0; n < per_group; ++n) {
      int64_t x = factors[rng.pick(factors.size())];
      int64_t y = factors[rng.pick(factors.size())];
      int64_t z = factors[rng.pick(factors.size())];
      bool vectorize = rng.uniform() < 0.5;
      bool parallel = rng.uniform() < 0.5;
      ir::LoweredFunc f = lower_steps(spec, tiled_matmul(x, y, z, vectorize, parallel));
      float score = static_cast<float>(std::log2(static_cast<double>(x * y)) / 10.0);
      samples.push_back(Sample{spec, extract_features(f).vector, score});
    }
  }
  return samples;
}

inline std::vector<std::vector<float>> vectors_of(const std::vector<Sample>& samples) {
  std::vector<std::vector<float>> v;
  for (const Sample& s : samples) {
    v.push_back(s.features);
  }
  return v;
}

}  // namespace tensortune::cost_model::testing

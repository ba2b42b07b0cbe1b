// SPDX-License-Identifier: Apache-2.0
// Random valid schedules for property tests: random splits (non-divisors included), reorders,
// fuses, annotations, cache_write / cache_read, compute_at and compute_inline, each step kept only
// when the loop state accepts it.
#pragma once

#include "tensortune/schedule/schedule.h"
#include "tensortune/support/rng.h"
#include "tensortune/te/workload.h"

#include <vector>

namespace tensortune::testing {

struct RandomScheduleOptions {
  /// Allow GPU bindings and other steps that are legal only on some targets (off for CPU tests).
  bool gpu = false;
  /// Largest lane count chosen for vectorize.
  int max_vector_lanes = 16;
};

/// A random schedule of `workload` that applies without ScheduleError.
std::vector<schedule::Step> random_schedule(const te::Workload& workload, support::Rng& rng,
                                            const RandomScheduleOptions& options = {});

}  // namespace tensortune::testing

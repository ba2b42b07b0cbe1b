// SPDX-License-Identifier: Apache-2.0
// Counts the operations of a store statement by kind (a vector operation counts its lanes) and
// collects its loads.
#pragma once

#include "feature_layout.h"
#include "tensortune/ir/expr.h"
#include "tensortune/ir/stmt.h"

#include <array>
#include <vector>

namespace tensortune::cost_model {

struct OpCounts {
  /// Indexed by the arithmetic entries of StoreScalar (kFloatAddSub .. kCast); per execution.
  std::array<double, kNumStoreScalars> ops{};
  /// Loads in visiting order (value, then predicate, then indices).
  std::vector<const ir::Load*> loads;
  int predicated_loads = 0;
  /// Float operations per execution (add/sub, mul, div/mod, min/max, math calls; fma counts 2).
  double flops() const;
};

/// Counts everything a store evaluates: its value, predicate and indices.
OpCounts count_ops(const ir::Store& store);

}  // namespace tensortune::cost_model

// SPDX-License-Identifier: Apache-2.0
// One feature row per store statement (layout in feature_layout.h), plus the raw totals the
// program vector weighs the rows with.
#pragma once

#include "store_walker.h"
#include "tensortune/ir/stmt.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace tensortune::cost_model {

/// What a row needs to know about the whole function.
struct FunctionContext {
  const ir::LoweredFunc* func = nullptr;
  /// Store statements per stored buffer (unrolled copies show up here).
  std::unordered_map<const ir::BufferNode*, int> stores_per_buffer;
};

struct StoreRow {
  std::string buffer;
  std::vector<float> values;  ///< kNumStoreFeatures scaled values
  double flops = 0;           ///< float operations over all executions (raw)
  double executions = 0;      ///< trip count times lanes (raw)
  double bytes = 0;           ///< bytes accessed over all executions (raw)
  int lanes = 1;
};

/// The row of one store.
StoreRow store_row(const StoreSite& site, const FunctionContext& context);

/// log2(1 + x) for x >= 0 (0 for anything smaller), as float.
float log_scale(double x);

}  // namespace tensortune::cost_model

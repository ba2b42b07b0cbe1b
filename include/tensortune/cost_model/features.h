// SPDX-License-Identifier: Apache-2.0
// Features of a lowered candidate for the cost model: one row per store statement (loop structure,
// arithmetic by kind, per-buffer access patterns, allocations, intensity), and a fixed-length
// program vector built from the rows. Versioned: a model never uses features of another version.
#pragma once

#include "tensortune/ir/stmt.h"

#include <string>
#include <vector>

namespace tensortune::cost_model {

/// Bumped whenever the meaning or length of any feature changes.
inline constexpr int kFeatureVersion = 2;

/// Features of one store statement (one row).
struct StoreFeatures {
  std::string buffer;         ///< the stored buffer's name (for reports and tests)
  std::vector<float> values;  ///< store_feature_names().size() values
};

/// The features of a whole candidate.
struct ProgramFeatures {
  std::vector<StoreFeatures> stores;
  /// Fixed length (program_feature_names().size()): what the model reads.
  std::vector<float> vector;
};

const std::vector<std::string>& store_feature_names();
const std::vector<std::string>& program_feature_names();

/// Extracts the features of a flattened LoweredFunc (the IR lower::lower returns). Never throws on
/// valid IR; deterministic.
ProgramFeatures extract_features(const ir::LoweredFunc& func);

}  // namespace tensortune::cost_model

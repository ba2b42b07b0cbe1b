// SPDX-License-Identifier: Apache-2.0
// The random cost model: uniform scores from a seed, the baseline every learned model must beat.
#pragma once

#include "tensortune/cost_model/cost_model.h"

#include <cstdint>

namespace tensortune::cost_model {

class RandomModel final : public CostModel {
 public:
  explicit RandomModel(uint64_t seed) : seed_(seed) {}
  std::string name() const override { return "random"; }
  void train(const std::vector<Sample>& samples) override;
  /// Scores depend on the seed and on the number of predict() calls so far.
  std::vector<float> predict(const std::vector<std::vector<float>>& features) const override;
  bool trained() const override { return true; }

 private:
  uint64_t seed_;
  mutable uint64_t calls_ = 0;
};

}  // namespace tensortune::cost_model

// SPDX-License-Identifier: Apache-2.0
// The random model: ignores its training data; each predict() call draws from a generator seeded
// by the model's seed and the call's number, so a run is reproducible.
#include "tensortune/cost_model/random_model.h"

#include "tensortune/support/rng.h"

namespace tensortune::cost_model {

void RandomModel::train(const std::vector<Sample>& /*samples*/) {}

std::vector<float> RandomModel::predict(const std::vector<std::vector<float>>& features) const {
  // A distinct odd multiplier per call keeps consecutive calls' streams unrelated.
  support::Rng rng(seed_ ^ (0x9E3779B97F4A7C15ULL * (calls_ + 1)));
  ++calls_;
  std::vector<float> scores(features.size());
  for (float& s : scores) {
    s = static_cast<float>(rng.uniform());
  }
  return scores;
}

}  // namespace tensortune::cost_model

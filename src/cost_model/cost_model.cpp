// SPDX-License-Identifier: Apache-2.0
// The cost model interface's anchor and the two ranking metrics the models are judged by.
#include "tensortune/cost_model/cost_model.h"

#include "tensortune/support/error.h"

#include <algorithm>
#include <map>

namespace tensortune::cost_model {
namespace {

// Sample indices per group, groups in name order (so the metrics do not depend on input order).
std::map<std::string, std::vector<size_t>> by_group(const std::vector<Sample>& samples) {
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < samples.size(); ++i) {
    groups[samples[i].group].push_back(i);
  }
  return groups;
}

}  // namespace

CostModel::~CostModel() = default;

double pairwise_accuracy(const std::vector<Sample>& samples, const std::vector<float>& predicted) {
  TT_CHECK(predicted.size() == samples.size())
      << predicted.size() << " predictions for " << samples.size() << " samples";
  double pairs = 0;
  double correct = 0;
  for (const auto& [group, members] : by_group(samples)) {
    for (size_t a = 0; a < members.size(); ++a) {
      for (size_t b = a + 1; b < members.size(); ++b) {
        float actual = samples[members[a]].score - samples[members[b]].score;
        if (actual == 0.0f) {
          continue;
        }
        float guess = predicted[members[a]] - predicted[members[b]];
        pairs += 1;
        if (guess == 0.0f) {
          correct += 0.5;
        } else if ((guess > 0) == (actual > 0)) {
          correct += 1;
        }
      }
    }
  }
  return pairs > 0 ? correct / pairs : 1.0;
}

double top_k_score(const std::vector<Sample>& samples, const std::vector<float>& predicted, int k) {
  TT_CHECK(predicted.size() == samples.size())
      << predicted.size() << " predictions for " << samples.size() << " samples";
  TT_CHECK(k > 0) << "top_k_score needs k > 0, got " << k;
  double sum = 0;
  int counted = 0;
  for (auto& [group, members] : by_group(samples)) {
    float best = 0;
    for (size_t i : members) {
      best = std::max(best, samples[i].score);
    }
    if (best <= 0) {
      continue;  // only failures: nothing to find
    }
    std::stable_sort(members.begin(), members.end(),
                     [&](size_t a, size_t b) { return predicted[a] > predicted[b]; });
    float found = 0;
    for (size_t r = 0; r < members.size() && r < static_cast<size_t>(k); ++r) {
      found = std::max(found, samples[members[r]].score);
    }
    sum += found / best;
    ++counted;
  }
  return counted > 0 ? sum / counted : 1.0;
}

}  // namespace tensortune::cost_model

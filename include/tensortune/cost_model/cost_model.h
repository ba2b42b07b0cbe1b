// SPDX-License-Identifier: Apache-2.0
// The cost model interface: ranks candidates from their program feature vectors. Trained on
// measured samples; higher predictions mean faster candidates.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace tensortune::cost_model {

/// One measured candidate.
struct Sample {
  /// The ranking group: samples are only compared within a group (a workload key + target).
  std::string group;
  /// A ProgramFeatures::vector of the current feature version.
  std::vector<float> features;
  /// Throughput relative to the best candidate of the group, in [0, 1]; 0 for a failed one.
  float score = 0.0f;
};

class CostModel {
 public:
  virtual ~CostModel();
  /// "xgb", "random", ...
  virtual std::string name() const = 0;
  /// Retrains on `samples` (all samples so far, not only the new ones).
  virtual void train(const std::vector<Sample>& samples) = 0;
  /// One score per feature vector; higher is faster. Works before any training (then it is
  /// uninformative but valid).
  virtual std::vector<float> predict(const std::vector<std::vector<float>>& features) const = 0;
  /// True once train() has seen enough samples for predictions to carry information.
  virtual bool trained() const = 0;
};

/// Pairwise ranking accuracy of `predicted` against `actual` within each group: the share of
/// pairs with different actual scores that the prediction orders the same way (a tie in the
/// prediction counts one half; 1 when there is no such pair).
double pairwise_accuracy(const std::vector<Sample>& samples, const std::vector<float>& predicted);
/// Top-k peak score: per group, best actual score among the k best-predicted divided by the best
/// actual score; averaged over groups (ties in the prediction keep sample order; groups whose
/// best score is 0 are skipped; 1 when no group counts). Requires k > 0.
double top_k_score(const std::vector<Sample>& samples, const std::vector<float>& predicted, int k);

}  // namespace tensortune::cost_model

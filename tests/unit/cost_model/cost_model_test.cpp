// SPDX-License-Identifier: Apache-2.0
// The ranking metrics on small hand-computed examples.
#include "tensortune/cost_model/cost_model.h"

#include "tensortune/support/error.h"

#include <gtest/gtest.h>

namespace tensortune::cost_model {
namespace {

std::vector<Sample> scored(const std::vector<std::pair<std::string, float>>& groups_and_scores) {
  std::vector<Sample> samples;
  for (const auto& [group, score] : groups_and_scores) {
    samples.push_back(Sample{group, {}, score});
  }
  return samples;
}

TEST(PairwiseAccuracy, CountsOrderedPairsWithinGroups) {
  // Group a: (1, 2) and (1, 3) ordered right, (2, 3) wrong. Group b: no pair with different
  // scores. Group c: a predicted tie counts one half. Across groups nothing is compared.
  std::vector<Sample> samples =
      scored({{"a", 1}, {"a", 2}, {"a", 3}, {"b", 0.5f}, {"b", 0.5f}, {"c", 1}, {"c", 2}});
  std::vector<float> predicted{0.1f, 0.3f, 0.2f, 9.0f, 0.0f, 0.5f, 0.5f};
  EXPECT_DOUBLE_EQ(pairwise_accuracy(samples, predicted), 2.5 / 4.0);
}

TEST(PairwiseAccuracy, PerfectAndReversedRankings) {
  std::vector<Sample> samples = scored({{"a", 0.1f}, {"a", 0.4f}, {"a", 0.9f}});
  EXPECT_DOUBLE_EQ(pairwise_accuracy(samples, {1, 2, 3}), 1.0);
  EXPECT_DOUBLE_EQ(pairwise_accuracy(samples, {3, 2, 1}), 0.0);
  EXPECT_DOUBLE_EQ(pairwise_accuracy(scored({{"a", 1}}), {0}), 1.0);
  EXPECT_THROW(pairwise_accuracy(samples, {1, 2}), InternalError);
}

TEST(TopKScore, BestFoundAmongTheKBestPredicted) {
  // Group a, by prediction: 0.2, 0.5, 0.7, 1.0. Group b has only failures and is skipped.
  // Group c: the best is predicted first.
  std::vector<Sample> samples = scored({{"a", 0.2f},
                                        {"a", 1.0f},
                                        {"a", 0.5f},
                                        {"a", 0.7f},
                                        {"b", 0},
                                        {"b", 0},
                                        {"c", 0.5f},
                                        {"c", 0.25f}});
  std::vector<float> predicted{0.9f, 0.1f, 0.8f, 0.3f, 1, 2, 1, 0};
  EXPECT_NEAR(top_k_score(samples, predicted, 1), (0.2 + 1.0) / 2, 1e-6);
  EXPECT_NEAR(top_k_score(samples, predicted, 2), (0.5 + 1.0) / 2, 1e-6);
  EXPECT_NEAR(top_k_score(samples, predicted, 3), (0.7 + 1.0) / 2, 1e-6);
  EXPECT_NEAR(top_k_score(samples, predicted, 4), 1.0, 1e-6);
  EXPECT_NEAR(top_k_score(samples, predicted, 100), 1.0, 1e-6);
  EXPECT_THROW(top_k_score(samples, predicted, 0), InternalError);
}

TEST(TopKScore, ScoresRelativeToTheGroupBest) {
  // The best actual score 0.8 is not 1: the found 0.4 counts as half of it.
  std::vector<Sample> samples = scored({{"a", 0.4f}, {"a", 0.8f}});
  EXPECT_NEAR(top_k_score(samples, {1, 0}, 1), 0.5, 1e-6);
}

}  // namespace
}  // namespace tensortune::cost_model

// SPDX-License-Identifier: Apache-2.0
// The random model: reproducible from its seed, indifferent to training, no better than chance.
#include "tensortune/cost_model/random_model.h"

#include <gtest/gtest.h>

namespace tensortune::cost_model {
namespace {

TEST(RandomModel, SameSeedGivesTheSameScores) {
  std::vector<std::vector<float>> rows(50, std::vector<float>{1.0f});
  RandomModel a(42), b(42), c(43);
  std::vector<float> first = a.predict(rows);
  EXPECT_EQ(first, b.predict(rows));
  EXPECT_NE(first, c.predict(rows));
  // A second call draws new scores, still reproducibly.
  std::vector<float> second = a.predict(rows);
  EXPECT_NE(first, second);
  EXPECT_EQ(second, b.predict(rows));
  for (float s : first) {
    EXPECT_GE(s, 0.0f);
    EXPECT_LT(s, 1.0f);
  }
  EXPECT_TRUE(a.trained());
  EXPECT_EQ(a.name(), "random");
}

TEST(RandomModel, TrainingChangesNothing) {
  std::vector<std::vector<float>> rows(10, std::vector<float>{0.0f});
  RandomModel a(7), b(7);
  a.train({Sample{"g", {}, 1.0f}, Sample{"g", {}, 0.0f}});
  EXPECT_EQ(a.predict(rows), b.predict(rows));
}

TEST(RandomModel, RanksNoBetterThanChance) {
  // Scores 0..199 in one group: a random ranking orders about half the pairs right.
  std::vector<Sample> samples;
  for (int i = 0; i < 200; ++i) {
    samples.push_back(Sample{"g", {}, static_cast<float>(i)});
  }
  RandomModel model(3);
  double accuracy = pairwise_accuracy(samples, model.predict(std::vector<std::vector<float>>(200)));
  EXPECT_GT(accuracy, 0.4);
  EXPECT_LT(accuracy, 0.6);
}

}  // namespace
}  // namespace tensortune::cost_model

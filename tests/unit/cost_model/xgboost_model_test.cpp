// SPDX-License-Identifier: Apache-2.0
// The XGBoost model on samples from real lowered matmul schedules: it learns a ranking, is
// reproducible, survives a save/load round trip, refuses models of another feature version, and
// handles groups in any order.
#include "tensortune/cost_model/xgboost_model.h"

#include "unit/cost_model/cost_model_test_util.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace tensortune::cost_model {
namespace {

using testing::vectors_of;

// 300 samples per group, two groups; generated once (lowering 600 schedules takes a moment).
const std::vector<Sample>& all_samples() {
  static const std::vector<Sample> samples = testing::tile_size_samples(300, 11);
  return samples;
}

// A deterministic 75/25 split of all_samples().
void split(std::vector<Sample>& train, std::vector<Sample>& test) {
  support::Rng rng(5);
  for (const Sample& s : all_samples()) {
    (rng.uniform() < 0.75 ? train : test).push_back(s);
  }
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/" + name;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// 32 training samples of each group, the groups interleaved: enough to train, quick.
std::vector<Sample> small_set() {
  std::vector<Sample> train, test;
  split(train, test);
  std::vector<Sample> first, second, mixed;
  for (const Sample& s : train) {
    (s.group == train.front().group ? first : second).push_back(s);
  }
  for (size_t i = 0; i < 32; ++i) {
    mixed.push_back(first.at(i));
    mixed.push_back(second.at(i));
  }
  return mixed;
}

TEST(XGBoostModel, LearnsTheRankingOfHeldOutSchedules) {
  std::vector<Sample> train, test;
  split(train, test);
  ASSERT_GT(test.size(), 100u);
  XGBoostModel model;
  EXPECT_FALSE(model.trained());
  model.train(train);
  ASSERT_TRUE(model.trained());
  std::vector<float> predicted = model.predict(vectors_of(test));
  EXPECT_GT(pairwise_accuracy(test, predicted), 0.9);
  EXPECT_GT(top_k_score(test, predicted, 5), 0.9);
}

TEST(XGBoostModel, TransfersToAnotherWorkload) {
  // Records of one matmul shape only (another workload's, as when tuning a new one starts) rank
  // the schedules of the other shape.
  std::vector<Sample> source, target;
  for (const Sample& s : all_samples()) {
    (s.group == "matmul:M=64,N=64,K=64" ? source : target).push_back(s);
  }
  XGBoostModel model;
  model.train(source);
  EXPECT_GT(pairwise_accuracy(target, model.predict(vectors_of(target))), 0.85);
}

TEST(XGBoostModel, TrainsOnManyGroupsOfAnySize) {
  // Twelve groups (as records of many workloads), one with a single sample and one whose scores
  // are all equal; groups are only ever compared inside themselves.
  std::vector<Sample> train, test;
  split(train, test);
  for (size_t i = 0; i < train.size(); ++i) {
    train[i].group = "w" + std::to_string(i % 10);
  }
  train.push_back(Sample{"single", train.front().features, 0.3f});
  for (size_t i = 0; i < 5; ++i) {
    train.push_back(Sample{"flat", train[i].features, 0.5f});
  }
  XGBoostModel model;
  model.train(train);
  ASSERT_TRUE(model.trained());
  EXPECT_GT(pairwise_accuracy(test, model.predict(vectors_of(test))), 0.9);
}

TEST(XGBoostModel, SameDataAndSeedGiveTheSameModel) {
  XGBoostModel a, b;
  a.train(small_set());
  b.train(small_set());
  std::vector<std::vector<float>> rows = vectors_of(all_samples());
  EXPECT_EQ(a.predict(rows), b.predict(rows));
}

TEST(XGBoostModel, GroupOrderOfTheInputDoesNotMatter) {
  // The same samples, once with the groups interleaved and once grouped.
  std::vector<Sample> interleaved = small_set();
  std::vector<Sample> grouped;
  for (const char* group : {"matmul:M=32,N=128,K=64", "matmul:M=64,N=64,K=64"}) {
    for (const Sample& s : interleaved) {
      if (s.group == group) {
        grouped.push_back(s);
      }
    }
  }
  ASSERT_EQ(grouped.size(), interleaved.size());
  ASSERT_NE(interleaved.front().group, interleaved.back().group);
  XGBoostModel a, b;
  a.train(interleaved);
  b.train(grouped);
  std::vector<std::vector<float>> rows = vectors_of(all_samples());
  EXPECT_EQ(a.predict(rows), b.predict(rows));
}

TEST(XGBoostModel, SaveAndLoadGiveIdenticalPredictions) {
  XGBoostModel model;
  model.train(small_set());
  std::string path = temp_path("tt_cost_model_roundtrip.json");
  model.save(path);
  std::unique_ptr<XGBoostModel> loaded = XGBoostModel::load(path);
  EXPECT_TRUE(loaded->trained());
  std::vector<std::vector<float>> rows = vectors_of(all_samples());
  EXPECT_EQ(loaded->predict(rows), model.predict(rows));
  std::remove(path.c_str());
}

TEST(XGBoostModel, LoadRefusesAnotherFeatureVersion) {
  XGBoostModel model;
  model.train(small_set());
  std::string path = temp_path("tt_cost_model_version.json");
  model.save(path);
  // Tamper with the version attribute inside XGBoost's JSON model.
  std::string text = read_file(path);
  size_t key = text.find("\"tt_feature_version\"");
  ASSERT_NE(key, std::string::npos);
  size_t open = text.find('"', text.find(':', key) + 1);
  size_t close = text.find('"', open + 1);
  text.replace(open + 1, close - open - 1, "999");
  write_file(path, text);
  try {
    XGBoostModel::load(path);
    FAIL() << "a model of feature version 999 was loaded";
  } catch (const UserError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("feature version 999"), std::string::npos) << message;
    EXPECT_NE(message.find("feature version " + std::to_string(kFeatureVersion)), std::string::npos)
        << message;
    EXPECT_NE(message.find(path), std::string::npos) << message;
  }
  std::remove(path.c_str());
}

TEST(XGBoostModel, LoadRefusesFilesThatAreNotModels) {
  std::string path = temp_path("tt_cost_model_garbage.json");
  write_file(path, "this is not a model");
  EXPECT_THROW(XGBoostModel::load(path), UserError);
  std::remove(path.c_str());
  EXPECT_THROW(XGBoostModel::load(temp_path("tt_cost_model_missing.json")), UserError);
}

TEST(XGBoostModel, UntrainedModelPredictsZerosAndCannotBeSaved) {
  XGBoostModel model;
  std::vector<float> scores = model.predict(vectors_of(small_set()));
  EXPECT_EQ(scores, std::vector<float>(64, 0.0f));
  EXPECT_TRUE(model.predict({}).empty());
  EXPECT_THROW(model.save(temp_path("tt_cost_model_untrained.json")), UserError);
}

TEST(XGBoostModel, StaysUntrainedWithoutEnoughSignal) {
  std::vector<Sample> few = small_set();
  few.resize(10);  // below min_samples = 16
  XGBoostModel model;
  model.train(few);
  EXPECT_FALSE(model.trained());
  std::vector<Sample> flat = small_set();
  for (Sample& s : flat) {
    s.score = 0.5f;  // no group has two different scores
  }
  model.train(flat);
  EXPECT_FALSE(model.trained());
}

TEST(XGBoostModel, RejectsVectorsOfTheWrongLength) {
  XGBoostModel model;
  std::vector<Sample> bad = small_set();
  bad[3].features.pop_back();
  EXPECT_THROW(model.train(bad), UserError);
  EXPECT_THROW(model.predict({{1.0f, 2.0f}}), UserError);
}

TEST(XGBoostModel, RegressionObjectiveAlsoRanks) {
  XGBoostOptions options;
  options.objective = "reg:squarederror";
  XGBoostModel model(options);
  std::vector<Sample> train, test;
  split(train, test);
  model.train(train);
  EXPECT_GT(pairwise_accuracy(test, model.predict(vectors_of(test))), 0.9);
  options.objective = "rank:ndcg@3";
  EXPECT_THROW(XGBoostModel{options}, UserError);
}

}  // namespace
}  // namespace tensortune::cost_model

// SPDX-License-Identifier: Apache-2.0
// The operations on a schedule space: size, sampling, grid enumeration, neighbours, mutation,
// crossover, the JSON form of a configuration and its errors, determinism, the split-factor
// choices behind the split knobs, and the candidate evaluator's parallel batch evaluation.
#include "tensortune/search/search_space.h"

#include "search/sketch/split_factors.h"
#include "tensortune/search/evolutionary_search.h"
#include "tensortune/support/error.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace tensortune::search {
namespace {

SearchSpace space_of(const std::string& spec) {
  return SearchSpace::generate(te::make_workload(spec), target::Target{});
}

double knob_product(const Sketch& sketch) {
  double n = 1;
  for (const Knob& k : sketch.knobs) {
    n *= static_cast<double>(k.choices.size());
  }
  return n;
}

TEST(SearchSpace, SizeIsTheSumOverSketchesOfTheKnobProducts) {
  for (const char* spec : {"relu:M=5,N=3", "matmul:M=8,N=16,K=4", "softmax:M=3,N=10"}) {
    SearchSpace space = space_of(spec);
    double expected = 0;
    for (const Sketch& s : space.sketches()) {
      expected += knob_product(s);
    }
    EXPECT_EQ(space.size(), expected) << spec;
    EXPECT_GT(space.size(), 1) << spec;
  }
  // relu: vector length {1, 2, 4} x parallel {0, 1, 2} x unroll {0, 16, 64, 512}.
  EXPECT_EQ(space_of("relu:M=5,N=3").size(), 36);
}

TEST(SearchSpace, SamplesAreRoughlyUniform) {
  SearchSpace relu = space_of("relu:M=5,N=3");
  support::Rng rng(3);
  std::map<Config, int> counts;
  for (int n = 0; n < 36000; ++n) {
    ++counts[relu.sample(rng)];
  }
  ASSERT_EQ(counts.size(), 36u);
  for (const auto& [config, count] : counts) {
    EXPECT_NEAR(count, 1000, 200) << relu.describe(config);
  }
  SearchSpace softmax = space_of("softmax:M=3,N=10");
  ASSERT_EQ(softmax.sketches().size(), 2u);
  int first = 0;
  for (int n = 0; n < 4000; ++n) {
    first += softmax.sample(rng).sketch == 0 ? 1 : 0;
  }
  EXPECT_NEAR(first, 2000, 200);
}

TEST(SearchSpace, SampledSplitsHaveUniformInnermostFactors) {
  SearchSpace mm = space_of("matmul:M=1024,N=1024,K=1024");
  const Sketch& tile = mm.sketches()[0];
  size_t knob = 0;
  while (knob < tile.knobs.size() && tile.knobs[knob].name != "C.i.split")
    ++knob;
  ASSERT_LT(knob, tile.knobs.size());
  std::set<int64_t> distinct;
  for (const std::vector<int64_t>& c : tile.knobs[knob].choices)
    distinct.insert(c.back());
  ASSERT_EQ(distinct.size(), 7u);  // 1, 2, 4, ..., 64
  support::Rng rng(5);
  std::map<int64_t, int> innermost;
  std::set<std::vector<int64_t>> tuples;
  int n = 0;
  while (n < 7000) {
    Config c = mm.sample(rng);
    if (c.sketch != 0)
      continue;
    ++n;
    const std::vector<int64_t>& t = tile.knobs[knob].choices[static_cast<size_t>(c.choice[knob])];
    ++innermost[t.back()];
    tuples.insert(t);
  }
  for (const auto& [factor, count] : innermost)
    EXPECT_NEAR(count, 1000, 150) << factor;
  EXPECT_GT(tuples.size(), 200u);  // and every tuple is still reachable
}

TEST(SearchSpace, EnumerateWalksTheGridInOrderFromAnOffset) {
  SearchSpace relu = space_of("relu:M=5,N=3");
  std::vector<Config> all = relu.enumerate(0, 1000);
  ASSERT_EQ(all.size(), 36u);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));  // last knob fastest
  EXPECT_EQ(std::set<Config>(all.begin(), all.end()).size(), 36u);
  std::vector<Config> middle = relu.enumerate(5, 3);
  EXPECT_EQ(middle, std::vector<Config>(all.begin() + 5, all.begin() + 8));
  EXPECT_EQ(relu.enumerate(34, 10).size(), 2u);
  EXPECT_TRUE(relu.enumerate(36, 5).empty());
  EXPECT_TRUE(relu.enumerate(0, 0).empty());

  SearchSpace softmax = space_of("softmax:M=3,N=10");
  double first = knob_product(softmax.sketches()[0]);
  std::vector<Config> across = softmax.enumerate(first - 1, 2);
  ASSERT_EQ(across.size(), 2u);
  EXPECT_EQ(across[0].sketch, 0);
  for (size_t k = 0; k < across[0].choice.size(); ++k) {
    EXPECT_EQ(across[0].choice[k],
              static_cast<int>(softmax.sketches()[0].knobs[k].choices.size()) - 1);
  }
  EXPECT_EQ(across[1], (Config{1, std::vector<int>(softmax.sketches()[1].knobs.size(), 0)}));
}

/// Knobs on which `a` and `b` differ (same sketch).
std::vector<size_t> differing(const Config& a, const Config& b) {
  std::vector<size_t> out;
  for (size_t k = 0; k < a.choice.size(); ++k) {
    if (a.choice[k] != b.choice[k]) {
      out.push_back(k);
    }
  }
  return out;
}

TEST(SearchSpace, NeighboursMoveOneKnobToAnAdjacentChoice) {
  SearchSpace space = space_of("matmul:M=24,N=32,K=12");
  support::Rng rng(5);
  for (int n = 0; n < 20; ++n) {
    Config config = space.sample(rng);
    std::vector<Config> near = space.neighbours(config);
    size_t expected = 0;
    const Sketch& sketch = space.sketches()[static_cast<size_t>(config.sketch)];
    for (size_t k = 0; k < sketch.knobs.size(); ++k) {
      int c = config.choice[k];
      expected +=
          (c > 0 ? 1 : 0) + (c + 1 < static_cast<int>(sketch.knobs[k].choices.size()) ? 1 : 0);
    }
    EXPECT_EQ(near.size(), expected);
    EXPECT_EQ(std::set<Config>(near.begin(), near.end()).size(), near.size());
    for (const Config& other : near) {
      ASSERT_EQ(other.sketch, config.sketch);
      std::vector<size_t> diff = differing(config, other);
      ASSERT_EQ(diff.size(), 1u);
      EXPECT_EQ(std::abs(other.choice[diff[0]] - config.choice[diff[0]]), 1);
    }
  }
}

TEST(SearchSpace, MutateChangesOneOrTwoKnobsAndStaysInTheSpace) {
  SearchSpace space = space_of("matmul:M=64,N=64,K=32");
  support::Rng rng(7);
  int factor_moves = 0;
  for (int n = 0; n < 500; ++n) {
    Config config = space.sample(rng);
    Config next = space.mutate(config, rng);
    ASSERT_NE(next, config);
    ASSERT_EQ(next.sketch, config.sketch);
    std::vector<size_t> diff = differing(config, next);
    EXPECT_LE(diff.size(), 3u);
    EXPECT_FALSE(space.steps(next).empty());  // in range, or steps() would throw
    const Sketch& sketch = space.sketches()[static_cast<size_t>(config.sketch)];
    if (diff.size() == 1 && sketch.knobs[diff[0]].kind == KnobKind::Split) {
      const auto& from = sketch.knobs[diff[0]].choices[static_cast<size_t>(config.choice[diff[0]])];
      const auto& to = sketch.knobs[diff[0]].choices[static_cast<size_t>(next.choice[diff[0]])];
      int64_t p_from = 1, p_to = 1;
      for (size_t l = 0; l < from.size(); ++l) {
        p_from *= from[l];
        p_to *= to[l];
      }
      // A factor moved between inner levels keeps the product; one moved to or from the outer
      // level changes it by a prime.
      factor_moves += p_from == p_to || p_from % p_to == 0 || p_to % p_from == 0 ? 1 : 0;
    }
  }
  EXPECT_GT(factor_moves, 50);
}

TEST(SearchSpace, MutationAndSamplingAreDeterministicForASeed) {
  SearchSpace space = space_of("dense:M=16,N=24,K=8,bias=1,epilogue=relu");
  support::Rng a(11);
  support::Rng b(11);
  for (int n = 0; n < 50; ++n) {
    Config x = space.sample(a);
    ASSERT_EQ(x, space.sample(b));
    ASSERT_EQ(space.mutate(x, a), space.mutate(x, b));
  }
  SearchSpace again = space_of("dense:M=16,N=24,K=8,bias=1,epilogue=relu");
  ASSERT_EQ(again.sketches().size(), space.sketches().size());
  for (size_t s = 0; s < space.sketches().size(); ++s) {
    EXPECT_EQ(again.sketches()[s].name, space.sketches()[s].name);
    ASSERT_EQ(again.sketches()[s].knobs.size(), space.sketches()[s].knobs.size());
    for (size_t k = 0; k < space.sketches()[s].knobs.size(); ++k) {
      EXPECT_EQ(again.sketches()[s].knobs[k].name, space.sketches()[s].knobs[k].name);
      EXPECT_EQ(again.sketches()[s].knobs[k].choices, space.sketches()[s].knobs[k].choices);
    }
  }
}

TEST(SearchSpace, CrossoverTakesEveryKnobFromOneParent) {
  SearchSpace space = space_of("matmul:M=64,N=64,K=32");
  support::Rng rng(13);
  bool mixed = false;
  for (int n = 0; n < 50; ++n) {
    Config a = space.sample(rng);
    Config b = a;
    for (size_t k = 0; k < b.choice.size(); ++k) {
      b.choice[k] = static_cast<int>(
          rng.pick(space.sketches()[static_cast<size_t>(a.sketch)].knobs[k].choices.size()));
    }
    Config child = space.crossover(a, b, rng);
    ASSERT_EQ(child.sketch, a.sketch);
    for (size_t k = 0; k < child.choice.size(); ++k) {
      EXPECT_TRUE(child.choice[k] == a.choice[k] || child.choice[k] == b.choice[k]);
    }
    mixed = mixed || (child != a && child != b);
  }
  EXPECT_TRUE(mixed);
  Config a{0, std::vector<int>(space.sketches()[0].knobs.size(), 0)};
  Config b{1, std::vector<int>(space.sketches()[1].knobs.size(), 0)};
  EXPECT_EQ(space.crossover(a, b, rng), a);
}

TEST(SearchSpace, JsonRoundTripsAndKeysIdentifyConfigurations) {
  SearchSpace space = space_of("conv2d:N=1,C=4,H=6,W=6,K=8,R=3,S=3,pad=1");
  support::Rng rng(17);
  std::map<std::string, Config> by_key;
  for (int n = 0; n < 100; ++n) {
    Config config = space.sample(rng);
    support::Json json = space.to_json(config);
    EXPECT_EQ(json.at("sketch").as_string(),
              space.sketches()[static_cast<size_t>(config.sketch)].name);
    EXPECT_EQ(space.from_json(support::Json::parse(json.dump())), config);
    std::string key = space.key(config);
    EXPECT_EQ(key, space.key(Config(config)));
    auto [it, fresh] = by_key.emplace(key, config);
    EXPECT_TRUE(fresh || it->second == config) << key;
  }
  EXPECT_GT(by_key.size(), 90u);
}

TEST(SearchSpace, NearestMapsAConfigurationOfAnotherShapeIntoThisSpace) {
  SearchSpace from = space_of("matmul:M=1024,N=1024,K=1024");
  SearchSpace to = space_of("matmul:M=768,N=1024,K=512");
  support::Rng rng(5);
  int exact_n_split = 0;
  for (int n = 0; n < 50; ++n) {
    const Config config = from.sample(rng);
    // Its own space gives it back unchanged.
    EXPECT_EQ(from.nearest(from.to_json(config)), config);
    const support::Json json = from.to_json(config);
    std::optional<Config> mapped = to.nearest(json);
    ASSERT_TRUE(mapped.has_value());
    const Sketch& sketch = to.sketches()[static_cast<size_t>(mapped->sketch)];
    EXPECT_EQ(sketch.name, json.at("sketch").as_string());
    ASSERT_EQ(mapped->choice.size(), sketch.knobs.size());
    support::Json back = to.to_json(*mapped);
    EXPECT_EQ(to.from_json(back), *mapped);  // a real configuration of the new space
    for (const Knob& k : sketch.knobs) {
      // N is 1024 in both shapes: every j split is a choice of the new space, so it is kept.
      if (k.name == "C.j.split") {
        exact_n_split += back.at("knobs").at(k.name).dump() == json.at("knobs").at(k.name).dump();
      }
    }
  }
  EXPECT_EQ(exact_n_split, 50);
  EXPECT_FALSE(to.nearest(support::Json::parse(R"({"sketch": "nope", "knobs": {}})")).has_value());
  EXPECT_FALSE(to.nearest(support::Json::parse("[1, 2]")).has_value());
}

std::string user_error_of(const SearchSpace& space, const std::string& text) {
  try {
    space.from_json(support::Json::parse(text));
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SearchSpace, FromJsonRejectsUnknownSketchesKnobsAndValues) {
  SearchSpace space = space_of("relu:M=5,N=3");
  support::Json good = space.to_json(space.enumerate(0, 1)[0]);
  EXPECT_EQ(
      good.dump(),
      R"({"knobs":{"relu.parallel":[0],"relu.unroll":[0],"relu.vector":[1]},"sketch":"generic"})");
  EXPECT_NE(
      user_error_of(space, R"({"sketch":"C:tile","knobs":{}})").find("unknown sketch 'C:tile'"),
      std::string::npos);
  std::string unknown = user_error_of(
      space,
      R"({"sketch":"generic","knobs":{"relu.parallel":[0],"relu.unroll":[0],"relu.vector":[1],"relu.x":[1]}})");
  EXPECT_NE(unknown.find("has no knob 'relu.x'"), std::string::npos) << unknown;
  std::string bad_value = user_error_of(
      space,
      R"({"sketch":"generic","knobs":{"relu.parallel":[0],"relu.unroll":[7],"relu.vector":[1]}})");
  EXPECT_NE(bad_value.find("value 7 of knob 'relu.unroll' is not one of its 4 choices"),
            std::string::npos)
      << bad_value;
  std::string missing = user_error_of(
      space, R"({"sketch":"generic","knobs":{"relu.parallel":[0],"relu.unroll":[0]}})");
  EXPECT_NE(missing.find("knob 'relu.vector' of sketch 'generic' is missing"), std::string::npos)
      << missing;
  EXPECT_NE(user_error_of(space, R"({"knobs":{}})").find("sketch"), std::string::npos);
}

TEST(SearchSpace, DescribeIsOneLineWithTheSketchAndEveryKnob) {
  SearchSpace space = space_of("matmul:M=64,N=64,K=32");
  Config config = space.enumerate(0, 1)[0];
  std::string text = space.describe(config);
  EXPECT_EQ(text.rfind("C:tile ", 0), 0u) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos);
  for (const Knob& k : space.sketches()[0].knobs) {
    EXPECT_NE(text.find(" " + k.name + "="), std::string::npos) << text;
  }
  EXPECT_NE(text.find("C.i.split=[1,1,1]"), std::string::npos) << text;
}

TEST(SearchSpace, OutOfRangeConfigurationIsAnInternalError) {
  SearchSpace space = space_of("relu:M=5,N=3");
  EXPECT_THROW(space.steps(Config{3, {0, 0, 0}}), InternalError);
  EXPECT_THROW(space.steps(Config{0, {0, 9, 0}}), InternalError);
  EXPECT_THROW(space.neighbours(Config{0, {0}}), InternalError);
}

TEST(SplitFactors, ChoicesAreOrderedFactorizationsWithABoundedInnermostFactor) {
  auto choices = detail::split_choices(1024, 3);
  EXPECT_TRUE(std::is_sorted(choices.begin(), choices.end()));
  EXPECT_EQ(std::set<std::vector<int64_t>>(choices.begin(), choices.end()).size(), choices.size());
  for (const auto& c : choices) {
    ASSERT_EQ(c.size(), 3u);
    EXPECT_EQ(1024 % (c[0] * c[1] * c[2]), 0);
    EXPECT_LE(c[2], detail::kMaxInnermostFactor);
  }
  EXPECT_NE(std::find(choices.begin(), choices.end(), std::vector<int64_t>{1, 8, 4}),
            choices.end());
  EXPECT_EQ(std::find(choices.begin(), choices.end(), std::vector<int64_t>{1, 1, 128}),
            choices.end());
  auto k = detail::split_choices(1024, 1, detail::kMaxReductionFactor);
  EXPECT_EQ(k.size(), 10u);  // 1, 2, 4, ..., 512
  EXPECT_EQ(detail::split_choices(1, 3), (std::vector<std::vector<int64_t>>{{1, 1, 1}}));
  EXPECT_EQ(detail::split_choices(7, 0), (std::vector<std::vector<int64_t>>{{}}));
}

TEST(SplitFactors, AwkwardExtentsAlsoGetNonDividingVectorFriendlyFactors) {
  for (int64_t extent : {257, 513, 1000}) {
    auto choices = detail::split_choices(extent, 3);
    bool has16 = false;
    for (const auto& c : choices) {
      int64_t p = c[0] * c[1] * c[2];
      bool from_rounding = (extent + 15) / 16 * 16 % p == 0 || (extent + 63) / 64 * 64 % p == 0;
      EXPECT_TRUE(extent % p == 0 || from_rounding) << extent;
      has16 = has16 || c[2] == 16;
    }
    EXPECT_TRUE(has16) << extent;
  }
  // A multiple of 16 gets its own divisors only.
  for (const auto& c : detail::split_choices(48, 2)) {
    EXPECT_EQ(48 % (c[0] * c[1]), 0);
  }
}

TEST(SplitFactors, AVectorAxisOfAnOddNumberOfVectorsAlsoGetsWiderTiles) {
  // 208 = 13 x 16: its own divisors hold one 16-lane vector (16) or all thirteen (208, past the
  // innermost bound). As the vector axis of blocked inputs it also splits by 32 and 64 with a
  // guarded tail, as if it were 256.
  auto innermost = [](const std::vector<std::vector<int64_t>>& choices) {
    std::set<int64_t> out;
    for (const auto& c : choices)
      out.insert(c.back());
    return out;
  };
  const auto plain = innermost(detail::split_choices(208, 3));
  EXPECT_EQ(plain.count(32), 0u);
  const auto vector = detail::split_choices(208, 3, detail::kMaxInnermostFactor, 16);
  const auto widths = innermost(vector);
  EXPECT_EQ(widths.count(16), 1u);
  EXPECT_EQ(widths.count(32), 1u);
  EXPECT_EQ(widths.count(64), 1u);
  for (const auto& c : vector)
    EXPECT_TRUE(208 % (c[0] * c[1] * c[2]) == 0 || 256 % (c[0] * c[1] * c[2]) == 0);
  // An even number of vectors, or a vector axis narrower than two vectors, is left alone.
  EXPECT_EQ(detail::split_choices(256, 3, detail::kMaxInnermostFactor, 16),
            detail::split_choices(256, 3));
  EXPECT_EQ(detail::split_choices(208, 3, detail::kMaxInnermostFactor, 8),
            detail::split_choices(208, 3));
  EXPECT_EQ(detail::split_choices(16, 3, detail::kMaxInnermostFactor, 16),
            detail::split_choices(16, 3));
}

TEST(SplitFactors, ChoiceListsStayBounded) {
  auto choices = detail::split_choices(int64_t{1} << 20, 3);
  EXPECT_LE(choices.size(), detail::kMaxSplitChoices);
  EXPECT_EQ(choices.front(), (std::vector<int64_t>{1, 1, 1}));
}

TEST(SplitFactors, VectorChoicesArePowersOfTwoUpToTwiceTheExtent) {
  EXPECT_EQ(detail::vector_choices(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(detail::vector_choices(3), (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(detail::vector_choices(1000), (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64}));
}

TEST(SplitFactors, MovingAFactorKeepsTheOtherLevels) {
  auto choices = detail::split_choices(256, 3);
  auto from = std::find(choices.begin(), choices.end(), std::vector<int64_t>{2, 4, 8});
  ASSERT_NE(from, choices.end());
  support::Rng rng(19);
  for (int n = 0; n < 100; ++n) {
    int moved = detail::move_split_factor(choices, static_cast<int>(from - choices.begin()), rng);
    ASSERT_GE(moved, 0);
    const auto& to = choices[static_cast<size_t>(moved)];
    int same = 0;
    for (size_t l = 0; l < 3; ++l) {
      same += to[l] == (*from)[l] ? 1 : 0;
      EXPECT_TRUE(to[l] == (*from)[l] || to[l] == 2 * (*from)[l] || 2 * to[l] == (*from)[l]);
    }
    EXPECT_GE(same, 1);
    EXPECT_LE(same, 2);
  }
}

TEST(CandidateEvaluator, ParallelBatchEvaluationGivesTheFeaturesOfSerialEvaluation) {
  te::Workload w = te::make_workload("conv2d:N=1,C=3,H=7,W=6,K=8,R=3,S=3,pad=1");
  SearchSpace space = SearchSpace::generate(w, target::Target{});
  support::Rng rng(3);
  std::vector<Config> configs;
  for (int n = 0; n < 40; ++n) {
    configs.push_back(space.sample(rng));
  }
  configs.push_back(configs.front());  // a duplicate is evaluated once
  CandidateEvaluator serial(w, space, target::Target{});
  serial.set_threads(1);
  CandidateEvaluator parallel(w, space, target::Target{});
  parallel.set_threads(4);
  const std::vector<const std::vector<float>*> batch = parallel.features(configs);
  ASSERT_EQ(batch.size(), configs.size());
  EXPECT_EQ(batch.front(), batch.back());  // the duplicate
  EXPECT_EQ(parallel.evaluated(), 40);
  int valid = 0;
  for (const Config& c : configs) {
    const std::vector<float>* a = serial.features(c);
    const std::vector<float>* b = parallel.features(c);
    ASSERT_EQ(a == nullptr, b == nullptr) << space.describe(c);
    if (a != nullptr) {
      ++valid;
      EXPECT_EQ(*a, *b) << space.describe(c);
    }
  }
  EXPECT_GT(valid, 30);
  EXPECT_EQ(parallel.evaluated(), 40);  // everything came from the cache
  EXPECT_EQ(parallel.invalid(), serial.invalid());
}

TEST(CandidateEvaluator, TheCacheStaysWithinItsLimitAndGivesTheSameFeaturesAfterEmptying) {
  te::Workload w = te::make_workload("matmul:M=32,N=32,K=32");
  SearchSpace space = SearchSpace::generate(w, target::Target{});
  support::Rng rng(5);
  std::vector<Config> configs;
  for (int n = 0; n < 30; ++n) {
    configs.push_back(space.sample(rng));
  }
  CandidateEvaluator evaluator(w, space, target::Target{});
  evaluator.set_cache_limit(12);
  std::vector<std::optional<std::vector<float>>> first;
  for (size_t i = 0; i < 10; ++i) {
    const std::vector<float>* f = evaluator.features(configs[i]);
    first.push_back(f ? std::optional<std::vector<float>>(*f) : std::nullopt);
  }
  EXPECT_EQ(evaluator.cached(), 10U);
  // A batch of 8 would take it to 18: the cache is emptied first, then holds the batch.
  const std::vector<const std::vector<float>*> batch =
      evaluator.features(std::vector<Config>(configs.begin() + 10, configs.begin() + 18));
  EXPECT_EQ(batch.size(), 8U);
  EXPECT_EQ(evaluator.cached(), 8U);
  for (size_t i = 0; i < 10; ++i) {  // evaluated again, alike
    const std::vector<float>* f = evaluator.features(configs[i]);
    ASSERT_EQ(f == nullptr, !first[i].has_value()) << space.describe(configs[i]);
    if (f != nullptr) {
      EXPECT_EQ(*f, *first[i]);
    }
    EXPECT_LE(evaluator.cached(), 12U);
  }
  EXPECT_GE(evaluator.evaluated(), 28);
}

}  // namespace
}  // namespace tensortune::search

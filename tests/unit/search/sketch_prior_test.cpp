// SPDX-License-Identifier: Apache-2.0
// The sketch rules' prior (SearchSpace::prior) and sampling from it: the hand-written kernel's
// choices score 1, each thing a kernel writer avoids (scalar loops, spilled or latency-bound
// register tiles, a tile loop left rolled, one idle core) scores lower, and plausible samples are
// more plausible than uniform ones while every sketch stays reachable; weigh_by_prior lets the
// prior steer the model-guided picks.
#include "search/sketch/rules.h"
#include "search_test_util.h"
#include "tensortune/ir/ops.h"
#include "tensortune/search/evolutionary_search.h"
#include "tensortune/search/search_space.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

namespace tensortune::search {
namespace {

/// Two cores with 16-lane float vectors and 32 registers (AVX-512), as on the project's machines.
target::Target two_core_avx512() {
  target::Target t;
  t.vector_bits = 512;
  t.cores = 2;
  return t;
}

using Knobs = std::map<std::string, std::vector<int64_t>>;

/// The configuration of sketch `sketch` with every knob's value given in `knobs`.
Config config_of(const SearchSpace& space, const std::string& sketch, const Knobs& knobs) {
  support::Json json = support::Json::object();
  json["sketch"] = support::Json(sketch);
  support::Json values = support::Json::object();
  for (const auto& [k, v] : knobs) {
    support::Json list = support::Json::array();
    for (int64_t x : v)
      list.push_back(support::Json(x));
    values[k] = std::move(list);
  }
  json["knobs"] = std::move(values);
  return space.from_json(json);
}

/// The matmul 1024³ configuration of the hand-written kernel (4x64 register tile, k by 128,
/// panel loop parallel), with `overrides` ({knob, value}) replacing some knobs.
Config matmul_config(const SearchSpace& space, const Knobs& overrides) {
  Knobs knobs = {{"C.i.split", {1, 8, 4}}, {"C.j.split", {1, 1, 64}}, {"C.k.split", {128}},
                 {"C.order", {1}},         {"C.parallel", {1}},       {"C.unroll", {16}},
                 {"B.local.at", {1}}};
  for (const auto& [k, v] : overrides)
    knobs[k] = v;
  return config_of(space, "C:tile", knobs);
}

TEST(SketchPrior, TheHandWrittenMatmulKernelIsFullyPlausible) {
  SearchSpace space =
      SearchSpace::generate(te::make_workload("matmul:M=1024,N=1024,K=1024"), two_core_avx512());
  EXPECT_DOUBLE_EQ(space.prior(matmul_config(space, {})), 1.0);
}

TEST(SketchPrior, EachThingAKernelWriterAvoidsLowersThePrior) {
  SearchSpace space =
      SearchSpace::generate(te::make_workload("matmul:M=1024,N=1024,K=1024"), two_core_avx512());
  const std::map<std::string, std::map<std::string, std::vector<int64_t>>> worse = {
      {"scalar inner loop", {{"C.j.split", {1, 64, 1}}}},
      {"narrow vectors", {{"C.j.split", {1, 16, 4}}}},
      {"spilling tile (32x4 vectors)", {{"C.i.split", {1, 1, 32}}, {"C.unroll", {512}}}},
      {"latency-bound tile (1x1 vector)", {{"C.i.split", {1, 4, 1}}, {"C.j.split", {1, 4, 16}}}},
      {"tile rows left rolled", {{"C.unroll", {0}}}},
      {"serial", {{"C.parallel", {0}}}},
  };
  const double best = space.prior(matmul_config(space, {}));
  for (const auto& [what, overrides] : worse) {
    const double p = space.prior(matmul_config(space, overrides));
    EXPECT_GT(p, 0.0) << what;
    EXPECT_LE(p, 0.6 * best) << what;
  }
  // Worse in two ways is worse than in one.
  EXPECT_LT(space.prior(matmul_config(space, {{"C.parallel", {0}}, {"C.unroll", {0}}})),
            space.prior(matmul_config(space, {{"C.parallel", {0}}})));
}

TEST(SketchPrior, ATileThatLoadsLessThanOneValuePerFmaIsPreferred) {
  // AVX2: 8 lanes, 16 registers. Per step of k a tile of r rows and c vectors loads r broadcasts
  // of A and c vectors of B for r * c FMAs; every tile below fits the registers.
  target::Target avx2 = two_core_avx512();
  avx2.vector_bits = 256;
  SearchSpace space = SearchSpace::generate(te::make_workload("matmul:M=1024,N=1024,K=1024"), avx2);
  auto tile = [&](int64_t rows, int64_t vectors) {
    return space.prior(matmul_config(space, {{"C.i.split", {1, 32 / rows, rows}},
                                             {"C.j.split", {1, 8 / vectors, 8 * vectors}}}));
  };
  EXPECT_DOUBLE_EQ(tile(4, 2), 1.0);  // 6 loads for 8 FMAs
  EXPECT_DOUBLE_EQ(tile(2, 4), 1.0);
  EXPECT_LT(tile(2, 2), tile(4, 2));  // 4 for 4
  EXPECT_LT(tile(8, 1), tile(2, 2));  // 9 for 8
  EXPECT_LT(tile(4, 1), tile(2, 2));  // 5 for 4
  // Batches in the tile load their own A and B: two batches of 4x1 load 10 values for 8 FMAs.
  SearchSpace batched =
      SearchSpace::generate(te::make_workload("batch_matmul:B=12,M=128,N=128,K=64"), avx2);
  auto batch_tile = [&](int64_t batches, int64_t rows, int64_t vectors) {
    return batched.prior(config_of(batched, "C:tile+cache_write@S2",
                                   {{"B.local.at", {0}},
                                    {"C.b.split", {1, 1, batches}},
                                    {"C.i.split", {1, 32 / rows, rows}},
                                    {"C.j.split", {1, 8 / vectors, 8 * vectors}},
                                    {"C.k.split", {4}},
                                    {"C.order", {0}},
                                    {"C.parallel", {2}},
                                    {"C.unroll", {64}}}));
  };
  EXPECT_DOUBLE_EQ(batch_tile(1, 4, 2), 1.0);
  EXPECT_DOUBLE_EQ(batch_tile(2, 4, 1), tile(4, 1));
  EXPECT_LT(batch_tile(1, 8, 1), batch_tile(1, 4, 2));
}

TEST(SketchPrior, VectorLanesThatGatherCostAQuarterOfThePrior) {
  // Two convs with the same output and loops: stride 1 reads x's lanes as one vector, stride 2
  // gathers them (x * 2 + rx). Every configuration of the same knobs with vectors over x is a
  // quarter as plausible in the second; a scalar one is as plausible.
  const SearchSpace dense = SearchSpace::generate(
      te::make_workload("conv2d:N=1,C=8,H=16,W=16,K=32,R=3,S=3,stride=1,pad=1"), two_core_avx512());
  const SearchSpace strided = SearchSpace::generate(
      te::make_workload("conv2d:N=1,C=8,H=32,W=32,K=32,R=3,S=3,stride=2,pad=1"), two_core_avx512());
  support::Rng rng(5);
  int vectorized = 0, scalar = 0;
  for (int i = 0; i < 200; ++i) {
    const Config c = dense.sample(rng);
    const support::Json json = dense.to_json(c);
    if (json.at("sketch").as_string().find("vec(") != std::string::npos)
      continue;  // vectors over the output channels: no gather in either
    const Config same = strided.from_json(json);
    const int64_t lanes = json.at("knobs").at("conv.x.split").as_array().back().as_int();
    const double ratio = strided.prior(same) / dense.prior(c);
    if (lanes > 1) {
      EXPECT_NEAR(ratio, 0.25, 1e-9) << dense.describe(c);
      ++vectorized;
    } else {
      EXPECT_NEAR(ratio, 1.0, 1e-9) << dense.describe(c);
      ++scalar;
    }
  }
  EXPECT_GT(vectorized, 0);
  EXPECT_GT(scalar, 0);
}

TEST(SketchPrior, APartialLastRegisterTileCostsThePointsPastTheEdge) {
  EXPECT_DOUBLE_EQ(detail::tail_prior(56, 8), 1.0);
  EXPECT_DOUBLE_EQ(detail::tail_prior(56, 16), 56.0 / 64);
  EXPECT_DOUBLE_EQ(detail::tail_prior(513, 16), 513.0 / 528);
  EXPECT_DOUBLE_EQ(detail::tail_prior(7, 1), 1.0);
  // conv2d's 56 columns on AVX2: a 4x2x8 register tile against 2x2x16, which loads as much per
  // FMA and holds as many accumulators but computes 64 columns for 56.
  target::Target avx2 = two_core_avx512();
  avx2.vector_bits = 256;
  SearchSpace space = SearchSpace::generate(
      te::make_workload("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1"), avx2);
  auto conv = [&](std::vector<int64_t> f, std::vector<int64_t> x) {
    return space.prior(config_of(space, "conv_pad:inline conv:tile",
                                 {{"conv.f.split", std::move(f)},
                                  {"conv.parallel", {3}},
                                  {"conv.rc.split", {8}},
                                  {"conv.rx.split", {3}},
                                  {"conv.ry.split", {3}},
                                  {"conv.unroll", {64}},
                                  {"conv.x.split", std::move(x)},
                                  {"conv.y.split", {2, 1, 2}},
                                  {"conv_pad.local.at", {2}}}));
  };
  const double whole = conv({4, 4, 4}, {1, 4, 8});
  EXPECT_GT(whole, 0.0);
  EXPECT_DOUBLE_EQ(conv({16, 2, 2}, {4, 1, 16}) / whole, 56.0 / 64);
  // A tile of 8 columns in blocks of 16 leaves the last block half empty, but its partial tile is
  // skipped whole: nothing is computed past the edge.
  EXPECT_DOUBLE_EQ(conv({4, 4, 4}, {1, 2, 8}), whole);
}

TEST(SketchPrior, AParallelLoopNeedsWorkForEveryCore) {
  // order 1 puts j first: j.o has 1024 / 1024 = 1 iteration, nothing for the second core.
  SearchSpace space =
      SearchSpace::generate(te::make_workload("matmul:M=1024,N=1024,K=1024"), two_core_avx512());
  EXPECT_LT(space.prior(matmul_config(space, {{"C.j.split", {16, 1, 64}}})), 0.5);
  // The same tile with i first: 1024 / 32 rows of tiles.
  EXPECT_DOUBLE_EQ(
      space.prior(matmul_config(space, {{"C.j.split", {16, 1, 64}}, {"C.order", {0}}})), 1.0);
  // On one core nothing is lost by running serially.
  target::Target one = two_core_avx512();
  one.cores = 1;
  SearchSpace serial = SearchSpace::generate(te::make_workload("matmul:M=1024,N=1024,K=1024"), one);
  EXPECT_DOUBLE_EQ(serial.prior(matmul_config(serial, {{"C.parallel", {0}}})), 1.0);
}

// The GPU's counterpart: every multiprocessor needs a block, each busy one warps to hide latency.
TEST(SketchPrior, AGpuLosesInProportionToTheMultiprocessorsItLeavesIdle) {
  const detail::GpuShape h200;  // 132 multiprocessors
  EXPECT_DOUBLE_EQ(detail::gpu_fill_prior(132, 256, h200), 1.0);
  // A quarter of them busy, 8 warps each: a quarter of the throughput, not a half.
  EXPECT_DOUBLE_EQ(detail::gpu_fill_prior(33, 256, h200), 0.25);
  // All of them busy with 2 warps each: latency hidden less, by a square root.
  EXPECT_DOUBLE_EQ(detail::gpu_fill_prior(132, 64, h200), 0.5);
  // ResNet-18's 3x3 512-channel convs as zero-shot picked them: 32 blocks of 7 warps, which ran
  // 0.14-0.19 ms on an H200 (1.2-1.6 TFLOP/s), rank below 98 blocks of 2 warps.
  EXPECT_LT(detail::gpu_fill_prior(32, 224, h200), detail::gpu_fill_prior(98, 64, h200));
  // Past one wave of resident blocks (8 of 256 threads each), a partial last wave idles the rest.
  EXPECT_NEAR(detail::gpu_fill_prior(132 * 8 + 1, 256, h200), (132.0 * 8 + 1) / (132 * 16), 1e-12);
}

TEST(SketchPrior, GenericStagesWantFullVectorsAndParallelWork) {
  te::Tensor a = te::placeholder({64, 256}, ir::DataType::float32(), "A");
  te::Tensor b = te::compute(
      {64, 256}, [&](const std::vector<ir::Var>& i) { return a(i[0], i[1]) + a(i[0], i[1]); }, "B");
  SearchSpace space = SearchSpace::generate(te::Workload("scale", {a}, {b}), two_core_avx512());
  ASSERT_EQ(space.sketches().size(), 1u);
  const Sketch& sketch = space.sketches()[0];
  auto config = [&](int64_t vector, int64_t parallel) {
    Config c{0, std::vector<int>(sketch.knobs.size(), 0)};
    for (size_t k = 0; k < sketch.knobs.size(); ++k) {
      const int64_t want = sketch.knobs[k].kind == KnobKind::VectorLength ? vector
                           : sketch.knobs[k].kind == KnobKind::Parallel   ? parallel
                                                                          : -1;
      for (size_t i = 0; want >= 0 && i < sketch.knobs[k].choices.size(); ++i) {
        if (sketch.knobs[k].choices[i][0] == want)
          c.choice[k] = static_cast<int>(i);
      }
    }
    return c;
  };
  EXPECT_DOUBLE_EQ(space.prior(config(16, 1)), 1.0);
  EXPECT_DOUBLE_EQ(space.prior(config(64, 2)), 1.0);
  EXPECT_LT(space.prior(config(1, 1)), 0.2);
  EXPECT_LT(space.prior(config(16, 0)), 0.5);
}

TEST(SketchPrior, PlausibleSamplesAreMorePlausibleAndEverySketchStaysReachable) {
  SearchSpace space = SearchSpace::generate(
      te::make_workload("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1"), two_core_avx512());
  support::Rng rng(3);
  constexpr int kDraws = 2000;
  double uniform = 0, plausible = 0;
  std::set<int> sketches;
  for (int i = 0; i < kDraws; ++i) {
    uniform += space.prior(space.sample(rng));
    const Config c = space.sample_plausible(rng);
    plausible += space.prior(c);
    sketches.insert(c.sketch);
  }
  EXPECT_GT(plausible, 2.5 * uniform)
      << "mean prior: uniform " << uniform / kDraws << ", plausible " << plausible / kDraws;
  EXPECT_EQ(sketches.size(), space.sketches().size());
  // random_unmeasured draws from the prior when asked to.
  std::unordered_set<std::string> taken;
  const MeasuredFn none = [](const std::string&) {
    return false;
  };
  double drawn = 0;
  const std::vector<Config> batch = random_unmeasured(space, none, taken, 200, rng, true);
  ASSERT_EQ(batch.size(), 200u);
  for (const Config& c : batch)
    drawn += space.prior(c);
  EXPECT_GT(drawn / 200, 2 * uniform / kDraws);
}

TEST(SketchPrior, WeighingScoresByThePriorRanksTheMorePlausibleOfTwoEqualScoresFirst) {
  SearchSpace space = SearchSpace::generate(
      te::make_workload("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1"), two_core_avx512());
  support::Rng rng(5);
  Config likely = space.sample(rng);
  Config unlikely = likely;
  for (int i = 0; i < 200; ++i) {
    const Config c = space.sample(rng);
    if (space.prior(c) > space.prior(likely))
      likely = c;
    if (space.prior(c) < space.prior(unlikely))
      unlikely = c;
  }
  const double hi = space.prior(likely), lo = space.prior(unlikely);
  ASSERT_GT(hi, 2 * lo);
  const std::vector<Config> configs = {unlikely, likely, likely, unlikely};
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> model = {0.0f, 0.0f, 4.0f, -inf};  // range 4
  std::vector<float> scores = model;
  weigh_by_prior(space, configs, 0.0, scores);
  EXPECT_EQ(scores, model);
  weigh_by_prior(space, configs, 0.5, scores);
  EXPECT_FLOAT_EQ(scores[0], static_cast<float>(0.5 * 4 * std::log2(lo)));
  EXPECT_FLOAT_EQ(scores[1], static_cast<float>(0.5 * 4 * std::log2(hi)));
  EXPECT_GT(scores[1], scores[0]);  // equal model scores: the plausible one first
  EXPECT_GT(scores[2], scores[1]);  // the model's lead stays where priors are equal
  EXPECT_EQ(scores[3], -inf);       // invalid stays invalid
  std::vector<float> too_few(1, 0.0f);
  EXPECT_THROW(weigh_by_prior(space, configs, 0.5, too_few), InternalError);
}

}  // namespace
}  // namespace tensortune::search

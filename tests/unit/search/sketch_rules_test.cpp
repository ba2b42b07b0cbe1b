// SPDX-License-Identifier: Apache-2.0
// The sketch rules on every operator of the library and on computes nobody wrote rules for:
// sampled configurations of every sketch apply, lower for the CPU and compute what the naive
// reference computes (ir::eval), or are refused with a ScheduleError; most must lower.
#include "common/reference.h"
#include "search_test_util.h"
#include "tensortune/ir/eval.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/ir/ops.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/search/search_space.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace tensortune::search {
namespace {

struct SampleStats {
  int lowered = 0;
  int refused = 0;
  std::string first_refusal;
};

/// Applies and lowers `config`; checks the result against the reference. A ScheduleError counts
/// as refused; anything else wrong fails the test.
void check_config(const te::Workload& workload,
                  const SearchSpace& space,
                  const Config& config,
                  SampleStats& stats) {
  SCOPED_TRACE(space.describe(config));
  std::vector<schedule::Step> steps = space.steps(config);
  ir::LoweredFunc f;
  try {
    schedule::LoopState state = schedule::apply_steps(workload, steps);
    lower::LowerOptions options;
    options.verify_each_pass = true;
    f = lower::lower(state, target::Target{}, "f", options);
  } catch (const ScheduleError& e) {
    if (stats.refused++ == 0) {
      stats.first_refusal = space.describe(config) + ": " + e.what();
    }
    return;
  }
  ++stats.lowered;
  testing::HostBuffers buffers(workload);
  buffers.fill_inputs(11);
  poison_outputs(buffers);
  ir::eval(f, buffers.args());
  ASSERT_TRUE(testing::outputs_match_reference(workload, buffers)) << ir::to_string(f);
}

/// Samples `per_sketch` configurations of every sketch (seeded) and checks each one.
SampleStats check_space(const te::Workload& workload, int per_sketch, uint64_t seed) {
  SearchSpace space = SearchSpace::generate(workload, target::Target{});
  support::Rng rng(seed);
  SampleStats stats;
  for (size_t s = 0; s < space.sketches().size(); ++s) {
    SCOPED_TRACE("sketch " + space.sketches()[s].name);
    for (int n = 0; n < per_sketch; ++n) {
      Config config{static_cast<int>(s), {}};
      for (const Knob& k : space.sketches()[s].knobs) {
        config.choice.push_back(static_cast<int>(rng.pick(k.choices.size())));
      }
      check_config(workload, space, config, stats);
      if (::testing::Test::HasFatalFailure()) {
        return stats;
      }
    }
  }
  int total = stats.lowered + stats.refused;
  EXPECT_GE(stats.lowered * 10, total * 9)
      << workload.name() << ": " << stats.refused << " of " << total
      << " sampled configurations were refused; first: " << stats.first_refusal;
  return stats;
}

TEST(SketchRules, EveryNamedWorkloadHasATinySpecHere) {
  for (const std::string& name : te::workload_names()) {
    EXPECT_EQ(tiny_specs().count(name), 1u) << "add a tiny spec of '" << name << "' to this test";
  }
}

TEST(SketchRules, SampledConfigsOfEveryOperatorLowerToCorrectCode) {
  uint64_t seed = 1;
  for (const auto& [name, specs] : tiny_specs()) {
    for (const std::string& spec : specs) {
      SCOPED_TRACE(spec);
      SampleStats stats = check_space(te::make_workload(spec), 15, seed++);
      EXPECT_GT(stats.lowered, 0);
      if (HasFatalFailure()) {
        return;
      }
    }
  }
}

/// gram[i, j] = sum_k A[i, k] * A[j, k]; out = gram + b[j]: reuse (A[i, k] misses j) and an
/// element-wise epilogue, written here, not in the operator library.
te::Workload gram_plus_bias() {
  te::Tensor a = te::placeholder({6, 5}, ir::DataType::float32(), "A");
  te::Tensor b = te::placeholder({6}, ir::DataType::float32(), "b");
  ir::IterVar k = te::reduce_axis(5, "k");
  te::Tensor gram = te::compute(
      {6, 6},
      [&](const std::vector<ir::Var>& v) { return te::sum(a(v[0], k.var) * a(v[1], k.var), {k}); },
      "gram");
  te::Tensor out = te::compute(
      {6, 6}, [&](const std::vector<ir::Var>& v) { return gram(v[0], v[1]) + b(v[1]); }, "out");
  return te::Workload("gram_plus_bias", {a, b}, {out});
}

/// out[i, j] = max_k(X[i, j, k] * Y[i, j, k]) + Z[i, j]: three inputs, a reduction without reuse.
te::Workload max_product_plus() {
  ir::DataType f32 = ir::DataType::float32();
  te::Tensor x = te::placeholder({3, 7, 4}, f32, "X");
  te::Tensor y = te::placeholder({3, 7, 4}, f32, "Y");
  te::Tensor z = te::placeholder({3, 7}, f32, "Z");
  ir::IterVar k = te::reduce_axis(4, "k");
  te::Tensor m = te::compute(
      {3, 7},
      [&](const std::vector<ir::Var>& v) {
        return te::max_reduce(x(v[0], v[1], k.var) * y(v[0], v[1], k.var), {k});
      },
      "m");
  te::Tensor out = te::compute(
      {3, 7}, [&](const std::vector<ir::Var>& v) { return m(v[0], v[1]) + z(v[0], v[1]); }, "out");
  return te::Workload("max_product_plus", {x, y, z}, {out});
}

/// Y = (A x B) x B: two tiled stages that both want to pack B.
te::Workload two_matmuls_sharing_b() {
  te::Tensor a = te::placeholder({5, 6}, ir::DataType::float32(), "A");
  te::Tensor b = te::placeholder({6, 6}, ir::DataType::float32(), "B");
  te::Tensor x = te::matmul(a, b, false, "X");
  return te::Workload("two_matmuls", {a, b}, {te::matmul(x, b, false, "Y")});
}

/// Configurations in sketch `s` (the enumeration offset of the next sketch).
double knob_count(const SearchSpace& space, size_t s) {
  double n = 1;
  for (const Knob& k : space.sketches()[s].knobs) {
    n *= static_cast<double>(k.choices.size());
  }
  return n;
}

TEST(SketchRules, UserDefinedComputeWithReuseGetsTilingAndAFusedEpilogue) {
  te::Workload w = gram_plus_bias();
  SearchSpace space = SearchSpace::generate(w, target::Target{});
  std::vector<std::string> names = sketch_names(space);
  EXPECT_TRUE(has(names, "gram:tile")) << ::testing::PrintToString(names);
  EXPECT_TRUE(has(names, "gram:tile+fuse(out)@S1")) << ::testing::PrintToString(names);
  SampleStats stats = check_space(w, 20, 5);
  EXPECT_GT(stats.lowered, 0);
}

TEST(SketchRules, TwoTiledStagesCombineTheirVariants) {
  te::Workload w = two_matmuls_sharing_b();
  SearchSpace space = SearchSpace::generate(w, target::Target{});
  EXPECT_EQ(space.sketches().size(), 9u);  // 3 variants of X x 3 of Y
  EXPECT_TRUE(has(sketch_names(space), "X:tile+cache_write@S1 Y:tile"));
  for (const Sketch& s : space.sketches()) {
    std::set<std::string> names;
    for (const Knob& k : s.knobs) {
      EXPECT_TRUE(names.insert(k.name).second) << k.name << " twice in " << s.name;
    }
  }
  SampleStats stats = check_space(w, 8, 9);
  EXPECT_GT(stats.lowered, 60);
}

TEST(SketchRules, AStrideTwoPoolIsNotVectorizedOverTheAxisItSteps) {
  // Its lanes would be gathers (x * 2 + rx): a pool 128x55x55 ran 3.4x slower so than scalar.
  auto knobs_of = [](const std::string& spec) {
    const SearchSpace space =
        SearchSpace::generate(te::make_workload(spec), target::Target::parse("llvm -cores=2"));
    std::vector<std::string> names;
    for (const Sketch& sk : space.sketches()) {
      for (const Knob& k : sk.knobs)
        names.push_back(k.name);
    }
    return names;
  };
  const auto strided = knobs_of("pool2d:N=1,C=8,H=55,W=55,R=3,S=3,stride=2,kind=max");
  EXPECT_FALSE(has(strided, "pool.vector")) << ::testing::PrintToString(strided);
  EXPECT_TRUE(has(strided, "pool.parallel"));
  const auto dense = knobs_of("pool2d:N=1,C=8,H=34,W=34,R=3,S=3,stride=1,kind=max");
  EXPECT_TRUE(has(dense, "pool.vector")) << ::testing::PrintToString(dense);
}

TEST(SketchRules, UserDefinedComputeWithoutRulesGetsTheGenericSpace) {
  te::Workload w = max_product_plus();
  SearchSpace space = SearchSpace::generate(w, target::Target{});
  ASSERT_EQ(space.sketches().size(), 1u);
  EXPECT_EQ(space.sketches()[0].name, "generic");
  std::vector<std::string> knobs;
  for (const Knob& k : space.sketches()[0].knobs) {
    knobs.push_back(k.name);
  }
  // m can be computed inside out's loops; both get vector, parallel and unroll knobs.
  for (const char* name : {"m.at", "m.vector", "out.vector", "out.parallel", "out.unroll"}) {
    EXPECT_TRUE(has(knobs, name)) << name << " in " << ::testing::PrintToString(knobs);
  }
  SampleStats stats = check_space(w, 40, 6);
  EXPECT_GT(stats.lowered, 30);
}

constexpr ir::MemoryScope kLocal = ir::MemoryScope::Local;

TEST(SketchRules, MatmulHasCacheWriteSketchesAndAPackingKnob) {
  SearchSpace space = SearchSpace::generate(te::make_workload("matmul:M=64,N=64,K=32"), {});
  std::vector<std::string> names = sketch_names(space);
  EXPECT_EQ(names,
            (std::vector<std::string>{"C:tile", "C:tile+cache_write@S1", "C:tile+cache_write@S2"}));
  ASSERT_NE(find_knob(space.sketches()[0], "B.local.at"), nullptr);
  EXPECT_EQ(find_knob(space.sketches()[0], "A.local.at"), nullptr);  // A[i, k]: k innermost
  std::vector<schedule::Step> packed = space.steps(with_knob(space, "C:tile", "B.local.at", {1}));
  EXPECT_TRUE(contains(packed, schedule::CacheRead{"B", kLocal, {"C"}}));
  EXPECT_TRUE(contains(packed, schedule::ComputeAt{"B.local", "C", "i.o"}));
  std::vector<schedule::Step> local = space.steps(space.enumerate(knob_count(space, 0), 1)[0]);
  EXPECT_TRUE(contains(local, schedule::CacheWrite{"C", kLocal}));
  EXPECT_TRUE(contains(local, schedule::ComputeAt{"C.local", "C", "j.i.o"}));
}

/// The "C:tile" configuration of `space` with B packed at the root (B.local.at 4) and C.j.split
/// `j_split`: its steps copy B with `block`, it lowers and matches the reference, and the
/// prepare function fills one prepacked buffer of `shape`.
void expect_packed_once(const te::Workload& w,
                        const SearchSpace& space,
                        const std::vector<int64_t>& j_split,
                        const schedule::LayoutBlock& block,
                        const std::vector<int64_t>& shape) {
  Config config = with_knob(space, "C:tile", "B.local.at", {4});
  const std::vector<Knob>& knobs = space.sketches()[0].knobs;
  for (size_t k = 0; k < knobs.size(); ++k) {
    const auto& choices = knobs[k].choices;
    if (knobs[k].name == "C.j.split")
      config.choice[k] =
          static_cast<int>(std::find(choices.begin(), choices.end(), j_split) - choices.begin());
  }
  std::vector<schedule::Step> steps = space.steps(config);
  EXPECT_TRUE(contains(steps, schedule::CacheRead{"B", kLocal, {"C"}, {block}})) << describe(steps);
  SampleStats stats;
  check_config(w, space, config, stats);  // the results match the reference
  ASSERT_EQ(stats.lowered, 1);
  schedule::LoopState state = schedule::apply_steps(w, steps);
  ir::LoweredFunc f = lower::lower(state, target::Target{}, "f", {});
  ASSERT_EQ(f.prepacked.size(), 1U);
  EXPECT_EQ(f.prepacked[0].shape(), shape);
}

TEST(SketchRules, AConstantBCanBePackedOnceInPanels) {
  const te::Workload w = te::make_workload("matmul:M=8,N=64,K=16,constant_b=1");
  SearchSpace space = SearchSpace::generate(w, {});
  const Knob* at = find_knob(space.sketches()[0], "B.local.at");
  ASSERT_NE(at, nullptr);
  // none, the three S0 positions, k.o, and the root panels (not offered when B is not constant).
  ASSERT_EQ(at->choices.size(), 5U);
  const SearchSpace plain_space =
      SearchSpace::generate(te::make_workload("matmul:M=8,N=64,K=16"), {});
  const Knob* plain = find_knob(plain_space.sketches()[0], "B.local.at");
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->choices.size(), 4U);
  // The panels [64 / 16, 16, 16] are filled by the prepare function, once.
  expect_packed_once(w, space, {1, 2, 16}, {1, 16, true}, {4, 16, 16});
}

TEST(SketchRules, AConstantBNoPanelWidthDividesIsPackedOnceInPaddedPanels) {
  // N = 40: panels of 16 columns leave 8; the last panel is padded with zeros, so every panel
  // row starts on a vector (B's own rows of 40 floats do not stay aligned to 16).
  const te::Workload w = te::make_workload("matmul:M=8,N=40,K=16,constant_b=1");
  SearchSpace space = SearchSpace::generate(w, {});
  const Knob* split = find_knob(space.sketches()[0], "C.j.split");
  ASSERT_NE(split, nullptr);
  const auto sixteen =
      std::find_if(split->choices.begin(), split->choices.end(),
                   [](const std::vector<int64_t>& f) { return f.back() == 16 && f[1] == 1; });
  ASSERT_NE(sixteen, split->choices.end());
  expect_packed_once(w, space, *sixteen, {1, 16, true, true}, {3, 16, 16});
}

TEST(SketchRules, ADenseLayerWhoseWidthTheVectorDoesNotDivideCopiesItsWeightPadded) {
  // dense's weight [N, K] is read at [j, k]: vectorized over j it is copied as [N / v, K, v];
  // N = 40 in vectors of 16 needs a padded last block.
  const te::Workload w = te::make_workload("dense:M=4,N=40,K=8");
  SearchSpace space = SearchSpace::generate(w, {});
  int checked = 0;
  for (size_t s = 0; s < space.sketches().size() && checked == 0; ++s) {
    const Sketch& sketch = space.sketches()[s];
    const Knob* split = find_knob(sketch, "dense.j.split");
    if (split == nullptr)
      continue;
    for (size_t c = 0; c < split->choices.size(); ++c) {
      if (split->choices[c].back() != 16)
        continue;
      Config config = with_knob(space, sketch.name, "dense.j.split", split->choices[c]);
      const std::vector<schedule::Step> steps = space.steps(config);
      if (!contains(steps,
                    schedule::CacheRead{"weight", kLocal, {"dense"}, {{0, 16, false, true}}}))
        continue;
      SampleStats stats;
      check_config(w, space, config, stats);  // applies, lowers, matches the reference
      EXPECT_EQ(stats.lowered, 1) << stats.first_refusal;
      ++checked;
      break;
    }
  }
  EXPECT_EQ(checked, 1);
}

TEST(SketchRules, DenseWithAnEpilogueHasFusedSketches) {
  SearchSpace relu =
      SearchSpace::generate(te::make_workload("dense:M=16,N=16,K=8,epilogue=relu"), {});
  ASSERT_TRUE(has(sketch_names(relu), "dense:tile+fuse(relu)@S1"));
  std::vector<schedule::Step> steps =
      relu.steps(with_knob(relu, "dense:tile+fuse(relu)@S2", "dense.parallel", {1}));
  EXPECT_TRUE(contains(steps, schedule::ComputeAt{"dense", "relu", "j.i.i.o"})) << describe(steps);
  EXPECT_TRUE(contains(steps, schedule::Annotate{"relu", "i.o", ir::ForKind::Parallel}));

  SearchSpace biased =
      SearchSpace::generate(te::make_workload("dense:M=16,N=16,K=8,bias=1,epilogue=gelu"), {});
  ASSERT_TRUE(has(sketch_names(biased), "dense:tile+fuse(gelu)@S1"));
  steps = biased.steps(with_knob(biased, "dense:tile+fuse(gelu)@S1", "dense.parallel", {1}));
  // bias_add is computed at gelu's S1 tile, dense for the whole of that tile inside it.
  EXPECT_TRUE(contains(steps, schedule::ComputeAt{"bias_add", "gelu", "j.i.o"})) << describe(steps);
  EXPECT_TRUE(contains(steps, schedule::ComputeAt{"dense", "bias_add", "i.o"})) << describe(steps);
  // Without fusion, bias_add is inlined into gelu.
  steps = biased.steps(Config{0, std::vector<int>(biased.sketches()[0].knobs.size(), 0)});
  EXPECT_TRUE(contains(steps, schedule::ComputeInline{"bias_add"}));
}

TEST(SketchRules, ConvolutionInlinesItsPaddingOrComputesItApart) {
  SearchSpace space =
      SearchSpace::generate(te::make_workload("conv2d:N=1,C=4,H=6,W=6,K=8,R=3,S=3,pad=1"), {});
  std::vector<std::string> names = sketch_names(space);
  ASSERT_TRUE(has(names, "conv_pad:inline conv:tile"));
  ASSERT_TRUE(has(names, "conv_pad:root conv:tile"));
  std::vector<schedule::Step> inlined =
      space.steps(Config{0, std::vector<int>(space.sketches()[0].knobs.size(), 0)});
  EXPECT_TRUE(contains(inlined, schedule::ComputeInline{"conv_pad"}));
  // The padded data can be packed (a cache_read of the inlined stage) per tile.
  EXPECT_NE(find_knob(space.sketches()[0], "conv_pad.local.at"), nullptr);
  std::vector<schedule::Step> apart =
      space.steps(with_knob(space, "conv_pad:root conv:tile", "conv_pad.at", {2}));
  EXPECT_FALSE(contains(apart, schedule::ComputeInline{"conv_pad"}));
  EXPECT_TRUE(contains(apart, schedule::ComputeAt{"conv_pad", "conv", "x.i.o"})) << describe(apart);
}

/// The space of `w` on a target with 16-lane float vectors (AVX-512).
SearchSpace avx512_space(const te::Workload& w) {
  target::Target avx512;
  avx512.vector_bits = 512;
  return SearchSpace::generate(w, avx512);
}

/// A conv sketch vectorized over output channels, with a local accumulator blocked like the
/// weights (the only kind of +vec sketch).
const char* const kConvOverChannels = "conv_pad:inline conv:tile+cache_write@S1+vec(f)";

TEST(SketchRules, ConvolutionOverANarrowWidthIsAlsoVectorizedOverOutputChannels) {
  te::Workload w = te::make_workload("conv2d:N=1,C=4,H=6,W=7,K=32,R=3,S=3,pad=1");
  SearchSpace space = avx512_space(w);
  std::vector<std::string> names = sketch_names(space);
  const std::string sketch = kConvOverChannels;
  ASSERT_TRUE(has(names, sketch)) << ::testing::PrintToString(names);
  ASSERT_TRUE(has(names, "conv_pad:root conv:tile+cache_write@S2+vec(f)"));
  EXPECT_FALSE(has(names, "conv_pad:inline conv:tile+vec(f)"));
  // Every split of f keeps whole 16-lane vectors innermost.
  const size_t s =
      static_cast<size_t>(std::find(names.begin(), names.end(), sketch) - names.begin());
  const Knob* f = find_knob(space.sketches()[s], "conv.f.split");
  ASSERT_NE(f, nullptr);
  for (const std::vector<int64_t>& c : f->choices) {
    EXPECT_EQ(c.back() % 16, 0) << ::testing::PrintToString(c);
  }
  Config config = with_knob(space, sketch, "conv.f.split", {1, 1, 16});
  std::vector<schedule::Step> steps = space.steps(config);
  EXPECT_TRUE(contains(steps, schedule::CacheWrite{"conv", ir::MemoryScope::Local, {{1, 16}}}))
      << describe(steps);
  EXPECT_TRUE(contains(
      steps, schedule::CacheRead{"weight", ir::MemoryScope::Local, {"conv.local"}, {{0, 16}}}));
  EXPECT_TRUE(contains(steps, schedule::Annotate{"conv.local", "f.b", ir::ForKind::Vectorized}));
  SampleStats stats;
  check_config(w, space, config, stats);
  EXPECT_EQ(stats.lowered, 1) << stats.first_refusal;
  // A width that fills whole vectors keeps the width as the only vector axis.
  SearchSpace wide = avx512_space(te::make_workload("conv2d:N=1,C=4,H=6,W=16,K=32,R=3,S=3,pad=1"));
  for (const std::string& name : sketch_names(wide)) {
    EXPECT_EQ(name.find("vec("), std::string::npos) << name;
  }
}

TEST(SketchRules, OutputChannelsOfAnOddNumberOfVectorsTileTwoAtATimeWithATail) {
  // 48 = 3 x 16 channels: a register tile of two vectors over f leaves half a tile at the edge.
  // RegNet's 1x1 conv of 208 = 13 x 16 channels ran 327 us with the one-vector tiles alone on
  // offer (the model preferred 2-lane vectors over 14-wide rows) and 52 us with two.
  te::Workload w = te::make_workload("conv2d:N=1,C=8,H=4,W=5,K=48,R=1,S=1,bias=1,epilogue=relu");
  SearchSpace space = avx512_space(w);
  const std::string sketch = "conv:tile+cache_write@S2+vec(f)";
  std::vector<std::string> names = sketch_names(space);
  ASSERT_TRUE(has(names, sketch)) << ::testing::PrintToString(names);
  const size_t s =
      static_cast<size_t>(std::find(names.begin(), names.end(), sketch) - names.begin());
  const Knob* f = find_knob(space.sketches()[s], "conv.f.split");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(std::find(f->choices.begin(), f->choices.end(), std::vector<int64_t>{1, 1, 32}),
            f->choices.end());
  SampleStats stats;
  check_config(w, space, with_knob(space, sketch, "conv.f.split", {1, 1, 32}), stats);
  check_config(w, space, with_knob(space, sketch, "conv.f.split", {1, 1, 64}), stats);
  EXPECT_EQ(stats.lowered, 2) << stats.first_refusal;
}

TEST(SketchRules, AStridedConvolutionIsAlsoVectorizedOverOutputChannels) {
  // Width 16 fills a vector, but the input is read at x * 2 + rx: vectors over x would gather.
  te::Workload w = te::make_workload("conv2d:N=1,C=3,H=32,W=32,K=32,R=3,S=3,stride=2,pad=1");
  SearchSpace space = avx512_space(w);
  std::vector<std::string> names = sketch_names(space);
  ASSERT_TRUE(has(names, kConvOverChannels)) << ::testing::PrintToString(names);
  EXPECT_TRUE(has(names, "conv_pad:inline conv:tile"));  // the width stays a choice
  SampleStats stats;
  check_config(w, space, with_knob(space, kConvOverChannels, "conv.f.split", {1, 1, 16}), stats);
  EXPECT_EQ(stats.lowered, 1) << stats.first_refusal;
}

TEST(SketchRules, DenseIsVectorizedOverOutputColumnsWithTheWeightBlocked) {
  // dense reads its weight [N, K] at [j, k]: vectors over j would gather along K, so j is also a
  // blocked vector axis, the weight copied [N/16, K, 16] (ahead of the loops: hoisted into the
  // prepare function for a constant weight); any tiling variant can take it, since j is
  // innermost in the output as well.
  te::Workload w = te::make_workload("dense:M=4,N=32,K=8");
  SearchSpace space = avx512_space(w);
  std::vector<std::string> names = sketch_names(space);
  const std::string plain = "dense:tile+vec(j)";
  ASSERT_TRUE(has(names, plain)) << ::testing::PrintToString(names);
  ASSERT_TRUE(has(names, "dense:tile+cache_write@S1+vec(j)"));
  ASSERT_TRUE(has(names, "dense:tile"));  // unblocked stays a choice
  Config config = with_knob(space, plain, "dense.j.split", {1, 1, 16});
  std::vector<schedule::Step> steps = space.steps(config);
  EXPECT_TRUE(
      contains(steps, schedule::CacheRead{"weight", ir::MemoryScope::Local, {"dense"}, {{0, 16}}}))
      << describe(steps);
  SampleStats stats;
  check_config(w, space, config, stats);
  EXPECT_EQ(stats.lowered, 1) << stats.first_refusal;
  ir::LoweredFunc f = lower::lower(schedule::apply_steps(w, steps), target::Target{}, "f");
  EXPECT_NE(ir::to_string(f).find("weight.local[2, 8, 16]"), std::string::npos) << ir::to_string(f);
  // A matmul reads B[k, j] with j innermost: no such axis.
  for (const std::string& name :
       sketch_names(avx512_space(te::make_workload("matmul:M=4,N=32,K=8")))) {
    EXPECT_EQ(name.find("vec("), std::string::npos) << name;
  }
}

TEST(SketchRules, AnInputNoAxisReusesIsNotBlockedForAVectorAxis) {
  // A global average pool reads x[0, c, r, s]: vectors over c would need x blocked by channels, a
  // copy made on every call and as large as the pool's whole work.
  const te::Tensor x = te::placeholder({1, 64, 7, 7}, ir::DataType::float32(), "x");
  const ir::IterVar r = te::reduce_axis(7, "r");
  const ir::IterVar s = te::reduce_axis(7, "s");
  const te::Tensor gap = te::compute(
      {1, 64, 1, 1},
      [&](const std::vector<ir::Var>& v) {
        return te::sum(x(v[0], v[1], r.var, s.var), {r, s});
      },
      "gap");
  const std::vector<std::string> names =
      sketch_names(avx512_space(te::Workload("gap", {x}, {gap})));
  ASSERT_FALSE(names.empty());
  for (const std::string& name : names) {
    EXPECT_EQ(name.find("vec("), std::string::npos) << name;
  }
}

/// The values each tiled stage's order knob offers, over every sketch of `w`'s space.
std::set<int64_t> order_values(const te::Workload& w) {
  std::set<int64_t> values;
  const SearchSpace space = SearchSpace::generate(w, {});
  for (const Sketch& sketch : space.sketches()) {
    for (const Knob& knob : sketch.knobs) {
      if (knob.kind == KnobKind::Reorder) {
        for (const std::vector<int64_t>& choice : knob.choices) {
          values.insert(choice.begin(), choice.end());
        }
      }
    }
  }
  return values;
}

TEST(SketchRules, TheLastAxisGoesFirstOnlyWhereRowsAreWholeCacheLines) {
  // 28 floats a row (112 bytes): parallel column blocks would share a line in every row. (A knob
  // left with one value is no knob.)
  EXPECT_EQ(order_values(te::make_workload(
                             "conv2d:N=1,C=192,H=28,W=28,R=3,S=3,stride=1,pad=1,K=192,groups=192"))
                .count(1),
            0u);
  EXPECT_EQ(order_values(te::make_workload("matmul:M=64,N=1000,K=64")).count(1), 0u);
  // 112 floats (448 bytes, 7 lines) and 1024 floats a row.
  EXPECT_EQ(order_values(te::make_workload(
                             "conv2d:N=1,C=32,H=112,W=112,R=3,S=3,stride=1,pad=1,K=32,groups=32"))
                .count(1),
            1u);
  EXPECT_EQ(order_values(te::make_workload("matmul:M=1024,N=1024,K=1024")).count(1), 1u);
}

TEST(SketchRules, Matmul1024SpaceContainsTheHandWrittenKernel) {
  // examples/matmul_1024_schedule.json: B packed per 64-column panel, a 4x64 register tile, k by
  // 128, an 8-row middle tile; here with the panel loop parallel.
  te::Workload w = te::make_workload("matmul:M=1024,N=1024,K=1024");
  SearchSpace space = SearchSpace::generate(w, {});
  Config config = space.from_json(support::Json::parse(
      R"({"sketch":"C:tile","knobs":{"C.i.split":[1,8,4],"C.j.split":[1,1,64],"C.k.split":[128],)"
      R"("C.order":[1],"C.parallel":[1],"C.unroll":[16],"B.local.at":[1]}})"));
  std::vector<schedule::Step> steps = space.steps(config);
  EXPECT_TRUE(contains(steps, schedule::ComputeAt{"B.local", "C", "j.o"})) << describe(steps);
  EXPECT_TRUE(contains(steps, schedule::Annotate{"C", "j.o", ir::ForKind::Parallel}));
  EXPECT_TRUE(contains(steps, schedule::Annotate{"C", "j.i.i.i", ir::ForKind::Vectorized}));
  ir::LoweredFunc f = lower::lower(schedule::apply_steps(w, steps), target::Target{}, "f");
  EXPECT_NE(ir::to_string(f).find("allocate float32 B.local[1024, 64] local"), std::string::npos)
      << ir::to_string(f);
}

}  // namespace
}  // namespace tensortune::search

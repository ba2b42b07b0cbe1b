// SPDX-License-Identifier: Apache-2.0
// The transform rule: Winograd's data and inverse transforms get their small loops unrolled in a
// vectorized nest over the tiles; its weight transform stays at the root (the prepare function);
// ordinary convolutions and pooling are not transforms.
#include "search_test_util.h"
#include "tensortune/ir/eval.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/lower/lower.h"
#include "tensortune/search/search_space.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>

namespace tensortune::search {
namespace {

using KnobValues = std::vector<std::pair<std::string, std::vector<int64_t>>>;

/// The configuration of the sketch named `sketch` with every knob at choice 0 but `values`.
Config configure(const SearchSpace& space, const std::string& sketch, const KnobValues& values) {
  for (size_t s = 0; s < space.sketches().size(); ++s) {
    const Sketch& sk = space.sketches()[s];
    if (sk.name != sketch) {
      continue;
    }
    Config config{static_cast<int>(s), std::vector<int>(sk.knobs.size(), 0)};
    for (const auto& [name, value] : values) {
      bool found = false;
      for (size_t k = 0; k < sk.knobs.size(); ++k) {
        auto it = std::find(sk.knobs[k].choices.begin(), sk.knobs[k].choices.end(), value);
        if (sk.knobs[k].name == name && it != sk.knobs[k].choices.end()) {
          config.choice[k] = static_cast<int>(it - sk.knobs[k].choices.begin());
          found = true;
        }
      }
      EXPECT_TRUE(found) << "no knob '" << name << "' with that value in sketch '" << sketch << "'";
    }
    return config;
  }
  ADD_FAILURE() << "no sketch '" << sketch << "'";
  return Config{0, std::vector<int>(space.sketches()[0].knobs.size(), 0)};
}

bool has_knob(const SearchSpace& space, const std::string& sketch, const std::string& knob) {
  for (const Sketch& sk : space.sketches()) {
    if (sk.name == sketch) {
      return std::any_of(sk.knobs.begin(), sk.knobs.end(),
                         [&](const Knob& k) { return k.name == knob; });
    }
  }
  ADD_FAILURE() << "no sketch '" << sketch << "'";
  return false;
}

/// The elements of every buffer allocated in `f`, by name.
std::map<std::string, int64_t> allocations(const ir::LoweredFunc& f) {
  struct Collector : ir::IRVisitor {
    using ir::IRVisitor::visit;
    std::map<std::string, int64_t> sizes;
    void visit(const ir::Allocate* op) override {
      sizes[op->buffer.name()] = op->buffer.num_elements();
      ir::IRVisitor::visit(op);
    }
  } collector;
  collector.visit(f.body);
  return collector.sizes;
}

/// Lowers `config` and checks it computes what the reference computes.
ir::LoweredFunc lower_and_check(const te::Workload& w, const SearchSpace& space, const Config& c) {
  lower::LowerOptions options;
  options.verify_each_pass = true;
  ir::LoweredFunc f =
      lower::lower(schedule::apply_steps(w, space.steps(c)), target::Target{}, "f", options);
  testing::HostBuffers buffers(w);
  buffers.fill_inputs(5);
  poison_outputs(buffers);
  ir::eval(f, buffers.args());
  EXPECT_TRUE(testing::outputs_match_reference(w, buffers)) << ir::to_string(f);
  return f;
}

TEST(TransformRule, WinogradTransformsAreUnrolledAndVectorizedOverTiles) {
  te::Workload w = te::make_workload("conv2d_winograd:N=1,C=16,H=14,W=14,K=16,pad=1,tile=2");
  SearchSpace space = SearchSpace::generate(w, {});
  ASSERT_FALSE(space.sketches().empty());
  // Only the batched GEMM is tiled.
  for (const std::string& name : sketch_names(space)) {
    EXPECT_EQ(name.find("data_pack:tile"), std::string::npos) << name;
    EXPECT_EQ(name.find("inverse:tile"), std::string::npos) << name;
    EXPECT_EQ(name.find("kernel_pack:tile"), std::string::npos) << name;
  }
  Config config = with_knob(space, space.sketches()[0].name, "conv_data_rows.vector", {16});
  std::vector<schedule::Step> steps = space.steps(config);
  EXPECT_TRUE(contains(steps, schedule::Split{"conv_data_rows", "p", 16, false}))
      << describe(steps);
  EXPECT_TRUE(contains(
      steps, schedule::Reorder{"conv_data_rows", {"c", "p.o", "eps", "r_b", "r_a", "p.i"}}))
      << describe(steps);
  for (const char* axis : {"eps", "r_b", "r_a"}) {
    EXPECT_TRUE(contains(steps, schedule::Annotate{"conv_data_rows", axis, ir::ForKind::Unrolled}))
        << axis;
  }
  EXPECT_TRUE(
      contains(steps, schedule::Annotate{"conv_data_rows", "p.i", ir::ForKind::Vectorized}));
  // Unrolled, the zero entries of B^T leave no term: per (eps, r_b) one initial store, then one
  // accumulation per nonzero B^T[eps][r_a] (8 of F(2x2, 3x3)'s 16), not one per r_a. The 49
  // tiles are padded to 64, whole vectors: no second, masked copy of the nest for a tail.
  ir::LoweredFunc unrolled = lower::lower(w, schedule::Schedule{w.key(), steps}, {});
  struct StoreCounter : ir::IRVisitor {
    using ir::IRVisitor::visit;
    int64_t stores = 0;
    void visit(const ir::Store* op) override {
      stores += op->buffer.name() == "conv_data_rows" ? 1 : 0;
      ir::IRVisitor::visit(op);
    }
  } counter;
  counter.visit(unrolled.body);
  const int64_t stores = counter.stores;
  EXPECT_EQ(stores, 4 * 4 + 4 * 8);
  // Whatever the knobs, the weight transform is computed at the root: the prepare function.
  support::Rng rng(3);
  for (int n = 0; n < 20; ++n) {
    Config c = space.sample(rng);
    for (const schedule::Step& s : space.steps(c)) {
      const auto* at = std::get_if<schedule::ComputeAt>(&s);
      EXPECT_TRUE(at == nullptr || at->stage != "conv_kernel_pack") << space.describe(c);
    }
    ir::LoweredFunc f = lower::lower(w, schedule::Schedule{w.key(), space.steps(c)}, {});
    ASSERT_EQ(f.prepacked.size(), 1U) << space.describe(c);
    EXPECT_EQ(f.prepacked[0].name(), "conv_kernel_pack");
  }
}

TEST(TransformRule, WinogradTransformsAreComputedPerTileOfTheirConsumers) {
  // 10 x 10 outputs in 2 x 2 tiles: 25 tiles, padded to 32; channels above the transform
  // rule's small extents (8), so they are loops a transform can be computed at, not unrolled.
  te::Workload w = te::make_workload("conv2d_winograd:N=1,C=16,H=10,W=10,K=16,pad=1,tile=2");
  SearchSpace space = SearchSpace::generate(w, {});
  const std::string plain = "conv_bgemm:tile";
  // Every transform can be computed at the root or at a tile loop of its consumer: the data
  // transform at the batched GEMM's S0 loops, the row pass at the column pass's large loops, the
  // inverse's column pass at its row pass, the row pass at the output's loops.
  for (const char* knob :
       {"conv_data_rows.at", "conv_data_pack.at", "conv_inverse_cols.at", "conv_inverse.at"}) {
    EXPECT_TRUE(has_knob(space, plain, knob)) << knob;
  }
  // With a local accumulator the GEMM's reader of the data transform is computed inside the
  // outer stage's tile: the data transform is computed at the outer stage's S0 loops.
  const std::string local = "conv_bgemm:tile+cache_write@S1";
  EXPECT_TRUE(has_knob(space, local, "conv_data_pack.at"));
  EXPECT_TRUE(has_knob(space, local, "conv_data_rows.at"));
  // The tile axis outermost in the GEMM (order 1) in tiles of 16, the data transform computed
  // per tile of it (S0 position 1).
  const KnobValues data_per_tile = {{"conv_bgemm.order", {1}},
                                    {"conv_bgemm.p.split", {1, 2, 8}},
                                    {"conv_bgemm.parallel", {1}},
                                    {"conv_data_pack.at", {1}},
                                    {"conv_data_pack.vector", {8}}};
  {
    Config c = configure(space, local, data_per_tile);
    std::vector<schedule::Step> s = space.steps(c);
    EXPECT_TRUE(contains(s, schedule::ComputeAt{"conv_data_pack", "conv_bgemm", "p.o"}))
        << describe(s);
    ir::LoweredFunc f = lower_and_check(w, space, c);
    EXPECT_EQ(allocations(f)["conv_data_pack"], 4 * 4 * 16 * 16) << ir::to_string(f);
  }

  // Without the local accumulator, the same, and the data transform's row pass per vector of
  // tiles of its column pass (its second large loop, p.o); the inverse transform per output
  // channel of the output (its second loop), its column pass per channel of its row pass.
  KnobValues all_per_tile = data_per_tile;
  all_per_tile.insert(all_per_tile.end(), {{"conv_data_rows.at", {2}},
                                           {"conv_data_rows.vector", {8}},
                                           {"conv_inverse.at", {2}},
                                           {"conv_inverse.vector", {8}},
                                           {"conv_inverse_cols.at", {1}},
                                           {"conv.parallel", {2}}});
  Config config = configure(space, plain, all_per_tile);
  std::vector<schedule::Step> steps = space.steps(config);
  EXPECT_TRUE(contains(steps, schedule::ComputeAt{"conv_data_pack", "conv_bgemm", "p.o"}))
      << describe(steps);
  EXPECT_TRUE(contains(steps, schedule::ComputeAt{"conv_data_rows", "conv_data_pack", "p.o"}))
      << describe(steps);
  EXPECT_TRUE(contains(steps, schedule::ComputeAt{"conv_inverse", "conv", "n@f"}))
      << describe(steps);
  EXPECT_TRUE(contains(steps, schedule::ComputeAt{"conv_inverse_cols", "conv_inverse", "k"}))
      << describe(steps);
  // Attached, a transform runs in its consumer's parallel loop and has none of its own.
  for (const schedule::Step& step : steps) {
    const auto* a = std::get_if<schedule::Annotate>(&step);
    EXPECT_TRUE(a == nullptr || a->kind != ir::ForKind::Parallel || a->stage == "conv_bgemm" ||
                a->stage == "conv")
        << describe(steps);
  }
  ir::LoweredFunc f = lower_and_check(w, space, config);
  // Each intermediate is as large as one tile of its consumer: 16 tiles of the data transform
  // (alpha^2 x C x 16), one vector of 8 tiles of its row pass, one output channel's inverse
  // (whose region, inferred from the output's reads, leaves out the padding tiles).
  std::map<std::string, int64_t> sizes = allocations(f);
  EXPECT_EQ(sizes["conv_data_pack"], 4 * 4 * 16 * 16) << ir::to_string(f);
  EXPECT_EQ(sizes["conv_data_rows"], 4 * 4 * 1 * 8) << ir::to_string(f);
  EXPECT_EQ(sizes["conv_inverse"], 1 * 2 * 2 * 25) << ir::to_string(f);  // the real tiles only
  EXPECT_EQ(sizes["conv_inverse_cols"], 4 * 2 * 1 * 32) << ir::to_string(f);
  EXPECT_EQ(sizes["conv_bgemm"], 4 * 4 * 16 * 32) << ir::to_string(f);
}

TEST(TransformRule, SampledComputeLocationsOfWinogradLowerToCorrectCode) {
  // Channels above the small extents, so every transform has two large loops to be computed at;
  // uniform samples of every sketch, so every location of every transform is drawn.
  for (const char* spec : {"conv2d_winograd:N=1,C=9,H=7,W=6,K=10,pad=1,tile=2",
                           "conv2d_winograd:N=2,C=9,H=6,W=9,K=9,pad=1,tile=4"}) {
    SCOPED_TRACE(spec);
    te::Workload w = te::make_workload(spec);
    SearchSpace space = SearchSpace::generate(w, {});
    support::Rng rng(7);
    int lowered = 0, attached = 0;
    for (size_t s = 0; s < space.sketches().size(); ++s) {
      for (int n = 0; n < 6; ++n) {
        Config config{static_cast<int>(s), {}};
        for (const Knob& k : space.sketches()[s].knobs) {
          config.choice.push_back(static_cast<int>(rng.pick(k.choices.size())));
        }
        SCOPED_TRACE(space.describe(config));
        for (const schedule::Step& step : space.steps(config)) {
          const auto* at = std::get_if<schedule::ComputeAt>(&step);
          attached += at != nullptr && at->stage.find("_bgemm") == std::string::npos ? 1 : 0;
        }
        lower_and_check(w, space, config);
        ++lowered;
        if (HasFailure()) {
          return;
        }
      }
    }
    EXPECT_GT(attached, lowered);  // about two of the four transforms per configuration
  }
}

TEST(TransformRule, SpaceHoldsWinogradComputedPerTileOfTheGemm) {
  // The configuration that beat tuned direct convolution on 64x56x56->64 (0.49-0.53 ms against
  // 0.60-0.73 ms, bench, two cores): 16 tiles per iteration of the GEMM's parallel outer loop,
  // the data transform for all of them inside it, the inverse per output channel.
  te::Workload w = te::make_workload("conv2d_winograd:N=1,C=64,H=56,W=56,K=64,pad=1,tile=4");
  SearchSpace space = SearchSpace::generate(w, {});
  Config config = configure(space, "conv_bgemm:tile",
                            {{"conv_bgemm.order", {1}},
                             {"conv_bgemm.parallel", {1}},
                             {"conv_bgemm.p.split", {1, 1, 16}},
                             {"conv_bgemm.k.split", {1, 8, 8}},
                             {"conv_bgemm.eps.split", {1, 1, 1}},
                             {"conv_bgemm.nu.split", {1, 1, 1}},
                             {"conv_bgemm.rc.split", {8}},
                             {"conv_bgemm.unroll", {64}},
                             {"conv_data_pack.at", {1}},
                             {"conv_data_pack.vector", {16}},
                             {"conv_data_rows.at", {2}},
                             {"conv_data_rows.vector", {16}},
                             {"conv_inverse.at", {2}},
                             {"conv_inverse.vector", {16}},
                             {"conv_inverse_cols.at", {1}},
                             {"conv_inverse_cols.vector", {16}},
                             {"conv.parallel", {2}},
                             {"conv.vector", {8}}});
  lower::LowerOptions options;
  options.vectorize_and_unroll = false;
  ir::LoweredFunc f =
      lower::lower(schedule::apply_steps(w, space.steps(config)), target::Target{}, "f", options);
  std::map<std::string, int64_t> sizes = allocations(f);
  EXPECT_EQ(sizes["conv_data_pack"], 6 * 6 * 64 * 16) << ir::to_string(f);
  EXPECT_EQ(sizes["conv_data_rows"], 6 * 6 * 1 * 16) << ir::to_string(f);
  EXPECT_EQ(sizes["conv_inverse"], 1 * 4 * 4 * 196) << ir::to_string(f);
  // The prior ranks it among the plausible: no spill, no recomputation, full vectors.
  EXPECT_GT(space.prior(config), 0.1);
}

TEST(TransformRule, PriorPrefersTransformsComputedPerTileWithoutRecomputation) {
  // 56 x 56 in 4 x 4 tiles: every intermediate is 1-2 MB, beyond what stays in the L2 cache.
  te::Workload w = te::make_workload("conv2d_winograd:N=1,C=64,H=56,W=56,K=64,pad=1,tile=4");
  SearchSpace space = SearchSpace::generate(w, {});
  const std::string plain = "conv_bgemm:tile";
  // The GEMM's S0 loops in order (p, eps, nu, k): p in tiles of 16, eps in 6, k in two tiles.
  const KnobValues gemm = {{"conv_bgemm.order", {1}},
                           {"conv_bgemm.p.split", {1, 1, 16}},
                           {"conv_bgemm.eps.split", {1, 1, 1}},
                           {"conv_bgemm.k.split", {1, 4, 8}}};
  auto prior_with = [&](const KnobValues& extra) {
    KnobValues values = gemm;
    values.insert(values.end(), extra.begin(), extra.end());
    return space.prior(configure(space, plain, values));
  };
  const double root = prior_with({{"conv_data_pack.at", {0}}, {"conv_data_pack.parallel", {2}}});
  const double per_tile = prior_with({{"conv_data_pack.at", {1}}});
  const double per_channel_tile = prior_with({{"conv_data_pack.at", {4}}});
  EXPECT_GT(per_tile, root);
  // Inside the loop over output channel tiles (k.o, 2 iterations), which it does not read, the
  // data transform would be computed twice.
  EXPECT_GT(root, per_channel_tile);
  // Inside the loop over the rows eps, the input tiles would be gathered once per row.
  EXPECT_GT(per_tile, prior_with({{"conv_data_pack.at", {2}}}));
  // At an S0 loop over all 208 tiles (p.o of extent 1), the block is the whole 1.9 MB output.
  EXPECT_GT(per_tile,
            prior_with({{"conv_data_pack.at", {1}}, {"conv_bgemm.p.split", {13, 1, 16}}}));
  // The weight transform runs once, in the prepare function: its knobs change nothing.
  EXPECT_EQ(prior_with({{"conv_kernel_pack.vector", {1}}}),
            prior_with({{"conv_kernel_pack.vector", {16}}}));
}

TEST(TransformRule, WinogradInverseIsComputedAtAnEpilogueReadingItThroughTheInlinedGather) {
  // A graph kernel's Winograd form: the output gather is inlined into the relu that is the
  // kernel's output, which computes the inverse transform per output channel.
  te::Tensor x = te::placeholder({1, 3, 6, 6}, ir::DataType::float32(), "x");
  te::Tensor k = te::placeholder({4, 3, 3, 3}, ir::DataType::float32(), "w");
  te::Tensor y = te::relu(te::conv2d_winograd_nchw(x, k, 1, 2, "conv"), "out");
  te::Workload w("winograd_relu", {x, k}, {y}, {k});
  SearchSpace space = SearchSpace::generate(w, {});
  const std::string sketch = space.sketches()[0].name;
  ASSERT_TRUE(has_knob(space, sketch, "conv_inverse.at"));
  Config config = configure(space, sketch, {{"conv_inverse.at", {2}}, {"out.parallel", {2}}});
  std::vector<schedule::Step> steps = space.steps(config);
  EXPECT_TRUE(contains(steps, schedule::ComputeAt{"conv_inverse", "out", "i@j"}))
      << describe(steps);
  lower_and_check(w, space, config);
}

TEST(TransformRule, ConvolutionAndPoolingAreNotTransforms) {
  for (const char* spec : {"conv2d:N=1,C=3,H=5,W=5,K=4,R=3,S=3,pad=1",
                           "depthwise_conv2d:N=1,C=16,H=8,W=8,R=3,S=3,pad=1",
                           "pool2d:N=2,C=16,H=8,W=8,R=2,S=2,stride=2"}) {
    SearchSpace space = SearchSpace::generate(te::make_workload(spec), {});
    support::Rng rng(1);
    std::vector<schedule::Step> steps = space.steps(space.sample(rng));
    for (const schedule::Step& s : steps) {
      const auto* a = std::get_if<schedule::Annotate>(&s);
      EXPECT_TRUE(a == nullptr || a->kind != ir::ForKind::Unrolled)
          << spec << ": " << describe(steps);
    }
  }
}

}  // namespace
}  // namespace tensortune::search

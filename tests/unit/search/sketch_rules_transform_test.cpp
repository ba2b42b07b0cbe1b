// SPDX-License-Identifier: Apache-2.0
// The transform rule: Winograd's data and inverse transforms get their small loops unrolled in a
// vectorized nest over the tiles; its weight transform stays at the root (the prepare function);
// ordinary convolutions and pooling are not transforms.
#include "search_test_util.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/lower/lower.h"
#include "tensortune/search/search_space.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

namespace tensortune::search {
namespace {

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

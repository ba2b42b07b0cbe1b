// SPDX-License-Identifier: Apache-2.0
// Layout rewrites of constant inputs done ahead of time: which root stages move into the prepare
// function, and that the pair (prepare, body) still computes what the naive reference does.
#include "tensortune/lower/hoist_prepacked.h"

#include "lower_test_util.h"

#include <sstream>

namespace tensortune::lower {
namespace {

using schedule::Annotate;
using schedule::CacheRead;
using schedule::ComputeAt;
using schedule::ComputeInline;
using schedule::Reorder;
using schedule::Split;
using schedule::Step;
using schedule::Tile;

/// True when a printed statement of `text` stores to `buffer` (a line "buffer[...] = ...").
bool stores_to(const std::string& text, const std::string& buffer) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos && line.compare(start, buffer.size() + 1, buffer + "[") == 0) {
      return true;
    }
  }
  return false;
}

/// conv2d (weights declared constant by the spec) vectorized over 4 output channels, reading
/// its weights copied at the root into OIHW4o.
std::vector<Step> blocked_weight_steps() {
  return {CacheRead{"weight", kLocal, {}, {{0, 4}}}, ComputeInline{"conv_pad"},
          Split{"conv", "f", 4}, Reorder{"conv", {"n", "f.o", "y", "rc", "ry", "rx", "x", "f.i"}},
          Annotate{"conv", "f.i", ir::ForKind::Vectorized}};
}

TEST(HoistPrepacked, BlockedWeightsAtTheRootMoveToThePrepareFunction) {
  te::Workload w = te::make_workload("conv2d:N=1,C=3,H=6,W=5,K=8,R=3,S=3,stride=1,pad=1");
  ASSERT_TRUE(w.is_constant("weight"));
  ir::LoweredFunc f = expect_lowers_correctly(w, blocked_weight_steps());
  ASSERT_EQ(f.prepacked.size(), 1U);
  EXPECT_EQ(f.prepacked[0].name(), "weight.local");
  EXPECT_EQ(f.prepacked[0].shape(), (std::vector<int64_t>{2, 3, 3, 3, 4}));
  ASSERT_TRUE(f.prepare.defined());
  // The body reads the prepacked copy and neither allocates nor writes it; prepare writes it.
  std::string body = ir::to_string(f.body);
  EXPECT_EQ(body.find("allocate"), std::string::npos) << body;
  EXPECT_NE(body.find("weight.local["), std::string::npos) << body;
  EXPECT_FALSE(stores_to(body, "weight.local")) << body;
  EXPECT_EQ(body.find("weight["), std::string::npos) << body;
  std::string prepare = ir::to_string(f.prepare);
  EXPECT_TRUE(stores_to(prepare, "weight.local")) << prepare;
  EXPECT_EQ(prepare.find("data["), std::string::npos) << prepare;
}

TEST(HoistPrepacked, TheSameCopyOfAnInputThatIsNotConstantStaysInTheKernel) {
  // The same blocked copy of B at the root: B is an activation (matmul declares no constants).
  te::Workload w = matmul_workload(12, 24, 10);
  ir::LoweredFunc f = expect_lowers_correctly(
      w, {CacheRead{"B", kLocal, {}, {{1, 8}}}, Split{"C", "j", 8},
          Reorder{"C", {"i", "j.o", "k", "j.i"}}, Annotate{"C", "j.i", ir::ForKind::Vectorized}});
  EXPECT_TRUE(f.prepacked.empty());
  EXPECT_FALSE(f.prepare.defined());
  EXPECT_EQ(count_in(f, "allocate float32 B.local"), 1);
}

TEST(HoistPrepacked, ACopyComputedInsideATileStaysInTheKernel) {
  // Weights copied per tile of output channels: the copy depends on a loop of the kernel.
  te::Workload w = te::make_workload("conv2d:N=1,C=3,H=6,W=5,K=8,R=3,S=3,stride=1,pad=1");
  ir::LoweredFunc f = expect_lowers_correctly(
      w,
      {CacheRead{"weight", kLocal, {"conv"}, {{0, 4}}}, ComputeInline{"conv_pad"},
       Split{"conv", "f", 4}, Reorder{"conv", {"n", "f.o", "y", "rc", "ry", "rx", "x", "f.i"}},
       ComputeAt{"weight.local", "conv", "f.o"}, Annotate{"conv", "f.i", ir::ForKind::Vectorized}});
  EXPECT_TRUE(f.prepacked.empty());
  EXPECT_EQ(count_in(f, "allocate float32 weight.local"), 1);
}

TEST(HoistPrepacked, ADenseLayerPacksItsWeightsAndKeepsItsBiasEpilogue) {
  // dense declares its weight and bias constant: B panels packed at the root move out, the
  // bias is still read by the kernel.
  te::Workload w = te::make_workload("dense:M=6,N=16,K=5,bias=1,epilogue=relu");
  ir::LoweredFunc f =
      expect_lowers_correctly(w, {CacheRead{"weight", kLocal, {}, {{0, 8}}}, Split{"dense", "j", 8},
                                  Reorder{"dense", {"i", "j.o", "k", "j.i"}},
                                  Annotate{"dense", "j.i", ir::ForKind::Vectorized}});
  ASSERT_EQ(f.prepacked.size(), 1U);
  EXPECT_NE(ir::to_string(f.body).find("bias["), std::string::npos);
}

TEST(HoistPrepacked, AReductionOverConstantsMovesWithItsAccumulator) {
  // Winograd's weight transform U = G w G^T reads back its own accumulator: still constant.
  te::Workload w = te::make_workload("conv2d_winograd:N=1,C=2,H=5,W=6,K=3,pad=1,tile=2");
  ir::LoweredFunc f = expect_lowers_correctly(w, {});
  ASSERT_EQ(f.prepacked.size(), 1U);
  EXPECT_EQ(f.prepacked[0].name(), "conv_kernel_pack");
  EXPECT_FALSE(stores_to(ir::to_string(f.body), "conv_kernel_pack"));
  EXPECT_TRUE(stores_to(ir::to_string(f.prepare), "conv_kernel_pack"));
}

TEST(HoistPrepacked, NoConstantFlagsLeaveTheFunctionAlone) {
  te::Workload w = te::make_workload("conv2d:N=1,C=3,H=6,W=5,K=8,R=3,S=3,stride=1,pad=1");
  ir::LoweredFunc f = expect_lowers_correctly(w, blocked_weight_steps());
  ASSERT_FALSE(f.prepacked.empty());
  // Undo the hoisting by lowering the same schedule on a copy of the workload without constants.
  te::Workload plain(w.name(), w.inputs(), w.outputs());
  ir::LoweredFunc g = lower(schedule::apply_steps(plain, blocked_weight_steps()), target::Target(),
                            function_name(plain));
  EXPECT_TRUE(g.prepacked.empty());
  EXPECT_FALSE(g.prepare.defined());
  EXPECT_NE(w.key(), plain.key()) << "constants are part of the workload's identity";
  EXPECT_TRUE(runs_like_reference(plain, g));
  // And hoisting an already hoisted function changes nothing.
  ir::LoweredFunc again = hoist_prepacked(f, w.constant_inputs());
  EXPECT_EQ(ir::to_string(again), ir::to_string(f));
}

}  // namespace
}  // namespace tensortune::lower

// SPDX-License-Identifier: Apache-2.0
// The initial loop state and its producer/consumer queries.
#include "tensortune/schedule/loop_state.h"

#include "unit/schedule/test_workloads.h"

#include <gtest/gtest.h>

namespace tensortune::schedule {
namespace {

using testing::leaves;

TEST(LoopState, HasOneStagePerOperationInWorkloadOrder) {
  LoopState state(testing::matmul_relu());
  ASSERT_EQ(state.stages().size(), 4U);
  EXPECT_EQ(state.stages()[0].name, "A");
  EXPECT_EQ(state.stages()[1].name, "B");
  EXPECT_EQ(state.stages()[2].name, "C");
  EXPECT_EQ(state.stages()[3].name, "D");
  EXPECT_TRUE(state.stage("A").is_placeholder());
  EXPECT_TRUE(state.stage("A").root_axes.empty());
  EXPECT_FALSE(state.stage("C").is_output);
  EXPECT_TRUE(state.stage("D").is_output);
  EXPECT_EQ(state.stage_index("D"), 3);
  EXPECT_EQ(state.stage_index("nope"), -1);
}

TEST(LoopState, RootAxesAreDataParallelThenReduction) {
  LoopState state(testing::matmul_relu());
  const Stage& c = state.stage("C");
  ASSERT_EQ(c.root_axes.size(), 3U);
  EXPECT_EQ(c.root_axes[0].name, "i");
  EXPECT_EQ(c.root_axes[2].name, "k");
  EXPECT_EQ(c.root_axes[0].kind, ir::IterKind::DataPar);
  EXPECT_EQ(c.root_axes[2].kind, ir::IterKind::Reduce);
  EXPECT_EQ(leaves(state, "C"), (std::vector<std::string>{"i:64", "j:48", "k:32"}));
  EXPECT_EQ(leaves(state, "D"), (std::vector<std::string>{"i:64", "j:48"}));
  EXPECT_EQ(c.leaf_index("j"), 1);
  EXPECT_EQ(c.leaf_index("x"), -1);
  EXPECT_EQ(c.attach, AttachKind::Root);
  EXPECT_TRUE(c.relations.empty());
}

TEST(LoopState, ConsumersAndProducersFollowTheLoads) {
  LoopState state(testing::elemwise_chain());
  EXPECT_EQ(state.consumers("A"), (std::vector<std::string>{"B", "C"}));
  EXPECT_EQ(state.consumers("B"), (std::vector<std::string>{"C"}));
  EXPECT_TRUE(state.consumers("C").empty());
  EXPECT_EQ(state.producers("C"), (std::vector<std::string>{"A", "B"}));
  EXPECT_TRUE(state.producers("A").empty());
}

TEST(LoopState, UnknownStageIsAScheduleErrorListingTheStages) {
  LoopState state(testing::matmul_relu());
  std::string message = testing::schedule_error([&] { state.stage("E"); });
  EXPECT_NE(message.find("'E'"), std::string::npos) << message;
  EXPECT_NE(message.find("A, B, C, D"), std::string::npos) << message;
}

TEST(LoopState, RootItersOfAPlaceholderAreEmpty) {
  te::Workload w = testing::matmul();
  EXPECT_TRUE(root_axes_of(*w.inputs()[0].op()).empty());
  EXPECT_EQ(root_axes_of(*w.outputs()[0].op()).size(), 3U);
}

}  // namespace
}  // namespace tensortune::schedule

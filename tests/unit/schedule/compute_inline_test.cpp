// SPDX-License-Identifier: Apache-2.0
// compute_inline: the attach kind it sets, and its errors.
#include "tensortune/schedule/schedule.h"
#include "unit/schedule/test_workloads.h"

#include <gtest/gtest.h>

namespace tensortune::schedule {
namespace {

using testing::schedule_error;

TEST(ComputeInline, MarksAnElementwiseStageInlined) {
  LoopState state = apply_steps(testing::elemwise_chain(), {ComputeInline{"B"}});
  EXPECT_EQ(state.stage("B").attach, AttachKind::Inline);
  EXPECT_EQ(state.stage("C").attach, AttachKind::Root);
}

TEST(ComputeInline, ReplacesAnEarlierComputeAt) {
  LoopState state =
      apply_steps(testing::elemwise_chain(), {ComputeAt{"B", "C", "j"}, ComputeInline{"B"}});
  EXPECT_EQ(state.stage("B").attach, AttachKind::Inline);
  EXPECT_TRUE(state.stage("B").attach_stage.empty());
  EXPECT_TRUE(state.stage("B").attach_axis.empty());
}

TEST(ComputeInline, RejectsAReduction) {
  std::string message =
      schedule_error([] { apply_steps(testing::matmul_relu(), {ComputeInline{"C"}}); });
  EXPECT_EQ(message, "compute_inline: stage 'C' is a reduction and cannot be inlined");
}

TEST(ComputeInline, RejectsAnOutputAndAPlaceholder) {
  std::string output =
      schedule_error([] { apply_steps(testing::elemwise_chain(), {ComputeInline{"C"}}); });
  EXPECT_EQ(output, "compute_inline: stage 'C' is an output of the workload and cannot be inlined");
  std::string input =
      schedule_error([] { apply_steps(testing::elemwise_chain(), {ComputeInline{"A"}}); });
  EXPECT_NE(input.find("compute_inline: stage 'A' is a placeholder"), std::string::npos) << input;
}

TEST(ComputeInline, RejectsAStageWithStagesAttachedAtItsLoops) {
  te::Tensor a = te::placeholder({8}, ir::DataType::float32(), "A");
  te::Tensor b = te::compute(
      {8}, [&](const std::vector<ir::Var>& x) { return a(x[0]) + 1.0f; }, "B");
  te::Tensor c = te::compute(
      {8}, [&](const std::vector<ir::Var>& x) { return b(x[0]) * 2.0f; }, "C");
  te::Tensor d = te::compute(
      {8}, [&](const std::vector<ir::Var>& x) { return c(x[0]) - 1.0f; }, "D");
  te::Workload w("chain", {a}, {d});
  std::string message = schedule_error([&] {
    apply_steps(w, {ComputeAt{"B", "C", "i"}, ComputeInline{"C"}});
  });
  EXPECT_EQ(message,
            "compute_inline: stage 'C' has stages computed at its loops (B) and cannot be inlined");
}

}  // namespace
}  // namespace tensortune::schedule

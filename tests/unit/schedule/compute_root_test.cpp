// SPDX-License-Identifier: Apache-2.0
// compute_root: it undoes compute_at and compute_inline; and its errors.
#include "tensortune/schedule/schedule.h"
#include "unit/schedule/test_workloads.h"

#include <gtest/gtest.h>

namespace tensortune::schedule {
namespace {

using testing::schedule_error;

TEST(ComputeRoot, UndoesComputeAtAndComputeInline) {
  LoopState at = apply_steps(testing::matmul_relu(), {ComputeAt{"C", "D", "i"}, ComputeRoot{"C"}});
  EXPECT_EQ(at.stage("C").attach, AttachKind::Root);
  EXPECT_TRUE(at.stage("C").attach_stage.empty());
  LoopState inl = apply_steps(testing::elemwise_chain(), {ComputeInline{"B"}, ComputeRoot{"B"}});
  EXPECT_EQ(inl.stage("B").attach, AttachKind::Root);
}

TEST(ComputeRoot, RejectsAPlaceholderAndAnUnknownStage) {
  std::string input =
      schedule_error([] { apply_steps(testing::matmul_relu(), {ComputeRoot{"B"}}); });
  EXPECT_NE(input.find("compute_root: stage 'B' is a placeholder"), std::string::npos) << input;
  std::string unknown =
      schedule_error([] { apply_steps(testing::matmul_relu(), {ComputeRoot{"Z"}}); });
  EXPECT_EQ(unknown, "compute_root: no stage 'Z' (stages: A, B, C, D)");
}

}  // namespace
}  // namespace tensortune::schedule

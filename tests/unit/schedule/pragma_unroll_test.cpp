// SPDX-License-Identifier: Apache-2.0
// pragma_unroll: the max step it sets on a leaf axis, and its errors.
#include "tensortune/schedule/schedule.h"
#include "unit/schedule/test_workloads.h"

#include <gtest/gtest.h>

namespace tensortune::schedule {
namespace {

using testing::schedule_error;

TEST(PragmaUnroll, SetsTheMaxStepOfOneAxis) {
  LoopState state = apply_steps(testing::matmul_relu(), {PragmaUnroll{"C", "i", 64}});
  EXPECT_EQ(state.stage("C").leaf_axes[0].auto_unroll_max_step, 64);
  EXPECT_EQ(state.stage("C").leaf_axes[1].auto_unroll_max_step, 0);
}

TEST(PragmaUnroll, RejectsANegativeMaxStepAndAnUnknownAxis) {
  std::string negative = schedule_error([] {
    apply_steps(testing::matmul_relu(), {PragmaUnroll{"C", "i", -1}});
  });
  EXPECT_NE(negative.find("pragma_unroll: max_step must be non-negative"), std::string::npos)
      << negative;
  std::string axis = schedule_error([] {
    apply_steps(testing::matmul_relu(), {PragmaUnroll{"C", "w", 8}});
  });
  EXPECT_EQ(axis, "pragma_unroll: stage 'C' has no axis 'w' (axes: i, j, k)");
}

}  // namespace
}  // namespace tensortune::schedule

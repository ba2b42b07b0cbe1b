// SPDX-License-Identifier: Apache-2.0
// reorder: listed axes take their old positions in the listed order; and its errors.
#include "tensortune/schedule/schedule.h"
#include "unit/schedule/test_workloads.h"

#include <gtest/gtest.h>

namespace tensortune::schedule {
namespace {

using testing::leaves;
using testing::schedule_error;

TEST(Reorder, PutsAllAxesInTheListedOrder) {
  LoopState state = apply_steps(testing::matmul_relu(), {Reorder{"C", {"k", "i", "j"}}});
  EXPECT_EQ(leaves(state, "C"), (std::vector<std::string>{"k:32", "i:64", "j:48"}));
  EXPECT_TRUE(state.stage("C").relations.empty());
}

TEST(Reorder, ListedAxesFillTheirOwnPositionsAndOthersStay) {
  LoopState state = apply_steps(
      testing::matmul_relu(),
      {Split{"C", "i", 8, false}, Split{"C", "j", 4, false}, Reorder{"C", {"j.i", "i.o"}}});
  // i.o sat at 0 and j.i at 3: they swap; i.i, j.o and k stay.
  EXPECT_EQ(leaves(state, "C"),
            (std::vector<std::string>{"j.i:4", "i.i:8", "j.o:12", "i.o:8", "k:32"}));
}

TEST(Reorder, KeepsAnnotationsWithTheirAxes) {
  LoopState state = apply_steps(testing::matmul_relu(), {Annotate{"D", "i", ir::ForKind::Parallel},
                                                         Reorder{"D", {"j", "i"}}});
  EXPECT_EQ(state.stage("D").leaf_axes[1].name, "i");
  EXPECT_EQ(state.stage("D").leaf_axes[1].annotation, ir::ForKind::Parallel);
}

TEST(Reorder, AttachmentsFollowTheAxisName) {
  LoopState state =
      apply_steps(testing::matmul_relu(), {ComputeAt{"C", "D", "i"}, Reorder{"D", {"j", "i"}}});
  EXPECT_EQ(state.stage("C").attach, AttachKind::At);
  EXPECT_EQ(state.stage("C").attach_axis, "i");
  EXPECT_EQ(state.stage("D").leaf_index("i"), 1);
}

TEST(Reorder, RejectsAnAxisListedTwice) {
  std::string message = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Reorder{"C", {"i", "k", "i"}}});
  });
  EXPECT_EQ(message, "reorder: axis 'i' listed twice for stage 'C'");
}

TEST(Reorder, RejectsAnUnknownAxis) {
  std::string message = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Reorder{"C", {"k", "x"}}});
  });
  EXPECT_EQ(message, "reorder: stage 'C' has no axis 'x' (axes: i, j, k)");
}

}  // namespace
}  // namespace tensortune::schedule

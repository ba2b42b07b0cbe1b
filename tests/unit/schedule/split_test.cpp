// SPDX-License-Identifier: Apache-2.0
// split: names, extents, relations, attachments, and its errors.
#include "tensortune/schedule/schedule.h"
#include "unit/schedule/test_workloads.h"

#include <gtest/gtest.h>

namespace tensortune::schedule {
namespace {

using testing::leaves;
using testing::schedule_error;

TEST(Split, ReplacesTheAxisByOuterAndInnerInPlace) {
  LoopState state = apply_steps(testing::matmul_relu(), {Split{"C", "j", 8, false}});
  EXPECT_EQ(leaves(state, "C"), (std::vector<std::string>{"i:64", "j.o:6", "j.i:8", "k:32"}));
  const Stage& c = state.stage("C");
  ASSERT_EQ(c.relations.size(), 1U);
  const auto& rel = std::get<SplitRelation>(c.relations[0]);
  EXPECT_EQ(rel.parent, "j");
  EXPECT_EQ(rel.outer, "j.o");
  EXPECT_EQ(rel.inner, "j.i");
  EXPECT_EQ(rel.factor, 8);
  EXPECT_EQ(c.root_axes.size(), 3U);  // roots never change
}

TEST(Split, NonDividingFactorRoundsTheOuterExtentUp) {
  LoopState state = apply_steps(testing::matmul_relu(), {Split{"C", "i", 10, false}});
  EXPECT_EQ(leaves(state, "C"), (std::vector<std::string>{"i.o:7", "i.i:10", "j:48", "k:32"}));
}

TEST(Split, FactorLargerThanTheExtentKeepsTheFactor) {
  LoopState state = apply_steps(testing::matmul_relu(), {Split{"C", "k", 100, false}});
  EXPECT_EQ(leaves(state, "C"), (std::vector<std::string>{"i:64", "j:48", "k.o:1", "k.i:100"}));
}

TEST(Split, NpartsGivesTheOuterExtent) {
  LoopState state = apply_steps(testing::matmul_relu(), {Split{"C", "i", 4, true}});
  EXPECT_EQ(leaves(state, "C"), (std::vector<std::string>{"i.o:4", "i.i:16", "j:48", "k:32"}));
  EXPECT_EQ(std::get<SplitRelation>(state.stage("C").relations[0]).factor, 16);
  LoopState uneven = apply_steps(testing::matmul_relu(), {Split{"C", "j", 5, true}});
  EXPECT_EQ(leaves(uneven, "C"), (std::vector<std::string>{"i:64", "j.o:5", "j.i:10", "k:32"}));
}

TEST(Split, InheritsTheKindAndResetsTheAnnotation) {
  LoopState state =
      apply_steps(testing::matmul_relu(), {Annotate{"C", "i", ir::ForKind::Parallel},
                                           Split{"C", "i", 8, false}, Split{"C", "k", 4, false}});
  const Stage& c = state.stage("C");
  EXPECT_EQ(c.leaf_axes[0].annotation, ir::ForKind::Serial);
  EXPECT_EQ(c.leaf_axes[1].annotation, ir::ForKind::Serial);
  EXPECT_EQ(c.leaf_axes[3].kind, ir::IterKind::Reduce);
  EXPECT_EQ(c.leaf_axes[4].kind, ir::IterKind::Reduce);
  EXPECT_EQ(c.relations.size(), 2U);
}

TEST(Split, SplittingAnOuterPieceNamesItsChildrenAfterIt) {
  LoopState state =
      apply_steps(testing::matmul_relu(), {Split{"C", "i", 8, false}, Split{"C", "i.o", 2, false}});
  EXPECT_EQ(leaves(state, "C"),
            (std::vector<std::string>{"i.o.o:4", "i.o.i:2", "i.i:8", "j:48", "k:32"}));
}

TEST(Split, AStageAttachedAtTheSplitAxisMovesToTheInnerPiece) {
  LoopState state =
      apply_steps(testing::matmul_relu(), {ComputeAt{"C", "D", "j"}, Split{"D", "j", 8, false}});
  EXPECT_EQ(state.stage("C").attach_stage, "D");
  EXPECT_EQ(state.stage("C").attach_axis, "j.i");
}

TEST(Split, RejectsAnUnknownAxis) {
  std::string message = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Split{"C", "k.o", 4, false}});
  });
  EXPECT_EQ(message, "split: stage 'C' has no axis 'k.o' (axes: i, j, k)");
}

TEST(Split, RejectsAnAxisThatIsNoLongerALeaf) {
  std::string message = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Split{"C", "i", 8, false}, Split{"C", "i", 2, false}});
  });
  EXPECT_NE(message.find("has no axis 'i' (axes: i.o, i.i, j, k)"), std::string::npos) << message;
}

TEST(Split, RejectsANonPositiveFactor) {
  for (int64_t factor : {0, -3}) {
    std::string message = schedule_error([&] {
      apply_steps(testing::matmul_relu(), {Split{"C", "i", factor, false}});
    });
    EXPECT_NE(message.find("split: factor must be positive"), std::string::npos) << message;
    EXPECT_NE(message.find("'C'"), std::string::npos) << message;
  }
}

TEST(Split, RejectsAnUnknownStageAndAPlaceholder) {
  std::string unknown = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Split{"X", "i", 2, false}});
  });
  EXPECT_EQ(unknown, "split: no stage 'X' (stages: A, B, C, D)");
  std::string input = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Split{"A", "i", 2, false}});
  });
  EXPECT_NE(input.find("split: stage 'A' is a placeholder"), std::string::npos) << input;
}

TEST(Split, LeavesTheInputStateUntouched) {
  LoopState before(testing::matmul_relu());
  LoopState after = schedule::apply(before, Split{"C", "i", 8, false});
  EXPECT_EQ(leaves(before, "C"), (std::vector<std::string>{"i:64", "j:48", "k:32"}));
  EXPECT_EQ(after.stage("C").leaf_axes.size(), 4U);
}

}  // namespace
}  // namespace tensortune::schedule

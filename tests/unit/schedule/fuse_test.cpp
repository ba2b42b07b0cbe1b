// SPDX-License-Identifier: Apache-2.0
// fuse: the fused axis, its relation, attachments, and its errors.
#include "tensortune/schedule/schedule.h"
#include "unit/schedule/test_workloads.h"

#include <gtest/gtest.h>

namespace tensortune::schedule {
namespace {

using testing::leaves;
using testing::schedule_error;

TEST(Fuse, JoinsAdjacentAxesIntoOneWithTheProductExtent) {
  LoopState state = apply_steps(testing::matmul_relu(), {Fuse{"D", {"i", "j"}}});
  EXPECT_EQ(leaves(state, "D"), (std::vector<std::string>{"i@j:3072"}));
  const auto& rel = std::get<FuseRelation>(state.stage("D").relations.at(0));
  EXPECT_EQ(rel.parents, (std::vector<std::string>{"i", "j"}));
  EXPECT_EQ(rel.fused, "i@j");
  EXPECT_EQ(state.stage("D").leaf_axes[0].kind, ir::IterKind::DataPar);
}

TEST(Fuse, FusesSplitPiecesAndKeepsTheOtherAxesInPlace) {
  LoopState state =
      apply_steps(testing::matmul_relu(),
                  {Split{"C", "i", 8, false}, Split{"C", "j", 4, false},
                   Reorder{"C", {"i.o", "j.o", "i.i", "j.i"}}, Fuse{"C", {"i.o", "j.o"}}});
  EXPECT_EQ(leaves(state, "C"), (std::vector<std::string>{"i.o@j.o:96", "i.i:8", "j.i:4", "k:32"}));
  EXPECT_EQ(state.stage("C").relations.size(), 3U);
}

TEST(Fuse, FusesTwoReductionAxes) {
  LoopState state =
      apply_steps(testing::matmul_relu(), {Split{"C", "k", 4, false}, Fuse{"C", {"k.o", "k.i"}}});
  EXPECT_EQ(leaves(state, "C"), (std::vector<std::string>{"i:64", "j:48", "k.o@k.i:32"}));
  EXPECT_EQ(state.stage("C").leaf_axes[2].kind, ir::IterKind::Reduce);
}

TEST(Fuse, ASingleAxisIsLeftAsItIs) {
  LoopState state = apply_steps(testing::matmul_relu(), {Fuse{"C", {"j"}}});
  EXPECT_EQ(leaves(state, "C"), (std::vector<std::string>{"i:64", "j:48", "k:32"}));
  EXPECT_TRUE(state.stage("C").relations.empty());
}

TEST(Fuse, AStageAttachedAtAFusedAxisMovesToTheFusedAxis) {
  LoopState state =
      apply_steps(testing::matmul_relu(), {ComputeAt{"C", "D", "i"}, Fuse{"D", {"i", "j"}}});
  EXPECT_EQ(state.stage("C").attach_axis, "i@j");
}

TEST(Fuse, RejectsAxesThatAreNotAdjacent) {
  std::string message = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Fuse{"C", {"i", "k"}}});
  });
  EXPECT_NE(message.find("fuse: axes of stage 'C' must be adjacent"), std::string::npos) << message;
}

TEST(Fuse, RejectsAxesOutOfLoopOrder) {
  std::string message = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Fuse{"C", {"j", "i"}}});
  });
  EXPECT_NE(message.find("in loop order"), std::string::npos) << message;
}

TEST(Fuse, RejectsMixingDataParallelAndReductionAxes) {
  std::string message = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Fuse{"C", {"j", "k"}}});
  });
  EXPECT_NE(message.find("fuse: axis 'k' of stage 'C' is a reduction axis"), std::string::npos)
      << message;
}

TEST(Fuse, RejectsAnUnknownAxisAndAnEmptyList) {
  std::string unknown = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Fuse{"D", {"i", "q"}}});
  });
  EXPECT_EQ(unknown, "fuse: stage 'D' has no axis 'q' (axes: i, j)");
  std::string empty = schedule_error([] { apply_steps(testing::matmul_relu(), {Fuse{"D", {}}}); });
  EXPECT_NE(empty.find("fuse: no axes given for stage 'D'"), std::string::npos) << empty;
}

}  // namespace
}  // namespace tensortune::schedule

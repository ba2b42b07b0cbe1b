// SPDX-License-Identifier: Apache-2.0
// tile: split, split, reorder in one step; and its errors.
#include "tensortune/schedule/schedule.h"
#include "unit/schedule/test_workloads.h"

#include <gtest/gtest.h>

namespace tensortune::schedule {
namespace {

using testing::leaves;
using testing::schedule_error;

TEST(Tile, SplitsBothAxesAndPutsTheOuterPiecesFirst) {
  LoopState state = apply_steps(testing::matmul_relu(), {Tile{"C", "i", "j", 8, 4}});
  EXPECT_EQ(leaves(state, "C"),
            (std::vector<std::string>{"i.o:8", "j.o:12", "i.i:8", "j.i:4", "k:32"}));
  const Stage& c = state.stage("C");
  ASSERT_EQ(c.relations.size(), 2U);
  EXPECT_EQ(std::get<SplitRelation>(c.relations[0]).parent, "i");
  EXPECT_EQ(std::get<SplitRelation>(c.relations[1]).parent, "j");
}

TEST(Tile, EqualsTheSplitsAndReorderItStandsFor) {
  LoopState tiled = apply_steps(testing::matmul_relu(), {Tile{"C", "i", "j", 16, 6}});
  LoopState manual =
      apply_steps(testing::matmul_relu(), {Split{"C", "i", 16, false}, Split{"C", "j", 6, false},
                                           Reorder{"C", {"i.o", "j.o", "i.i", "j.i"}}});
  EXPECT_EQ(leaves(tiled, "C"), leaves(manual, "C"));
}

TEST(Tile, RejectsAxesThatAreNotAdjacentWithXOuter) {
  std::string swapped = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Tile{"C", "j", "i", 8, 4}});
  });
  EXPECT_NE(swapped.find("tile: axes 'j' and 'i' of stage 'C' must be adjacent"), std::string::npos)
      << swapped;
  std::string apart = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Tile{"C", "i", "k", 8, 4}});
  });
  EXPECT_NE(apart.find("must be adjacent"), std::string::npos) << apart;
}

TEST(Tile, RejectsANonPositiveFactorAndAnUnknownAxis) {
  std::string factor = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Tile{"C", "i", "j", 8, 0}});
  });
  EXPECT_NE(factor.find("tile: factor must be positive"), std::string::npos) << factor;
  std::string axis = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Tile{"C", "i", "z", 8, 2}});
  });
  EXPECT_EQ(axis, "tile: stage 'C' has no axis 'z' (axes: i, j, k)");
}

}  // namespace
}  // namespace tensortune::schedule

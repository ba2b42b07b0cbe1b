// SPDX-License-Identifier: Apache-2.0
// Reduction axes bound to threadIdx.x (cross-thread reductions): what lowering accepts (the init
// store stays outside the thread loop, ir::eval keeps the serial meaning) and what it refuses
// with a ScheduleError naming the stage and axis, so the search drops such candidates.
#include "lower_test_util.h"

namespace tensortune::lower {
namespace {

using schedule::Annotate;
using schedule::Reorder;
using schedule::Split;

const target::Target& gpu() {
  static const target::Target kTarget = target::Target::parse("cuda -arch=sm_90");
  return kTarget;
}

std::string lower_error(const schedule::LoopState& state) {
  try {
    lower(state, gpu(), "f");
  } catch (const ScheduleError& e) {
    return e.what();
  }
  return "";
}

/// Rows of softmax_max on blocks (`rows` per block on threadIdx.y), its reduction split by
/// `threads` with the inner part on threadIdx.x, in `order` (names after the splits).
std::vector<schedule::Step> row_max_steps(int64_t threads,
                                          int64_t rows,
                                          const std::vector<std::string>& order) {
  std::vector<schedule::Step> steps = {Split{"softmax_max", "rk", threads, false}};
  if (rows > 1) {
    steps.emplace_back(Split{"softmax_max", "i", rows, false});
    steps.emplace_back(Annotate{"softmax_max", "i.i", ir::ForKind::ThreadY});
  }
  steps.emplace_back(Reorder{"softmax_max", order});
  steps.emplace_back(Annotate{"softmax_max", order[0], ir::ForKind::BlockX});
  steps.emplace_back(Annotate{"softmax_max", "rk.i", ir::ForKind::ThreadX});
  return steps;
}

TEST(CrossThreadReduction, LowersWithTheInitOutsideTheThreadLoop) {
  const te::Workload w = te::make_workload("softmax:M=4,N=100");
  const ir::LoweredFunc f =
      lower(schedule::apply_steps(w, row_max_steps(64, 1, {"i", "rk.i", "rk.o"})), gpu(), "f");
  const std::string text = ir::to_string(f);
  const size_t init = text.find("softmax_max[i] = float32(-inf)");
  const size_t loop = text.find("(rk.i, 0, 64) threadIdx.x");
  ASSERT_NE(init, std::string::npos) << text;
  ASSERT_NE(loop, std::string::npos) << text;
  EXPECT_LT(init, loop) << text;
  EXPECT_NE(text.find("softmax_max[i] = max(softmax_max[i], A["), std::string::npos) << text;
  EXPECT_TRUE(runs_like_reference(w, f));
}

TEST(CrossThreadReduction, LowersWithRowsPerBlockOnThreadIdxY) {
  const te::Workload w = te::make_workload("softmax:M=6,N=40");
  const ir::LoweredFunc f = lower(
      schedule::apply_steps(w, row_max_steps(16, 2, {"i.o", "i.i", "rk.i", "rk.o"})), gpu(), "f");
  EXPECT_TRUE(runs_like_reference(w, f));
}

TEST(CrossThreadReduction, RefusesAnIndexThatChangesInsideTheThreadLoop) {
  // The row loop i.i is inside the reduction loop: each thread would update two rows.
  const te::Workload w = te::make_workload("softmax:M=6,N=40");
  std::vector<schedule::Step> steps = {Split{"softmax_max", "rk", 16, false},
                                       Split{"softmax_max", "i", 2, false},
                                       Reorder{"softmax_max", {"i.o", "rk.i", "i.i", "rk.o"}},
                                       Annotate{"softmax_max", "i.o", ir::ForKind::BlockX},
                                       Annotate{"softmax_max", "rk.i", ir::ForKind::ThreadX}};
  const std::string message = lower_error(schedule::apply_steps(w, steps));
  EXPECT_NE(message.find("bind: axis 'rk.i' of stage 'softmax_max' (threadIdx.x) reduces into "
                         "'softmax_max' at an index that changes inside it"),
            std::string::npos)
      << message;
}

TEST(CrossThreadReduction, RefusesAReductionNotEveryThreadReaches) {
  // 4 rows per block over 6 rows: the last block guards rows 6 and 7 by threadIdx.y, and the
  // combine's barriers would be in a divergent branch.
  const te::Workload w = te::make_workload("softmax:M=6,N=40");
  const std::string message =
      lower_error(schedule::apply_steps(w, row_max_steps(16, 4, {"i.o", "i.i", "rk.i", "rk.o"})));
  EXPECT_NE(message.find("axis 'rk.i' of stage 'softmax_max'"), std::string::npos) << message;
  EXPECT_NE(message.find("which depends on threadIdx"), std::string::npos) << message;
  EXPECT_NE(message.find("every thread of the block must reach"), std::string::npos) << message;
}

TEST(CrossThreadReduction, RefusesThreadIdxYOnAReductionAxis) {
  // The schedule step refuses this already; a state built another way is refused by lowering.
  const te::Workload w = te::make_workload("softmax:M=4,N=40");
  schedule::LoopState state = schedule::apply_steps(w, {Split{"softmax_max", "rk", 8, false}});
  schedule::Stage& stage = state.mutable_stage("softmax_max");
  stage.leaf_axes[static_cast<size_t>(stage.leaf_index("rk.i"))].annotation = ir::ForKind::ThreadY;
  const std::string message = lower_error(state);
  EXPECT_NE(message.find("axis 'rk.i' of stage 'softmax_max' (threadIdx.y)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("only a loop bound to threadIdx.x can reduce across threads"),
            std::string::npos)
      << message;
}

TEST(CrossThreadReduction, RefusesAThreadLoopInsideTheReduction) {
  // C's j bound to threadIdx.y inside the reduction over k.i: the updated element changes with j.
  std::vector<schedule::Step> steps = {
      Split{"C", "k", 4, false}, Reorder{"C", {"i", "k.i", "j", "k.o"}},
      Annotate{"C", "i", ir::ForKind::BlockX}, Annotate{"C", "k.i", ir::ForKind::ThreadX},
      Annotate{"C", "j", ir::ForKind::ThreadY}};
  const std::string message = lower_error(schedule::apply_steps(matmul_workload(4, 4, 16), steps));
  EXPECT_NE(message.find("bind: axis 'k.i' of stage 'C' (threadIdx.x)"), std::string::npos)
      << message;
}

TEST(CrossThreadReduction, IsStillRefusedOnACpu) {
  schedule::LoopState state = schedule::apply_steps(te::make_workload("softmax:M=4,N=40"),
                                                    row_max_steps(8, 1, {"i", "rk.i", "rk.o"}));
  try {
    lower(state, target::Target::parse("llvm -mcpu=znver4"), "f");
    FAIL() << "lowered a thread binding for a CPU";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("is a CPU"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tensortune::lower

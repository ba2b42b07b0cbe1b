// SPDX-License-Identifier: Apache-2.0
// Applying whole schedules: step order, the workload key check and the readable listing.
#include "tensortune/schedule/schedule.h"

#include "unit/schedule/test_workloads.h"

#include <gtest/gtest.h>

namespace tensortune::schedule {
namespace {

using testing::leaves;
using testing::schedule_error;

// A CPU sketch in the style of Ansor's multi-level tiling with a local write cache.
std::vector<Step> cpu_sketch() {
  return {CacheWrite{"C", ir::MemoryScope::Local},
          Tile{"C", "i", "j", 16, 8},
          Fuse{"C", {"i.o", "j.o"}},
          Annotate{"C", "i.o@j.o", ir::ForKind::Parallel},
          ComputeAt{"C.local", "C", "i.o@j.o"},
          Split{"C.local", "k", 4, false},
          Reorder{"C.local", {"k.o", "i", "k.i", "j"}},
          Annotate{"C.local", "j", ir::ForKind::Vectorized},
          PragmaUnroll{"C.local", "k.o", 16},
          ComputeInline{"D"}};
}

TEST(Schedule, TheEmptyScheduleIsTheInitialState) {
  te::Workload w = testing::matmul_relu();
  LoopState state = apply_steps(w, {});
  EXPECT_EQ(state.stages().size(), LoopState(w).stages().size());
  EXPECT_EQ(leaves(state, "C"), (std::vector<std::string>{"i:64", "j:48", "k:32"}));
}

TEST(Schedule, AppliesStepsInOrder) {
  te::Tensor a = te::placeholder({64, 32}, ir::DataType::float32(), "A");
  te::Tensor b = te::placeholder({32, 48}, ir::DataType::float32(), "B");
  ir::IterVar rk = te::reduce_axis(32, "k");
  te::Tensor c = te::compute(
      {64, 48},
      [&](const std::vector<ir::Var>& ax) {
        return te::sum(a(ax[0], rk.var) * b(rk.var, ax[1]), {rk});
      },
      "C", "matmul");
  te::Tensor d = te::compute(
      {64, 48}, [&](const std::vector<ir::Var>& ax) { return c(ax[0], ax[1]) + 1.0f; }, "D");
  te::Tensor e = te::compute(
      {64, 48}, [&](const std::vector<ir::Var>& ax) { return d(ax[0], ax[1]) * 2.0f; }, "E");
  te::Workload w("sketch", {a, b}, {e});
  std::vector<Step> steps = cpu_sketch();
  steps.back() = ComputeInline{"D"};
  LoopState state = apply_steps(w, steps);
  EXPECT_EQ(leaves(state, "C"), (std::vector<std::string>{"i.o@j.o:24", "i.i:16", "j.i:8"}));
  EXPECT_EQ(leaves(state, "C.local"), (std::vector<std::string>{"k.o:8", "i:64", "k.i:4", "j:48"}));
  EXPECT_EQ(state.stage("C.local").attach_axis, "i.o@j.o");
  EXPECT_EQ(state.stage("C").leaf_axes[0].annotation, ir::ForKind::Parallel);
  EXPECT_EQ(state.stage("C.local").leaf_axes[3].annotation, ir::ForKind::Vectorized);
  EXPECT_EQ(state.stage("C.local").leaf_axes[0].auto_unroll_max_step, 16);
  EXPECT_EQ(state.stage("D").attach, AttachKind::Inline);
}

TEST(Schedule, AStepThatFailsStopsTheSchedule) {
  std::vector<Step> steps = {Split{"C", "i", 8, false}, Split{"C", "i", 8, false}};
  EXPECT_THROW(apply_steps(testing::matmul(), steps), ScheduleError);
}

TEST(Schedule, ApplyScheduleChecksTheWorkloadKey) {
  te::Workload w = testing::matmul();
  Schedule good{w.key(), {Split{"C", "i", 8, false}}};
  EXPECT_EQ(leaves(apply_schedule(w, good), "C"),
            (std::vector<std::string>{"i.o:8", "i.i:8", "j:48", "k:32"}));
  Schedule other{testing::matmul(32, 48, 32).key(), {}};
  std::string message = schedule_error([&] { apply_schedule(w, other); });
  EXPECT_NE(message.find(w.key()), std::string::npos) << message;
  EXPECT_NE(message.find(other.workload_key), std::string::npos) << message;
}

TEST(Schedule, ToStringListsOneStepPerLine) {
  Schedule schedule{"k", {Split{"C", "i", 8, false}, Annotate{"C", "i.i", ir::ForKind::Unrolled}}};
  EXPECT_EQ(to_string(schedule), "split C.i by 8\nunroll C.i.i\n");
  EXPECT_EQ(to_string(Schedule{"k", {}}), "");
}

}  // namespace
}  // namespace tensortune::schedule

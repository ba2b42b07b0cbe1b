// SPDX-License-Identifier: Apache-2.0
// compute_at: the attach point it records, and its errors.
#include "tensortune/schedule/schedule.h"
#include "unit/schedule/test_workloads.h"

#include <gtest/gtest.h>

namespace tensortune::schedule {
namespace {

using testing::leaves;
using testing::schedule_error;

TEST(ComputeAt, AttachesAProducerAtALoopOfItsConsumer) {
  LoopState state =
      apply_steps(testing::matmul_relu(), {Split{"D", "i", 8, false}, ComputeAt{"C", "D", "i.o"}});
  const Stage& c = state.stage("C");
  EXPECT_EQ(c.attach, AttachKind::At);
  EXPECT_EQ(c.attach_stage, "D");
  EXPECT_EQ(c.attach_axis, "i.o");
  EXPECT_EQ(leaves(state, "C"), (std::vector<std::string>{"i:64", "j:48", "k:32"}));
}

TEST(ComputeAt, ComputeAtAgainMovesTheStage) {
  LoopState state =
      apply_steps(testing::matmul_relu(), {ComputeAt{"C", "D", "i"}, ComputeAt{"C", "D", "j"}});
  EXPECT_EQ(state.stage("C").attach_axis, "j");
}

TEST(ComputeAt, RejectsATargetThatDoesNotReadTheStage) {
  std::string message = schedule_error([] {
    apply_steps(testing::matmul_relu(), {ComputeAt{"C", "C", "i"}});
  });
  EXPECT_EQ(message, "compute_at: stage 'C' does not read 'C' (consumers: D)");
  std::string placeholder = schedule_error([] {
    apply_steps(testing::matmul_relu(), {ComputeAt{"C", "A", "i"}});
  });
  EXPECT_NE(placeholder.find("compute_at: stage 'A' does not read 'C'"), std::string::npos)
      << placeholder;
}

TEST(ComputeAt, AcceptsATargetThatReadsTheStageThroughInlinedStages) {
  // C.local -> C (inlined) -> D: D reads the accumulator once C is inlined into it.
  LoopState state =
      apply_steps(testing::matmul_relu(), {CacheWrite{"C", ir::MemoryScope::Local},
                                           ComputeInline{"C"}, ComputeAt{"C.local", "D", "i"}});
  EXPECT_EQ(state.stage("C.local").attach_stage, "D");
  // Not through a stage that is computed, not inlined.
  std::string message = schedule_error([] {
    apply_steps(testing::matmul_relu(),
                {CacheWrite{"C", ir::MemoryScope::Local}, ComputeAt{"C.local", "D", "i"}});
  });
  EXPECT_EQ(message, "compute_at: stage 'D' does not read 'C.local' (consumers: C)");
}

TEST(ComputeAt, AcceptsATargetWhoseLoopComputesAConsumerOfTheStage) {
  // A.local -> C.local, which C computes at its loop j.o: A.local can be computed at C's i.o or
  // j.o, but not at j.i, inside the loop where C.local was already computed.
  const std::vector<Step> base = {CacheWrite{"C", ir::MemoryScope::Local},
                                  CacheRead{"A", ir::MemoryScope::Local, {}},
                                  Tile{"C", "i", "j", 8, 8}, ComputeAt{"C.local", "C", "j.o"}};
  for (const char* axis : {"i.o", "j.o"}) {
    std::vector<Step> steps = base;
    steps.emplace_back(ComputeAt{"A.local", "C", axis});
    EXPECT_EQ(apply_steps(testing::matmul_relu(), steps).stage("A.local").attach_axis, axis);
  }
  std::string message = schedule_error([&] {
    std::vector<Step> steps = base;
    steps.emplace_back(ComputeAt{"A.local", "C", "j.i"});
    apply_steps(testing::matmul_relu(), steps);
  });
  EXPECT_EQ(message, "compute_at: stage 'C' does not read 'A.local' (consumers: C.local)");
}

TEST(ComputeAt, RejectsAnOutputAndAPlaceholder) {
  std::string output = schedule_error([] {
    apply_steps(testing::matmul(),
                {CacheWrite{"C", ir::MemoryScope::Local}, ComputeAt{"C", "C.local", "i"}});
  });
  EXPECT_NE(output.find("compute_at: stage 'C' is an output"), std::string::npos) << output;
  std::string input = schedule_error([] {
    apply_steps(testing::matmul_relu(), {ComputeAt{"A", "C", "i"}});
  });
  EXPECT_NE(input.find("compute_at: stage 'A' is a placeholder"), std::string::npos) << input;
}

TEST(ComputeAt, RejectsAnAxisThatIsNotALeafOfTheTarget) {
  std::string message = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Split{"D", "i", 8, false}, ComputeAt{"C", "D", "i"}});
  });
  EXPECT_EQ(message, "compute_at: stage 'D' has no axis 'i' (axes: i.o, i.i, j)");
}

TEST(ComputeAt, RejectsAttachingAConsumerInsideItsProducer) {
  // Every attach edge points from a producer to a consumer, so a consumer can never be put
  // inside a stage computed inside it: the consumer check catches it first.
  LoopState state = apply_steps(testing::elemwise_chain(), {ComputeAt{"B", "C", "i"}});
  EXPECT_EQ(state.stage("B").attach_stage, "C");
  std::string message = schedule_error([&] { schedule::apply(state, ComputeAt{"C", "B", "i"}); });
  EXPECT_NE(message.find("compute_at: stage 'C' is an output"), std::string::npos) << message;
  LoopState chain = apply_steps(testing::matmul_relu(), {ComputeAt{"C", "D", "i"}});
  std::string reversed = schedule_error([&] { schedule::apply(chain, ComputeAt{"D", "C", "i"}); });
  EXPECT_NE(reversed.find("'D'"), std::string::npos) << reversed;
}

TEST(ComputeAt, RejectsAnInlinedTarget) {
  te::Tensor a = te::placeholder({8}, ir::DataType::float32(), "A");
  te::Tensor b = te::compute(
      {8}, [&](const std::vector<ir::Var>& x) { return a(x[0]) + 1.0f; }, "B");
  te::Tensor c = te::compute(
      {8}, [&](const std::vector<ir::Var>& x) { return b(x[0]) * 2.0f; }, "C");
  te::Tensor d = te::compute(
      {8}, [&](const std::vector<ir::Var>& x) { return c(x[0]) - 1.0f; }, "D");
  te::Workload w("chain", {a}, {d});
  std::string message = schedule_error([&] {
    apply_steps(w, {ComputeInline{"C"}, ComputeAt{"B", "C", "i"}});
  });
  EXPECT_EQ(message, "compute_at: stage 'C' is inlined and has no loops to compute 'B' in");
}

}  // namespace
}  // namespace tensortune::schedule

// SPDX-License-Identifier: Apache-2.0
// cache_write: the new cache stage, the rewritten original stage, and its errors.
#include "tensortune/ir/ir_printer.h"
#include "tensortune/schedule/schedule.h"
#include "unit/schedule/test_workloads.h"

#include <gtest/gtest.h>

namespace tensortune::schedule {
namespace {

using testing::leaves;
using testing::schedule_error;

TEST(CacheWrite, AddsACacheStageRightBeforeTheStage) {
  te::Workload w = testing::matmul_relu();
  LoopState state = apply_steps(w, {CacheWrite{"C", ir::MemoryScope::Local}});
  ASSERT_EQ(state.stages().size(), 5U);
  EXPECT_EQ(state.stages()[2].name, "C.local");
  EXPECT_EQ(state.stages()[3].name, "C");
  EXPECT_EQ(leaves(state, "C.local"), (std::vector<std::string>{"i:64", "j:48", "k:32"}));
  EXPECT_EQ(leaves(state, "C"), (std::vector<std::string>{"i:64", "j:48"}));
  EXPECT_FALSE(state.stage("C.local").is_output);
  EXPECT_EQ(state.stage("C.local").attach, AttachKind::Root);
}

TEST(CacheWrite, TheCacheComputesTheOriginalBodyIntoAScopedBuffer) {
  te::Workload w = testing::matmul_relu();
  te::OperationRef original = w.find_op("C");
  LoopState state = apply_steps(w, {CacheWrite{"C", ir::MemoryScope::Local}});
  const te::Operation& cache = *state.stage("C.local").op;
  EXPECT_EQ(cache.name, "C.local");
  EXPECT_EQ(cache.output.name(), "C.local");
  EXPECT_EQ(cache.output.scope(), ir::MemoryScope::Local);
  EXPECT_EQ(cache.output.shape(), original->output.shape());
  EXPECT_FALSE(cache.output.same_as(original->output));
  EXPECT_TRUE(cache.body.same_as(original->body));
  ASSERT_EQ(cache.axes.size(), 2U);
  EXPECT_TRUE(cache.axes[0].var.same_as(original->axes[0].var));
  EXPECT_EQ(cache.tag, "matmul");
}

TEST(CacheWrite, TheStageBecomesACopyKeepingItsOutputBuffer) {
  te::Workload w = testing::matmul_relu();
  te::OperationRef original = w.find_op("C");
  LoopState state = apply_steps(w, {CacheWrite{"C", ir::MemoryScope::Local}});
  const te::Operation& copy = *state.stage("C").op;
  const te::Operation& cache = *state.stage("C.local").op;
  EXPECT_EQ(copy.name, "C");
  EXPECT_EQ(copy.tag, "cache_copy");
  EXPECT_TRUE(copy.output.same_as(original->output));
  ASSERT_EQ(copy.axes.size(), 2U);
  EXPECT_TRUE(copy.axes[1].var.same_as(original->axes[1].var));
  EXPECT_EQ(copy.reduce(), nullptr);
  const auto* load = copy.body.as<ir::Load>();
  ASSERT_NE(load, nullptr);
  EXPECT_TRUE(load->buffer.same_as(cache.output));
  EXPECT_TRUE(load->indices[0].same_as(original->axes[0].var));
  ASSERT_EQ(copy.inputs.size(), 1U);
  EXPECT_EQ(copy.inputs[0].get(), &cache);
  EXPECT_EQ(state.consumers("C.local"), (std::vector<std::string>{"C"}));
  EXPECT_EQ(state.consumers("C"), (std::vector<std::string>{"D"}));
  EXPECT_EQ(state.producers("C.local"), (std::vector<std::string>{"A", "B"}));
}

TEST(CacheWrite, TheCacheStageCanBeScheduledAndComputedAtTheStage) {
  LoopState state = apply_steps(
      testing::matmul(), {CacheWrite{"C", ir::MemoryScope::Local}, Split{"C", "j", 8, false},
                          ComputeAt{"C.local", "C", "j.o"}, Split{"C.local", "k", 4, false}});
  EXPECT_EQ(state.stage("C.local").attach_stage, "C");
  EXPECT_EQ(state.stage("C.local").attach_axis, "j.o");
  EXPECT_EQ(leaves(state, "C.local"), (std::vector<std::string>{"i:64", "j:48", "k.o:8", "k.i:4"}));
}

TEST(CacheWrite, ScopeNamesTheStageAndTakenNamesGetASuffix) {
  LoopState state = apply_steps(testing::matmul(), {CacheWrite{"C", ir::MemoryScope::Shared},
                                                    CacheWrite{"C", ir::MemoryScope::Shared}});
  ASSERT_EQ(state.stages().size(), 5U);
  EXPECT_EQ(state.stages()[2].name, "C.shared");
  EXPECT_EQ(state.stages()[3].name, "C.shared.1");
  EXPECT_EQ(state.stages()[4].name, "C");
  EXPECT_EQ(state.stage("C.shared").op->output.scope(), ir::MemoryScope::Shared);
  EXPECT_EQ(state.consumers("C.shared"), (std::vector<std::string>{"C.shared.1"}));
}

TEST(CacheWrite, RejectsAStageThatWasAlreadyScheduled) {
  for (const Step& earlier :
       {Step{Split{"C", "i", 8, false}}, Step{Reorder{"C", {"j", "i"}}},
        Step{Annotate{"C", "i", ir::ForKind::Parallel}}, Step{ComputeAt{"C", "D", "i"}}}) {
    std::string message = schedule_error([&] {
      apply_steps(testing::matmul_relu(), {earlier, CacheWrite{"C", ir::MemoryScope::Local}});
    });
    EXPECT_NE(message.find("cache_write: stage 'C' was already scheduled"), std::string::npos)
        << to_string(earlier) << ": " << message;
  }
}

TEST(CacheWrite, RejectsAPlaceholder) {
  std::string message = schedule_error([] {
    apply_steps(testing::matmul(), {CacheWrite{"A", ir::MemoryScope::Local}});
  });
  EXPECT_NE(message.find("cache_write: stage 'A' is a placeholder"), std::string::npos) << message;
}

TEST(CacheWrite, ABlockedCacheComputesOverTheBlockedAxes) {
  te::Workload w = testing::matmul_relu();  // C [64, 48]
  LoopState state = apply_steps(w, {CacheWrite{"C", ir::MemoryScope::Local, {{0, 16}}}});
  const te::Operation& cache = *state.stage("C.local").op;
  EXPECT_EQ(cache.output.shape(), (std::vector<int64_t>{4, 48, 16}));
  EXPECT_EQ(leaves(state, "C.local"), (std::vector<std::string>{"i:4", "j:48", "i.b:16", "k:32"}));
  // The body reads A at row i * 16 + i.b; C copies C.local[i / 16, j, i % 16].
  EXPECT_NE(ir::to_string(cache.body).find("((i*16) + i.b)"), std::string::npos)
      << ir::to_string(cache.body);
  EXPECT_EQ(ir::to_string(state.stage("C").op->body), "C.local[(i/16), j, (i % 16)]");
  std::string bad = schedule_error([] {
    apply_steps(testing::matmul_relu(), {CacheWrite{"C", ir::MemoryScope::Local, {{1, 7}}}});
  });
  EXPECT_EQ(bad, "cache_write: block factor 7 does not divide dimension 1 of 'C' (extent 48)");
}

TEST(CacheWrite, APaddedBlockRoundsTheBlocksUpAndClampsTheBodysIndex) {
  te::Workload w = testing::matmul_relu();  // C [64, 48]
  LoopState state =
      apply_steps(w, {CacheWrite{"C", ir::MemoryScope::Local, {{1, 7, false, true}}}});
  const te::Operation& cache = *state.stage("C.local").op;
  EXPECT_EQ(cache.output.shape(), (std::vector<int64_t>{64, 7, 7}));  // 49 columns, 1 of padding
  // The padding computes column 47 again, so B is never read past its last column.
  EXPECT_NE(ir::to_string(cache.body).find("min(((j*7) + j.b), 47)"), std::string::npos)
      << ir::to_string(cache.body);
  EXPECT_EQ(ir::to_string(state.stage("C").op->body), "C.local[i, (j/7), (j % 7)]");
  // A padded block that divides the extent is the plain one.
  LoopState divides =
      apply_steps(w, {CacheWrite{"C", ir::MemoryScope::Local, {{1, 16, false, true}}}});
  EXPECT_EQ(ir::to_string(divides.stage("C.local").op->body).find("min("), std::string::npos);
}

}  // namespace
}  // namespace tensortune::schedule

// SPDX-License-Identifier: Apache-2.0
// cache_read: the copy stage, the redirected readers, and its errors.
#include "tensortune/ir/ir_printer.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/schedule/schedule.h"
#include "unit/schedule/test_workloads.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace tensortune::schedule {
namespace {

using testing::leaves;
using testing::schedule_error;

TEST(CacheRead, AddsACopyStageRightAfterTheTensor) {
  te::Workload w = testing::matmul_relu();
  LoopState state = apply_steps(w, {CacheRead{"A", ir::MemoryScope::Shared, {"C"}}});
  ASSERT_EQ(state.stages().size(), 5U);
  EXPECT_EQ(state.stages()[0].name, "A");
  EXPECT_EQ(state.stages()[1].name, "A.shared");
  EXPECT_EQ(leaves(state, "A.shared"), (std::vector<std::string>{"i:64", "j:32"}));
  const te::Operation& copy = *state.stage("A.shared").op;
  EXPECT_EQ(copy.tag, "cache_copy");
  EXPECT_EQ(copy.output.name(), "A.shared");
  EXPECT_EQ(copy.output.scope(), ir::MemoryScope::Shared);
  EXPECT_EQ(copy.output.shape(), (std::vector<int64_t>{64, 32}));
  const auto* load = copy.body.as<ir::Load>();
  ASSERT_NE(load, nullptr);
  EXPECT_TRUE(load->buffer.same_as(w.find_op("A")->output));
  EXPECT_TRUE(load->indices[1].same_as(copy.axes[1].var));
}

TEST(CacheRead, ReadersLoadTheCopyAndKeepEverythingElse) {
  te::Workload w = testing::matmul_relu();
  te::OperationRef original = w.find_op("C");
  LoopState state =
      apply_steps(w, {Split{"C", "i", 8, false}, CacheRead{"A", ir::MemoryScope::Shared, {}}});
  EXPECT_EQ(state.consumers("A"), (std::vector<std::string>{"A.shared"}));
  EXPECT_EQ(state.consumers("A.shared"), (std::vector<std::string>{"C"}));
  EXPECT_EQ(state.producers("C"), (std::vector<std::string>{"A.shared", "B"}));
  const te::Operation& reader = *state.stage("C").op;
  EXPECT_EQ(reader.name, "C");
  EXPECT_EQ(reader.tag, "matmul");
  EXPECT_TRUE(reader.output.same_as(original->output));
  EXPECT_TRUE(reader.axes[0].var.same_as(original->axes[0].var));
  ASSERT_NE(reader.reduce(), nullptr);
  EXPECT_TRUE(reader.reduce()->axes[0].var.same_as(original->reduce()->axes[0].var));
  EXPECT_EQ(reader.inputs[0]->name, "A.shared");
  EXPECT_EQ(leaves(state, "C"), (std::vector<std::string>{"i.o:8", "i.i:8", "j:48", "k:32"}));
  // The workload itself is not changed.
  EXPECT_TRUE(w.find_op("C")->body.same_as(original->body));
}

TEST(CacheRead, OnlyTheListedReadersAreRedirected) {
  LoopState state =
      apply_steps(testing::elemwise_chain(), {CacheRead{"A", ir::MemoryScope::Local, {"C"}}});
  EXPECT_EQ(state.consumers("A"), (std::vector<std::string>{"A.local", "B"}));
  EXPECT_EQ(state.consumers("A.local"), (std::vector<std::string>{"C"}));
  EXPECT_EQ(state.producers("C"), (std::vector<std::string>{"A.local", "B"}));
}

TEST(CacheRead, CopiesAComputedTensorWithItsAxisNames) {
  LoopState state =
      apply_steps(testing::matmul_relu(), {CacheRead{"C", ir::MemoryScope::Local, {"D"}}});
  EXPECT_EQ(state.stages()[3].name, "C.local");
  EXPECT_EQ(leaves(state, "C.local"), (std::vector<std::string>{"i:64", "j:48"}));
  EXPECT_EQ(state.consumers("C"), (std::vector<std::string>{"C.local"}));
  EXPECT_EQ(state.consumers("C.local"), (std::vector<std::string>{"D"}));
}

TEST(CacheRead, ATakenNameGetsASuffix) {
  LoopState state =
      apply_steps(testing::elemwise_chain(), {CacheRead{"A", ir::MemoryScope::Shared, {"B"}},
                                              CacheRead{"A", ir::MemoryScope::Shared, {"C"}}});
  EXPECT_EQ(state.stages()[1].name, "A.shared.1");
  EXPECT_EQ(state.stages()[2].name, "A.shared");
  EXPECT_EQ(state.consumers("A"), (std::vector<std::string>{"A.shared.1", "A.shared"}));
  EXPECT_EQ(state.consumers("A.shared.1"), (std::vector<std::string>{"C"}));
}

TEST(CacheRead, RejectsAReaderThatDoesNotReadTheTensor) {
  std::string message = schedule_error([] {
    apply_steps(testing::matmul_relu(), {CacheRead{"A", ir::MemoryScope::Shared, {"D"}}});
  });
  EXPECT_EQ(message, "cache_read: stage 'D' does not read 'A' (consumers: C)");
}

TEST(CacheRead, RejectsAReaderListedTwiceAndATensorWithoutConsumers) {
  std::string twice = schedule_error([] {
    apply_steps(testing::elemwise_chain(), {CacheRead{"A", ir::MemoryScope::Local, {"B", "B"}}});
  });
  EXPECT_EQ(twice, "cache_read: reader 'B' listed twice");
  std::string none = schedule_error([] {
    apply_steps(testing::matmul_relu(), {CacheRead{"D", ir::MemoryScope::Local, {}}});
  });
  EXPECT_EQ(none, "cache_read: stage 'D' has no consumers");
}

/// The indices (printed) with which stage `reader` loads `buffer`; empty when it does not.
std::vector<std::string> indices_read(const LoopState& state,
                                      const std::string& reader,
                                      const ir::Buffer& buffer) {
  std::vector<std::string> out;
  ir::post_order_visit(state.stage(reader).op->body, [&](const ir::Expr& e) {
    const auto* l = e.as<ir::Load>();
    if (l != nullptr && l->buffer.same_as(buffer) && out.empty()) {
      for (const ir::Expr& index : l->indices) {
        out.push_back(ir::to_string(index));
      }
    }
  });
  return out;
}

TEST(CacheRead, ABlockedCopyHasTheBlockedShapeAndReadersMapTheirIndices) {
  te::Workload w = testing::matmul_relu();  // A [64, 32], B [32, 48]
  LoopState state = apply_steps(w, {CacheRead{"B", ir::MemoryScope::Local, {}, {{1, 16}}}});
  const te::Operation& copy = *state.stage("B.local").op;
  EXPECT_EQ(copy.output.shape(), (std::vector<int64_t>{32, 3, 16}));
  EXPECT_EQ(leaves(state, "B.local"), (std::vector<std::string>{"i:32", "j:3", "j.b:16"}));
  // copy[i, j, j.b] = B[i, j * 16 + j.b]
  const auto* load = copy.body.as<ir::Load>();
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(ir::to_string(load->indices[1]), "((j*16) + j.b)");
  // C reads B.local[k, j / 16, j % 16].
  EXPECT_EQ(indices_read(state, "C", copy.output),
            (std::vector<std::string>{"k", "(j/16)", "(j % 16)"}));
}

TEST(CacheRead, AnOuterFirstBlockPutsThePanelIndexFirst) {
  te::Workload w = testing::matmul_relu();  // B [32, 48] read at [k, j]
  LoopState state = apply_steps(w, {CacheRead{"B", ir::MemoryScope::Local, {}, {{1, 16, true}}}});
  const te::Operation& copy = *state.stage("B.local").op;
  // Panels of 16 columns, each [32, 16] contiguous: [48 / 16, 32, 16].
  EXPECT_EQ(copy.output.shape(), (std::vector<int64_t>{3, 32, 16}));
  EXPECT_EQ(leaves(state, "B.local"), (std::vector<std::string>{"j:3", "i:32", "j.b:16"}));
  const auto* load = copy.body.as<ir::Load>();
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(ir::to_string(load->indices[0]), "i");
  EXPECT_EQ(ir::to_string(load->indices[1]), "((j*16) + j.b)");
  // C reads B.local[j / 16, k, j % 16].
  EXPECT_EQ(indices_read(state, "C", copy.output),
            (std::vector<std::string>{"(j/16)", "k", "(j % 16)"}));
}

TEST(CacheRead, APaddedBlockRoundsThePanelsUpAndCopiesZerosPastTheTensor) {
  te::Workload w = testing::matmul_relu(64, 40);  // B [32, 40] read at [k, j]
  LoopState state =
      apply_steps(w, {CacheRead{"B", ir::MemoryScope::Local, {}, {{1, 16, true, true}}}});
  const te::Operation& copy = *state.stage("B.local").op;
  EXPECT_EQ(copy.output.shape(), (std::vector<int64_t>{3, 32, 16}));
  // copy[j, i, j.b] = j * 16 + j.b <= 39 ? B[i, min(j * 16 + j.b, 39)] : 0
  const auto* select = copy.body.as<ir::Select>();
  ASSERT_NE(select, nullptr) << ir::to_string(copy.body);
  EXPECT_EQ(ir::to_string(select->condition), "(((j*16) + j.b) <= 39)");
  EXPECT_EQ(ir::to_string(select->false_value), "0f");
  EXPECT_EQ(indices_read(state, "C", copy.output),
            (std::vector<std::string>{"(j/16)", "k", "(j % 16)"}));
  // A padded block that divides the extent is the plain one.
  LoopState even = apply_steps(testing::matmul_relu(),
                               {CacheRead{"B", ir::MemoryScope::Local, {}, {{1, 16, true, true}}}});
  EXPECT_NE(even.stage("B.local").op->body.as<ir::Load>(), nullptr);
}

TEST(CacheRead, RejectsBlocksThatDoNotFitTheTensor) {
  auto error = [](std::vector<LayoutBlock> blocks) {
    return schedule_error([&] {
      apply_steps(testing::matmul_relu(), {CacheRead{"B", ir::MemoryScope::Local, {}, blocks}});
    });
  };
  EXPECT_EQ(error({{1, 5}}),
            "cache_read: block factor 5 does not divide dimension 1 of 'B' (extent 48)");
  EXPECT_EQ(error({{2, 4}}),
            "cache_read: block dimension 2 of 'B' is out of range (it has 2 dimensions)");
  EXPECT_EQ(error({{0, 4}, {0, 2}}), "cache_read: dimension 0 of 'B' is blocked twice");
  EXPECT_EQ(error({{0, 0}}),
            "cache_read: block factor 0 does not divide dimension 0 of 'B' (extent 32)");
}

TEST(CacheRead, RejectsARowPadOrStagesOutsideTheirRange) {
  for (const auto& [field, value, range] : std::vector<std::tuple<std::string, int64_t, int64_t>>{
           {"row_pad", -1, 64}, {"row_pad", 65, 64}, {"stages", -1, 4}, {"stages", 5, 4}}) {
    CacheRead step{"B", ir::MemoryScope::Shared, {}};
    (field == "row_pad" ? step.row_pad : step.stages) = value;
    EXPECT_EQ(schedule_error([&] { apply_steps(testing::matmul_relu(), {step}); }),
              "cache_read: " + field + " " + std::to_string(value) + " of 'B' is outside 0.." +
                  std::to_string(range));
  }
}

}  // namespace
}  // namespace tensortune::schedule

// SPDX-License-Identifier: Apache-2.0
// Semantics of the attachment primitives: compute_at (with bound inference), compute_inline,
// compute_root, cache_write and cache_read.
#include "lower_test_util.h"
#include "tensortune/ir/ops.h"

namespace tensortune::lower {
namespace {

using schedule::Annotate;
using schedule::CacheRead;
using schedule::CacheWrite;
using schedule::ComputeAt;
using schedule::ComputeInline;
using schedule::ComputeRoot;
using schedule::Reorder;
using schedule::Split;
using schedule::Tile;

TEST(LowerAttach, CacheWriteAtRootIsAGlobalScratch) {
  ir::LoweredFunc f = expect_lowers_correctly(matmul_workload(5, 7, 3), {CacheWrite{"C", kLocal}});
  EXPECT_EQ(count_in(f, "allocate"), 1) << ir::to_string(f);
}

TEST(LowerAttach, CacheWriteLocalAtATileLoop) {
  const std::vector<schedule::Step> steps = {CacheWrite{"C", kLocal},
                                             Tile{"C", "i", "j", 4, 8},
                                             ComputeAt{"C.local", "C", "j.o"},
                                             Split{"C.local", "k", 4},
                                             Reorder{"C.local", {"k.o", "k.i", "i", "j"}},
                                             Annotate{"C.local", "j", ir::ForKind::Vectorized}};
  ir::LoweredFunc f = expect_lowers_correctly(matmul_workload(13, 17, 19), steps);
  // One allocation inside the tile loop; the full lowering has one per unswitched copy of the tile.
  ir::LoweredFunc plain = lower_plain(matmul_workload(13, 17, 19), steps);
  EXPECT_EQ(count_in(plain, " local {"), 1) << ir::to_string(plain);
  EXPECT_EQ(count_in(f, " local {"), 4) << ir::to_string(f);
}

TEST(LowerAttach, CacheWriteLocalWithDividingTiles) {
  expect_lowers_correctly(
      matmul_workload(16, 16, 8),
      {CacheWrite{"C", kLocal}, Tile{"C", "i", "j", 4, 8}, ComputeAt{"C.local", "C", "j.o"},
       Annotate{"C", "j.i", ir::ForKind::Vectorized}, Reorder{"C.local", {"k", "j"}},
       Annotate{"C.local", "j", ir::ForKind::Vectorized}});
}

TEST(LowerAttach, CacheReadAtAReductionTileLoop) {
  expect_lowers_correctly(
      matmul_workload(13, 17, 19),
      {CacheRead{"A", kLocal, {}}, CacheRead{"B", kLocal, {}}, Tile{"C", "i", "j", 4, 8},
       Split{"C", "k", 5}, Reorder{"C", {"i.o", "j.o", "k.o", "i.i", "k.i", "j.i"}},
       ComputeAt{"A.local", "C", "k.o"}, ComputeAt{"B.local", "C", "k.o"}});
}

TEST(LowerAttach, BlockedCopiesOfTheOperands) {
  // Packed B panels [k, j / 8, j % 8] read by a vectorized 8-wide j tile, at the root and at a
  // tile loop; and a blocked A (rows in blocks of 4) with its block dimension innermost.
  te::Workload w = matmul_workload(12, 24, 10);
  expect_lowers_correctly(
      w, {CacheRead{"B", kLocal, {}, {{1, 8}}}, Split{"C", "j", 8},
          Reorder{"C", {"i", "j.o", "k", "j.i"}}, Annotate{"C", "j.i", ir::ForKind::Vectorized}});
  expect_lowers_correctly(
      w, {CacheRead{"B", kLocal, {}, {{1, 8}}}, Tile{"C", "i", "j", 4, 8},
          Reorder{"C", {"i.o", "j.o", "i.i", "k", "j.i"}}, ComputeAt{"B.local", "C", "j.o"},
          Annotate{"C", "j.i", ir::ForKind::Vectorized}});
  expect_lowers_correctly(
      w, {CacheRead{"A", kLocal, {}, {{0, 4}}}, CacheRead{"B", kLocal, {}, {{1, 8}, {0, 2}}},
          Split{"C", "i", 4}, Reorder{"C", {"i.o", "j", "k", "i.i"}},
          Annotate{"C", "i.i", ir::ForKind::Vectorized}});
}

// Copies with padded rows (row_pad): the buffers' innermost dimension is wider by the pad, at a
// tile loop and at the root (a global scratch), and every element is still computed right.
TEST(LowerAttach, CopiesWithPaddedRows) {
  te::Workload w = matmul_workload(12, 24, 10);
  CacheRead a{"A", kLocal, {}, {{0, 4}}};
  a.row_pad = 4;
  CacheRead b{"B", kLocal, {}};
  b.row_pad = 3;
  ir::LoweredFunc f = expect_lowers_correctly(
      w, {a, b, Tile{"C", "i", "j", 4, 8}, Split{"C", "k", 5},
          Reorder{"C", {"i.o", "j.o", "k.o", "i.i", "k.i", "j.i"}},
          ComputeAt{"A.local", "C", "k.o"}, ComputeAt{"B.local", "C", "k.o"}});
  const std::string text = ir::to_string(f);
  // A's copy at k.o: [1 block of rows, 5 k, 4 rows + 4]; B's: [5 k, 8 columns + 3].
  EXPECT_NE(text.find("A.local[1, 5, 8]"), std::string::npos) << text;
  EXPECT_NE(text.find("B.local[5, 11]"), std::string::npos) << text;
  ir::LoweredFunc root = expect_lowers_correctly(w, {a, b});
  const std::string root_text = ir::to_string(root);
  EXPECT_NE(root_text.find("A.local[3, 10, 8]"), std::string::npos) << root_text;
  EXPECT_NE(root_text.find("B.local[10, 27]"), std::string::npos) << root_text;
}

TEST(LowerAttach, PanelMajorCopiesOfTheOperands) {
  // B [10, 24] packed as panels [24 / 8, 10, 8] (outer_first), at the root and at a tile loop;
  // and A [12, 10] with two outer_first blocks, [12 / 4, 10 / 2, 4, 2].
  te::Workload w = matmul_workload(12, 24, 10);
  expect_lowers_correctly(
      w, {CacheRead{"B", kLocal, {}, {{1, 8, true}}}, Split{"C", "j", 8},
          Reorder{"C", {"i", "j.o", "k", "j.i"}}, Annotate{"C", "j.i", ir::ForKind::Vectorized}});
  expect_lowers_correctly(
      w, {CacheRead{"B", kLocal, {}, {{1, 8, true}}}, Tile{"C", "i", "j", 4, 8},
          Reorder{"C", {"i.o", "j.o", "i.i", "k", "j.i"}}, ComputeAt{"B.local", "C", "j.o"},
          Annotate{"C", "j.i", ir::ForKind::Vectorized}});
  expect_lowers_correctly(w, {CacheRead{"A", kLocal, {}, {{0, 4, true}, {1, 2, true}}},
                              CacheRead{"B", kLocal, {}, {{0, 5}, {1, 4, true}}}});
}

TEST(LowerAttach, PaddedPanelsOfOperandsNoBlockDivides) {
  // B [10, 21] as panels [3, 10, 8], the last holding 5 columns and 3 zeros; at the root and at a
  // tile loop, C's last column tile guarded. A [12, 10] in blocks of 5 rows: [3, 10, 5].
  te::Workload w = matmul_workload(12, 21, 10);
  expect_lowers_correctly(
      w, {CacheRead{"B", kLocal, {}, {{1, 8, true, true}}}, Split{"C", "j", 8},
          Reorder{"C", {"i", "j.o", "k", "j.i"}}, Annotate{"C", "j.i", ir::ForKind::Vectorized}});
  expect_lowers_correctly(
      w, {CacheRead{"B", kLocal, {}, {{1, 8, true, true}}}, Tile{"C", "i", "j", 4, 8},
          Reorder{"C", {"i.o", "j.o", "i.i", "k", "j.i"}}, ComputeAt{"B.local", "C", "j.o"},
          Annotate{"C", "j.i", ir::ForKind::Vectorized}});
  expect_lowers_correctly(w, {CacheRead{"A", kLocal, {}, {{0, 5, true, true}}},
                              CacheRead{"B", kLocal, {}, {{1, 4, false, true}}}});
}

TEST(LowerAttach, ConvolutionWithBlockedWeightsVectorizedOverOutputChannels) {
  te::Workload w = te::make_workload("conv2d:N=1,C=3,H=6,W=5,K=8,R=3,S=3,stride=1,pad=1");
  expect_lowers_correctly(
      w, {CacheRead{"weight", kLocal, {}, {{0, 4}}}, ComputeInline{"conv_pad"},
          Split{"conv", "f", 4}, Reorder{"conv", {"n", "f.o", "y", "rc", "ry", "rx", "x", "f.i"}},
          Annotate{"conv", "f.i", ir::ForKind::Vectorized}});
}

TEST(LowerAttach, BlockedAccumulatorComputedAtATile) {
  // The accumulator of a conv vectorized over output channels: blocked by 4 channels, computed at
  // a tile of 8 channels x 3 columns, reading weights blocked the same way.
  te::Workload w = te::make_workload("conv2d:N=1,C=3,H=5,W=6,K=16,R=3,S=3,stride=1,pad=1");
  expect_lowers_correctly(
      w,
      {CacheWrite{"conv", kLocal, {{1, 4}}}, CacheRead{"weight", kLocal, {"conv.local"}, {{0, 4}}},
       ComputeInline{"conv_pad"}, Split{"conv", "f", 8}, Split{"conv", "x", 3},
       Reorder{"conv", {"n", "f.o", "y", "x.o", "f.i", "x.i"}},
       ComputeAt{"conv.local", "conv", "x.o"}, Split{"conv.local", "f", 1},
       Reorder{"conv.local", {"rc", "ry", "rx", "f.o", "f.i", "x", "f.b"}},
       Annotate{"conv.local", "f.b", ir::ForKind::Vectorized}});
}

TEST(LowerAttach, APaddedAccumulatorOfAConvOverChannelsTheVectorDoesNotDivide) {
  // 10 output channels in blocks of 4: the last block's two padding lanes compute and are never
  // stored. The weights' padded copy is read there (zeros); read in place they are clamped.
  te::Workload w = te::make_workload("conv2d:N=1,C=3,H=5,W=6,K=10,R=3,S=3,stride=1,pad=1");
  const std::vector<schedule::Step> loops = {
      ComputeInline{"conv_pad"},
      Split{"conv", "f", 4},
      Split{"conv", "x", 3},
      Reorder{"conv", {"n", "f.o", "y", "x.o", "f.i", "x.i"}},
      ComputeAt{"conv.local", "conv", "x.o"},
      Split{"conv.local", "f", 1},
      Reorder{"conv.local", {"rc", "ry", "rx", "f.o", "f.i", "x", "f.b"}},
      Annotate{"conv.local", "f.b", ir::ForKind::Vectorized}};
  std::vector<schedule::Step> copied = {
      CacheWrite{"conv", kLocal, {{1, 4, false, true}}},
      CacheRead{"weight", kLocal, {"conv.local"}, {{0, 4, false, true}}}};
  copied.insert(copied.end(), loops.begin(), loops.end());
  ir::LoweredFunc f = expect_lowers_correctly(w, copied);
  // The copy's padding is read in place of the clamp: the weights load as dense vectors.
  EXPECT_GT(count_in(f, "weight.local[ramp("), 0) << ir::to_string(f);
  std::vector<schedule::Step> in_place = {CacheWrite{"conv", kLocal, {{1, 4, false, true}}}};
  in_place.insert(in_place.end(), loops.begin(), loops.end());
  expect_lowers_correctly(w, in_place);
  // Blocks of 8 in the accumulator reach channel 15; the weights' copy in blocks of 4 ends at 11,
  // so there the clamp stays (ir::eval refuses a read past a buffer).
  std::vector<schedule::Step> wider = {
      CacheWrite{"conv", kLocal, {{1, 8, false, true}}},
      CacheRead{"weight", kLocal, {"conv.local"}, {{0, 4, false, true}}}};
  wider.insert(wider.end(), loops.begin(), loops.end());
  expect_lowers_correctly(w, wider);
}

TEST(LowerAttach, APaddedCopyKeepsTheClampsOfTheComputeItself) {
  // B repeats A's last row: that clamp is what B means, and the padded copy's zeros past A would
  // change it.
  te::Tensor a = te::placeholder({10, 8}, ir::DataType::float32(), "A");
  te::Tensor b = te::compute(
      {10, 8},
      [&](const std::vector<ir::Var>& v) {
        const ir::Expr row = v[0] + ir::make_const(v[0].type(), int64_t{1});
        return a(ir::min(row, ir::make_const(v[0].type(), int64_t{9})), v[1]);
      },
      "B");
  ir::LoweredFunc f = expect_lowers_correctly(te::Workload("edge", {a}, {b}),
                                              {CacheRead{"A", kLocal, {}, {{0, 4, false, true}}}});
  EXPECT_GE(count_in(f, "min("), 1) << ir::to_string(f);
}

TEST(LowerAttach, APaddingComputedPerTileOfAGroupedConvCoversTheTilesGroupsOnly) {
  // Groups of 4 channels; every tile of 6 output channels (from 0, 6, 12, 18) spans 2 groups,
  // so the padded input it reads is 8 channels, not all 24.
  te::Workload w = te::make_workload("conv2d:N=1,C=24,H=5,W=5,K=24,R=3,S=3,pad=1,groups=6");
  ir::LoweredFunc f =
      expect_lowers_correctly(w, {Split{"conv", "f", 6}, ComputeAt{"conv_pad", "conv", "f.o"}});
  EXPECT_EQ(count_in(f, "conv_pad[1, 8, 7, 7]"), 1) << ir::to_string(f);
}

TEST(LowerAttach, NestedAttachment) {
  expect_lowers_correctly(
      matmul_workload(13, 17, 19),
      {CacheWrite{"C", kLocal}, CacheRead{"A", kLocal, {}}, Tile{"C", "i", "j", 6, 8},
       ComputeAt{"C.local", "C", "j.o"}, Split{"C.local", "k", 4},
       Reorder{"C.local", {"k.o", "i", "k.i", "j"}}, ComputeAt{"A.local", "C.local", "k.o"}});
}

TEST(LowerAttach, ProducerOfTheAccumulatorAtAnOuterTileLoopOfTheOutput) {
  // A.local is read by C.local only, which C computes at its j.o loop: A.local computed at C's
  // i.o (a row block for every column tile), or at j.o beside C.local (computed first), covers
  // what C.local reads there (TVM's compute_at at the consumer's consumer).
  const te::Workload w = matmul_workload(13, 17, 19);
  for (const char* at : {"i.o", "j.o"}) {
    ir::LoweredFunc f = expect_lowers_correctly(
        w, {CacheWrite{"C", kLocal}, CacheRead{"A", kLocal, {}}, Tile{"C", "i", "j", 4, 8},
            ComputeAt{"C.local", "C", "j.o"}, Split{"C.local", "k", 4},
            Reorder{"C.local", {"k.o", "i", "k.i", "j"}}, ComputeAt{"A.local", "C", at}});
    EXPECT_NE(
        ir::to_string(lower_plain(w, {CacheWrite{"C", kLocal}, CacheRead{"A", kLocal, {}},
                                      Tile{"C", "i", "j", 4, 8}, ComputeAt{"C.local", "C", "j.o"},
                                      ComputeAt{"A.local", "C", at}}))
            .find("A.local[4, 19]"),
        std::string::npos)
        << at << "\n"
        << ir::to_string(f);
  }
}

TEST(LowerAttach, ComputeAtInnermostLoopComputesOneElement) {
  te::Tensor a = te::placeholder({6, 7}, ir::DataType::float32(), "A");
  te::Tensor b = te::placeholder({7, 5}, ir::DataType::float32(), "B");
  te::Tensor c = te::matmul(a, b);
  te::Tensor r = te::relu(c);
  te::Workload w("matmul_relu", {a, b}, {r});
  expect_lowers_correctly(w, {ComputeAt{"C", "relu", "j"}});
  expect_lowers_correctly(w, {Split{"relu", "j", 2}, ComputeAt{"C", "relu", "j.o"}});
  expect_lowers_correctly(w, {Split{"relu", "i", 4}, ComputeAt{"C", "relu", "i.o"}});
}

TEST(LowerAttach, InlinePaddingIntoConvolution) {
  te::Workload w = te::make_workload("conv2d:N=1,C=2,H=6,W=5,K=3,R=3,S=3,stride=1,pad=1");
  expect_lowers_correctly(w, {ComputeInline{"conv_pad"}});
  expect_lowers_correctly(w, {ComputeInline{"conv_pad"}, Split{"conv", "x", 2},
                              Reorder{"conv", {"n", "f", "y", "x.o", "rc", "ry", "rx", "x.i"}},
                              Annotate{"conv", "x.i", ir::ForKind::Vectorized}});
}

TEST(LowerAttach, PaddingComputedAtAConvolutionRow) {
  te::Workload w = te::make_workload("conv2d:N=1,C=2,H=6,W=5,K=3,R=3,S=3,stride=2,pad=1");
  expect_lowers_correctly(w, {ComputeAt{"conv_pad", "conv", "y"}});
  expect_lowers_correctly(w, {CacheRead{"conv_pad", kLocal, {}}, ComputeInline{"conv_pad"},
                              ComputeAt{"conv_pad.local", "conv", "rc"}});
}

TEST(LowerAttach, InlineElementwiseEpilogue) {
  te::Tensor a = te::placeholder({5, 6}, ir::DataType::float32(), "A");
  te::Tensor b = te::placeholder({6, 7}, ir::DataType::float32(), "B");
  te::Tensor bias = te::placeholder({7}, ir::DataType::float32(), "bvec");
  te::Tensor c = te::matmul(a, b);
  te::Tensor biased = te::bias_add(c, bias, 1);
  te::Tensor r = te::relu(biased);
  te::Workload w("matmul_bias_relu", {a, b, bias}, {r});
  expect_lowers_correctly(w, {ComputeInline{"bias"}});
  expect_lowers_correctly(w, {Tile{"relu", "i", "j", 2, 4}, ComputeAt{"bias", "relu", "j.o"},
                              ComputeAt{"C", "bias", "i"}});
}

TEST(LowerAttach, ComputeRootUndoesComputeAt) {
  te::Tensor a = te::placeholder({4, 5}, ir::DataType::float32(), "A");
  te::Tensor b = te::placeholder({5, 3}, ir::DataType::float32(), "B");
  te::Workload w("matmul_relu", {a, b}, {te::relu(te::matmul(a, b))});
  ir::LoweredFunc f = expect_lowers_correctly(w, {ComputeAt{"C", "relu", "i"}, ComputeRoot{"C"}});
  EXPECT_EQ(count_in(f, "allocate float32 C[4, 3] global"), 1) << ir::to_string(f);
}

TEST(LowerAttach, SoftmaxStagesAtTheirConsumersRow) {
  te::Workload w = te::make_workload("softmax:M=4,N=9");
  schedule::LoopState state(w);
  std::vector<schedule::Step> steps;
  // Every non-output stage read by exactly one consumer goes at that consumer's outer loop.
  for (const schedule::Stage& s : state.stages()) {
    std::vector<std::string> consumers = state.consumers(s.name);
    if (!s.is_placeholder() && !s.is_output && consumers.size() == 1) {
      steps.push_back(ComputeAt{s.name, consumers[0], "i"});
    }
  }
  expect_lowers_correctly(w, steps);
}

}  // namespace
}  // namespace tensortune::lower

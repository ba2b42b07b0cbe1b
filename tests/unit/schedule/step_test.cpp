// SPDX-License-Identifier: Apache-2.0
// Steps as values: kind words, readable lines, equality and memory scope names.
#include "tensortune/schedule/step.h"

#include "tensortune/support/error.h"
#include "unit/schedule/all_steps.h"

#include <gtest/gtest.h>

#include <set>

namespace tensortune::schedule {
namespace {

TEST(Step, KindWordsNameEachKind) {
  EXPECT_STREQ(step_kind(Split{"C", "i", 8, false}), "split");
  EXPECT_STREQ(step_kind(Fuse{"C", {"i", "j"}}), "fuse");
  EXPECT_STREQ(step_kind(Reorder{"C", {"j", "i"}}), "reorder");
  EXPECT_STREQ(step_kind(Tile{"C", "i", "j", 2, 2}), "tile");
  EXPECT_STREQ(step_kind(PragmaUnroll{"C", "i", 4}), "pragma_unroll");
  EXPECT_STREQ(step_kind(ComputeAt{"B", "C", "i"}), "compute_at");
  EXPECT_STREQ(step_kind(ComputeInline{"B"}), "compute_inline");
  EXPECT_STREQ(step_kind(ComputeRoot{"B"}), "compute_root");
  EXPECT_STREQ(step_kind(CacheWrite{"C", ir::MemoryScope::Local}), "cache_write");
  EXPECT_STREQ(step_kind(CacheRead{"A", ir::MemoryScope::Shared, {}}), "cache_read");
  EXPECT_STREQ(step_kind(Annotate{"C", "j", ir::ForKind::Vectorized}), "vectorize");
  EXPECT_STREQ(step_kind(Annotate{"C", "j", ir::ForKind::Unrolled}), "unroll");
  EXPECT_STREQ(step_kind(Annotate{"C", "j", ir::ForKind::Parallel}), "parallel");
  EXPECT_STREQ(step_kind(Annotate{"C", "j", ir::ForKind::ThreadY}), "threadIdx.y");
}

TEST(Step, AnnotationKindWordsAreDistinct) {
  std::set<std::string> words;
  for (const Step& step : testing::one_step_of_each_kind()) {
    words.insert(step_kind(step));
  }
  // 10 non-annotate kinds (split twice, cache_write twice, cache_read twice) + 10 loop kinds.
  EXPECT_EQ(words.size(), 20U);
}

TEST(Step, ToStringGivesOneReadableLine) {
  EXPECT_EQ(to_string(Split{"C", "i", 8, false}), "split C.i by 8");
  EXPECT_EQ(to_string(Split{"C", "i", 4, true}), "split C.i into 4 parts");
  EXPECT_EQ(to_string(Fuse{"C", {"i", "j"}}), "fuse C: i, j");
  EXPECT_EQ(to_string(Reorder{"C", {"k", "i"}}), "reorder C: k, i");
  EXPECT_EQ(to_string(Tile{"C", "i", "j", 8, 4}), "tile C.i C.j by 8x4");
  EXPECT_EQ(to_string(Annotate{"C", "j.i", ir::ForKind::Vectorized}), "vectorize C.j.i");
  EXPECT_EQ(to_string(Annotate{"C", "i.o", ir::ForKind::BlockX}), "bind C.i.o to blockIdx.x");
  EXPECT_EQ(to_string(PragmaUnroll{"C", "i", 16}), "pragma_unroll C.i max_step 16");
  EXPECT_EQ(to_string(ComputeAt{"C.local", "C", "j.o"}), "compute_at C.local C.j.o");
  EXPECT_EQ(to_string(ComputeInline{"B"}), "compute_inline B");
  EXPECT_EQ(to_string(ComputeRoot{"B"}), "compute_root B");
  EXPECT_EQ(to_string(CacheWrite{"C", ir::MemoryScope::Local}), "cache_write C local");
  EXPECT_EQ(to_string(CacheRead{"A", ir::MemoryScope::Shared, {"C", "D"}}),
            "cache_read A shared for C, D");
  EXPECT_EQ(to_string(CacheRead{"A", ir::MemoryScope::Shared, {}}), "cache_read A shared");
  EXPECT_EQ(to_string(CacheRead{"W", ir::MemoryScope::Local, {"conv"}, {{0, 16}}}),
            "cache_read W local block 0/16 for conv");
  EXPECT_EQ(to_string(CacheRead{"B", ir::MemoryScope::Local, {"C"}, {{1, 64, true}}}),
            "cache_read B local block 1/64 outer_first for C");
  EXPECT_EQ(to_string(CacheRead{"B", ir::MemoryScope::Local, {"C"}, {{1, 64, true, true}}}),
            "cache_read B local block 1/64 outer_first padded for C");
}

TEST(Step, EqualityComparesKindAndEveryField) {
  std::vector<Step> steps = testing::one_step_of_each_kind();
  for (size_t a = 0; a < steps.size(); ++a) {
    for (size_t b = 0; b < steps.size(); ++b) {
      EXPECT_EQ(steps[a] == steps[b], a == b)
          << to_string(steps[a]) << " vs " << to_string(steps[b]);
    }
  }
  Step split_a = Split{"C", "i", 8, false};
  Step split_nparts = Split{"C", "i", 8, true};
  Step split_b = Split{"C", "i", 4, false};
  Step read_some = CacheRead{"A", ir::MemoryScope::Local, {"C"}};
  Step read_all = CacheRead{"A", ir::MemoryScope::Local, {}};
  Step read_blocked = CacheRead{"A", ir::MemoryScope::Local, {}, {{0, 4}}};
  EXPECT_FALSE(read_all == read_blocked);
  Step tile_a = Tile{"C", "i", "j", 8, 4};
  Step tile_b = Tile{"C", "i", "j", 8, 4};
  EXPECT_FALSE(split_a == split_nparts);
  EXPECT_FALSE(split_a == split_b);
  EXPECT_FALSE(read_some == read_all);
  EXPECT_TRUE(tile_a == tile_b);
}

TEST(Step, ScopeNamesRoundTrip) {
  for (auto scope : {ir::MemoryScope::Local, ir::MemoryScope::Shared, ir::MemoryScope::Global}) {
    EXPECT_EQ(parse_scope(scope_name(scope)), scope);
  }
  EXPECT_STREQ(scope_name(ir::MemoryScope::Shared), "shared");
  EXPECT_THROW(parse_scope("register"), UserError);
  EXPECT_THROW(parse_scope("Local"), UserError);
}

}  // namespace
}  // namespace tensortune::schedule

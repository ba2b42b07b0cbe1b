// SPDX-License-Identifier: Apache-2.0
// One example of every step kind (and every annotation), for the printing, equality and
// serialization tests.
#pragma once

#include "tensortune/schedule/step.h"

#include <vector>

namespace tensortune::schedule::testing {

inline std::vector<Step> one_step_of_each_kind() {
  std::vector<Step> steps = {
      Split{"C", "i", 8, false},
      Split{"C", "j", 4, true},
      Fuse{"C", {"i.o", "j.o"}},
      Reorder{"C", {"k", "i.i", "j.i"}},
      Tile{"D", "i", "j", 16, 8},
      PragmaUnroll{"C", "i.o@j.o", 64},
      ComputeAt{"C.local", "C", "j.o"},
      ComputeInline{"B"},
      ComputeRoot{"B"},
      CacheWrite{"C", ir::MemoryScope::Local},
      CacheWrite{"C", ir::MemoryScope::Shared},
      CacheRead{"A", ir::MemoryScope::Shared, {"C", "E"}},
      CacheRead{"B", ir::MemoryScope::Global, {}},
      CacheRead{"B", ir::MemoryScope::Local, {"C"}, {{1, 8}}},
      CacheRead{"B", ir::MemoryScope::Local, {"C"}, {{1, 8, true}}},
  };
  CacheRead padded{"A", ir::MemoryScope::Shared, {"C"}, {{0, 8}}};
  padded.row_pad = 4;
  padded.stages = 3;
  steps.emplace_back(padded);
  for (int k = 0; k <= static_cast<int>(ir::ForKind::ThreadZ); ++k) {
    steps.push_back(Annotate{"C", "j.i", static_cast<ir::ForKind>(k)});
  }
  return steps;
}

}  // namespace tensortune::schedule::testing

// SPDX-License-Identifier: Apache-2.0
// The walk over a lowered function that finds every store with its context: the enclosing loops
// (extents evaluated), allocations, guards, and a base point for index evaluation.
#pragma once

#include "index_eval.h"
#include "tensortune/ir/stmt.h"

#include <cstdint>
#include <vector>

namespace tensortune::cost_model {

struct LoopInfo {
  const ir::VarNode* var = nullptr;
  int64_t extent = 1;  ///< evaluated at the base point of the outer loops; never negative
  ir::ForKind kind = ir::ForKind::Serial;
  int64_t auto_unroll_max_step = 0;
};

struct AllocInfo {
  ir::Buffer buffer;
  size_t depth = 0;  ///< loops enclosing the allocation
};

/// One store statement and what surrounds it.
struct StoreSite {
  const ir::Store* store = nullptr;
  std::vector<LoopInfo> loops;    ///< enclosing loops, outer to inner
  std::vector<AllocInfo> allocs;  ///< enclosing allocations, outer to inner
  int guards = 0;                 ///< enclosing IfThenElse statements
  /// Every enclosing loop variable at its base point min + (extent - 1) / 2, plus the lets.
  EvalEnv env;
};

/// The stores of a function in program order, and whole-function counts.
struct FunctionScan {
  std::vector<StoreSite> stores;
  int64_t num_loops = 0;
  int64_t num_parallel_loops = 0;
  int64_t max_depth = 0;
  double alloc_bytes = 0;  ///< bytes of every Allocate node, each counted once
};

/// Walks `body`; never throws on valid IR.
FunctionScan scan_function(const ir::Stmt& body);

}  // namespace tensortune::cost_model

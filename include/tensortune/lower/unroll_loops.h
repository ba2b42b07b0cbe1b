// SPDX-License-Identifier: Apache-2.0
// Unrolling: loops annotated Unrolled, and small loop nests under an auto_unroll_max_step pragma,
// are replaced by copies of their body.
#pragma once

#include "tensortune/ir/stmt.h"

#include <cstdint>

namespace tensortune::lower {

/// Loops with more iterations than this stay loops (still annotated) rather than being unrolled.
inline constexpr int64_t kMaxUnrollExtent = 1024;

/// Unrolls every Unrolled loop of constant extent (at most kMaxUnrollExtent) and, inside a loop
/// with auto_unroll_max_step = N > 0, every serial loop nest whose total number of statement
/// executions is at most N. Variables and buffers defined inside a copied body are renamed in
/// each copy, so no definition appears twice.
ir::Stmt unroll_loops(const ir::Stmt& s);

}  // namespace tensortune::lower

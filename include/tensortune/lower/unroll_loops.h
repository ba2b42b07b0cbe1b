// SPDX-License-Identifier: Apache-2.0
// Unrolling: loops annotated Unrolled, and small loop nests under an auto_unroll_max_step pragma,
// are replaced by copies of their body.
#pragma once

#include "tensortune/ir/stmt.h"

#include <cstdint>

namespace tensortune::lower {

/// Loops with more iterations than this stay loops (still annotated) rather than being unrolled.
inline constexpr int64_t kMaxUnrollExtent = 1024;

/// The largest auto_unroll_max_step honoured: a larger one (an imported record with max_step 1e9)
/// unrolls as if it were this. The search proposes at most 512, TVM at most 1024.
inline constexpr int64_t kMaxAutoUnrollSteps = 1024;

/// The statements all unrolling in one function may produce. LLVM's time grows faster than the
/// code: on a matmul's unrolled reduction, 1000 statements built in 0.7 s, 4000 in 20 s, 16000 in
/// more than 120 s, and a whole 32x32x32 matmul unrolled (32768) took 101 s and 2.1 GB. Nests
/// are unrolled in program order while the budget lasts; the rest stay loops.
inline constexpr int64_t kMaxUnrolledStatements = 2048;

/// Unrolls every Unrolled loop of constant extent (at most kMaxUnrollExtent) and, inside a loop
/// with auto_unroll_max_step = N > 0, every serial loop nest whose total number of statement
/// executions is at most min(N, kMaxAutoUnrollSteps), both within kMaxUnrolledStatements.
/// Variables and buffers defined inside a copied body are renamed in each copy, so no definition
/// appears twice.
ir::Stmt unroll_loops(const ir::Stmt& s);

}  // namespace tensortune::lower

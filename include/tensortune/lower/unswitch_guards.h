// SPDX-License-Identifier: Apache-2.0
// Tile unswitching: the form of loop partitioning (Halide's, TVM's LoopPartition) that keeps every
// loop extent constant, so the vectorizer and the unroller still see the tile they were given.
#pragma once

#include "tensortune/ir/stmt.h"

namespace tensortune::lower {

/// At most this many guards are unswitched at one loop (2^k copies of its body).
inline constexpr int kMaxUnswitchPerLoop = 3;
/// Loop bodies with more statements than this are left alone (code size).
inline constexpr int64_t kMaxUnswitchBodyStmts = 4096;

/// A non-dividing split leaves guards `if (outer*f + inner < extent)` that hold for a whole tile in
/// all but the boundary tiles. For each guard comparison, at the outermost loop whose variable
/// decides whether it holds for every iteration of the loops inside (the "full-tile predicate",
/// from ir::max_over), the loop body becomes `if (predicate) body-without-the-guard else body`.
/// Full tiles then run guard-free code that vectorizes and unrolls as if the split divided; the
/// boundary tiles keep their guards (and are unswitched again at deeper loops). Guards that hold
/// everywhere are dropped. When one value of the deciding loop variable alone fails the predicate
/// (the usual case: the last tile), the boundary copy gets that constant for the variable, and a
/// loop whose body is guarded by a bound on its own variable (`if (v + 128 < 129)`) takes it as
/// its extent: the boundary tile runs its live iterations unmasked (one scalar column instead of
/// 32 predicated lanes). Works on flattened IR before vectorize_loops; the result defines every
/// variable and buffer once (the copies are renamed).
ir::Stmt unswitch_guards(const ir::Stmt& s);

}  // namespace tensortune::lower

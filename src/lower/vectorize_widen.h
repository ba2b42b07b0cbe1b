// SPDX-License-Identifier: Apache-2.0
// Private to src/lower: widening the body of one vectorized loop (Halide's VectorizeLoops).
#pragma once

#include "tensortune/ir/simplify.h"
#include "tensortune/ir/stmt.h"

namespace tensortune::lower {

/// The body of `for (var, min, lanes)` as vector code, or an undefined Stmt when it cannot be
/// widened without changing its meaning. `ranges` are the ranges of the enclosing loops.
ir::Stmt widen_loop_body(const ir::Var& var,
                         const ir::Expr& min,
                         int lanes,
                         const ir::Stmt& body,
                         const ir::VarRanges& ranges);

}  // namespace tensortune::lower

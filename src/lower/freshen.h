// SPDX-License-Identifier: Apache-2.0
// Private to lower/: copies of statements that can live beside the original (unroll, unswitch).
#pragma once

#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/stmt.h"

namespace tensortune::lower {

/// A copy of `s` with the variables of `seed` substituted and every variable and buffer defined
/// inside it (loop and let variables, allocations) renamed, so that the copy never defines the
/// same thing as the original.
ir::Stmt freshen(const ir::Stmt& s, ir::VarMap seed = {});

}  // namespace tensortune::lower

// SPDX-License-Identifier: Apache-2.0
// Well-formedness checks for loop IR, run after every lowering pass in debug builds.
#pragma once

#include "tensortune/ir/stmt.h"

namespace tensortune::ir {

struct VerifyOptions {
  bool flattened = false;     // every Load/Store has exactly one index
  bool allow_reduce = false;  // Reduce nodes may remain (only before lowering)
};

/// Throws InternalError naming the first problem: a variable used outside its scope (loop vars,
/// lets, reduction axes) or defined again while already in scope (sibling scopes may reuse a
/// variable), a buffer used that is neither a parameter nor allocated around its use (or
/// allocated again inside its own scope), an index count that does not match the buffer's rank
/// (or 1 when flattened), a non-index index type (int32/int64) or lane count, a store whose value
/// type differs from the buffer element type (lanes aside), a load whose type differs from it, a
/// let whose value type differs from its variable's, a Reduce node when not allowed, a
/// non-boolean condition, predicate or logical operand, a non-positive allocation extent.
void verify(const LoweredFunc& f, const VerifyOptions& options = {});

}  // namespace tensortune::ir

// SPDX-License-Identifier: Apache-2.0
// Well-formedness checks for loop IR, run after every lowering pass in debug builds.
#pragma once

#include "tensortune/ir/stmt.h"

namespace tensortune::ir {

struct VerifyOptions {
  bool flattened = false;  // every Load/Store has exactly one index
  bool allow_reduce = false;  // Reduce nodes may remain (only before lowering)
};

/// Throws InternalError naming the first problem: a variable used outside its scope (loop vars,
/// lets) or defined twice, a buffer used that is neither a parameter nor allocated around its
/// use, an index count that does not match the buffer's rank (or 1 when flattened), a non-index
/// index type, a store whose value type differs from the buffer element type (lanes aside),
/// a Reduce node when not allowed, a non-boolean condition.
void verify(const LoweredFunc& f, const VerifyOptions& options = {});

}  // namespace tensortune::ir

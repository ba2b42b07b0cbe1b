// SPDX-License-Identifier: Apache-2.0
// Storage flattening: multi-dimensional buffer accesses become one row-major index.
#pragma once

#include "tensortune/ir/stmt.h"

namespace tensortune::lower {

/// Rewrites every Load and Store of `f` to a single row-major index (buffers keep their shapes).
/// Throws UserError when a parameter or allocation has 2^31 or more elements (indices are int32).
ir::LoweredFunc flatten_storage(const ir::LoweredFunc& f);

}  // namespace tensortune::lower

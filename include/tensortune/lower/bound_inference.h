// SPDX-License-Identifier: Apache-2.0
// Bound inference: the box of a buffer that a set of expressions reads, with some variables
// relaxed over their whole range and the others kept symbolic (the loops outside a compute_at
// point). Used to size and place stages attached with compute_at.
#pragma once

#include "tensortune/ir/expr.h"
#include "tensortune/ir/simplify.h"

#include <cstdint>
#include <vector>

namespace tensortune::lower {

/// A box of a buffer: dimension d covers [min[d], min[d] + extent[d]).
struct Region {
  std::vector<ir::Expr> min;
  std::vector<int64_t> extent;
  /// False when no expression reads the buffer.
  bool read = false;
  /// The first dimension whose bounds could not be inferred, or -1.
  int unbounded_dim = -1;
};

/// The region of `buffer` read by `exprs`. Variables in `relaxed` range over their interval;
/// others are symbolic, with the ranges in `known` used to find constant extents. Each min is
/// clamped to >= 0 and each extent to the buffer's; mins may be symbolic, extents are constant.
Region infer_region(const ir::Buffer& buffer,
                    const std::vector<ir::Expr>& exprs,
                    const ir::VarRanges& relaxed,
                    const ir::VarRanges& known);

}  // namespace tensortune::lower

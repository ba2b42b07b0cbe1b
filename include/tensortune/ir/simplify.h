// SPDX-License-Identifier: Apache-2.0
// The arithmetic simplifier: constant folding and canonicalisation of index expressions, using
// known variable ranges, e.g. (i*8 + j)/8 -> i and (i*8 + j)%8 -> j when 0 <= j < 8.
#pragma once

#include "tensortune/ir/expr.h"
#include "tensortune/ir/stmt.h"

#include <cstdint>
#include <optional>
#include <unordered_map>

namespace tensortune::ir {

/// An inclusive integer interval.
struct ConstBound {
  int64_t min = 0;
  int64_t max = 0;
};
using VarRanges = std::unordered_map<const VarNode*, ConstBound>;

/// A constant interval containing every value of the integer expression `e`, given the ranges of
/// its variables; nullopt when some part is unbounded (an unknown variable, a load, a float).
std::optional<ConstBound> const_bound(const Expr& e, const VarRanges& ranges = {});

/// Simplifies `e` under `ranges`. The result is equivalent for every assignment within the ranges.
Expr simplify(const Expr& e, const VarRanges& ranges = {});
/// Simplifies every expression in `s`, learning loop ranges from For nodes (and `ranges` for free
/// variables). Removes IfThenElse whose condition is provably true/false and loops of extent 0,
/// and replaces loops of extent 1 by their variable's value.
Stmt simplify(const Stmt& s, const VarRanges& ranges = {});

/// True when `condition` holds for every assignment within `ranges` (false means "not proven").
bool can_prove(const Expr& condition, const VarRanges& ranges = {});

}  // namespace tensortune::ir

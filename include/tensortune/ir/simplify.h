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

/// A constant interval containing every value of the integer expression `e` (over all lanes of a
/// vector), given the ranges of its variables; nullopt when some part is unbounded (an unknown
/// variable, a load, a float, a divisor interval containing 0, an int64 overflow). Plain interval
/// arithmetic on `e` as written: simplify first for tighter bounds of correlated terms.
std::optional<ConstBound> const_bound(const Expr& e, const VarRanges& ranges = {});

/// Simplifies `e` under `ranges`. The result is equivalent for every assignment within the ranges.
/// Canonical forms: constants are folded exactly as ir::eval computes them; integer sums become
/// terms ordered by decreasing coefficient, then by structure (names), with the constant last
/// ("((i*8) + j)", "(x - 1)", "(5 - x)", "(x*-1)"); constants go right of commutative operators;
/// integer Div/Mod by positive constants split off multiples and fold using ranges
/// ((i*8 + j)/8 -> i); min/max/comparisons fold from the bound of the difference; float
/// arithmetic only folds constants and the identities x + 0, x - 0, x*1, x/1.
Expr simplify(const Expr& e, const VarRanges& ranges = {});
/// Simplifies every expression in `s`, learning loop ranges from For nodes (and `ranges` for free
/// variables). Removes IfThenElse whose condition is provably true/false and loops of extent 0,
/// and replaces loops of extent 1 by their variable's value. Inside an undecided `if`, simple
/// conditions on a ranged variable (`i < e`, `i >= e`, ... and their conjunctions) narrow its
/// range. Store predicates that are provably true are dropped (false: the store is dropped).
/// Lets bound to a constant or a variable are substituted; unused lets are dropped. Statements
/// left with nothing to do become the no-op "evaluate(0)"; the same handle is returned when
/// nothing changed.
Stmt simplify(const Stmt& s, const VarRanges& ranges = {});

/// An upper bound of the integer expression `e` over the variables of `ranges`, written in its
/// other variables: e = c + sum(k * atom) after simplification; atoms that use only ranged
/// variables are replaced by their interval end (max for k > 0, min for k < 0), the others are
/// kept. nullopt when an atom mixes ranged and other variables, or an interval is unbounded.
/// Used to ask "does this guard hold for the whole tile?" with the tile's loops in `ranges`.
std::optional<Expr> max_over(const Expr& e, const VarRanges& ranges);

/// True when `condition` holds for every assignment within `ranges` (false means "not proven").
bool can_prove(const Expr& condition, const VarRanges& ranges = {});

}  // namespace tensortune::ir

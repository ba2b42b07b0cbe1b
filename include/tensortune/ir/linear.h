// SPDX-License-Identifier: Apache-2.0
// Integer index expressions as linear forms, constant + sum(coefficient * atom): the simplifier
// canonicalises sums through them, and code generators read strides and offsets off them.
#pragma once

#include "tensortune/ir/expr.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace tensortune::ir {

/// A scalar integer expression as `constant + sum(coeff * atom)`. Atoms are what is not a sum, a
/// difference or a product with a constant; structurally equal atoms are merged and no
/// coefficient is 0. Arithmetic wraps at the type's width, as the expression's own would.
struct LinearForm {
  DataType type;
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;
};

/// Decomposes a scalar integer expression (simplify it first for canonical atoms).
LinearForm linear_form(const Expr& e);
/// The canonical expression: terms with positive coefficients first, by decreasing coefficient,
/// then structure (names, never pointers); then negative ones; the constant last. Merges
/// (x/c)*c*k + (x%c)*k into x*k.
Expr from_linear_form(LinearForm lf);
/// A number dividing every value of `lf`: the gcd of its coefficients and its constant (0 for
/// the form 0).
int64_t common_divisor(const LinearForm& lf);

}  // namespace tensortune::ir

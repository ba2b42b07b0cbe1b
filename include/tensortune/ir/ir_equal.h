// SPDX-License-Identifier: Apache-2.0
// Structural equality and hashing. Free variables and buffers compare by identity; variables bound
// inside the compared trees (loop variables, let variables, reduction axes, and the buffers of
// Allocate statements) compare by position: their names are ignored. Float constants compare by
// bit pattern (so NaN equals NaN and 0.0 differs from -0.0).
#pragma once

#include "tensortune/ir/expr.h"
#include "tensortune/ir/stmt.h"

#include <cstdint>

namespace tensortune::ir {

bool structural_equal(const Expr& a, const Expr& b);
bool structural_equal(const Stmt& a, const Stmt& b);
/// Consistent with structural_equal: equal trees hash equal. Not stable across processes for
/// trees with free variables (it hashes identities); use the printer for stable keys.
uint64_t structural_hash(const Expr& e);
/// The statement counterpart of structural_hash(Expr), consistent with structural_equal(Stmt).
uint64_t structural_hash(const Stmt& s);

}  // namespace tensortune::ir

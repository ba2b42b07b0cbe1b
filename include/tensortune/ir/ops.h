// SPDX-License-Identifier: Apache-2.0
// Operators and helpers for building expressions: a + b, min(a, b), select(c, x, y), exp(x) ...
// Constants adopt the type of the other operand; scalars are broadcast against vectors; any
// other type mismatch is a UserError naming both types.
#pragma once

#include "tensortune/ir/expr.h"

namespace tensortune::ir {

/// A constant of type `t` (int, uint, bool or float; broadcast when t is a vector).
Expr make_const(DataType t, double value);
Expr make_const(DataType t, int64_t value);
/// The lowest / highest finite-or-infinite value of `t` (-inf/+inf for floats).
Expr min_value(DataType t);
Expr max_value(DataType t);

/// The constant value when `e` is an IntImm (or a Broadcast of one); nullptr otherwise.
const int64_t* as_const_int(const Expr& e);
/// True when `e` is the integer constant `value`.
bool is_const_int(const Expr& e, int64_t value);

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
/// Floor division for integers, true division for floats.
Expr operator/(Expr a, Expr b);
/// Floor modulo for integers.
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr select(Expr condition, Expr true_value, Expr false_value);
Expr cast(DataType t, Expr value);

Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr tanh(Expr x);
Expr erf(Expr x);
Expr abs(Expr x);
Expr pow(Expr x, Expr y);
Expr floor(Expr x);
Expr ceil(Expr x);

}  // namespace tensortune::ir

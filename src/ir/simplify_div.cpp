// SPDX-License-Identifier: Apache-2.0
// Division and modulo by positive constants. Integer Div/Mod are floor division and modulo, which
// makes (a*c + b)/c == a + b/c and (a*c + b)%c == b%c exact for every b; ranges then finish the
// job: (i*8 + j)/8 -> i and (i*8 + j)%8 -> j when 0 <= j < 8.
#include "simplify_internal.h"
#include "tensortune/ir/ops.h"

#include <numeric>

namespace tensortune::ir::simplify_detail {
namespace {

/// The gcd of `c` and every coefficient of `lf` (the constant excluded).
int64_t coefficient_gcd(const Linear& lf, int64_t c) {
  int64_t g = c;
  for (const auto& term : lf.terms) {
    g = std::gcd(g, term.second);
  }
  return g;
}

/// lf / g for a divisor g of every coefficient; the constant becomes floor(constant / g).
Linear divide_terms(const Linear& lf, int64_t g) {
  Linear out;
  out.type = lf.type;
  for (const auto& [atom, coeff] : lf.terms) {
    out.terms.emplace_back(atom, coeff / g);
  }
  out.constant = floor_div(lf.constant, g);
  return out;
}

bool is_float_one(const Expr& e) {
  return e.as<FloatImm>() != nullptr && e.as<FloatImm>()->value == 1.0;
}

}  // namespace

Expr Simplifier::div_by_const(const Expr& a, int64_t c) {
  DataType t = a.type();
  if (c == 1) {
    return a;
  }
  if (const auto* inner = a.as<Div>()) {
    const auto* c1 = inner->b.as<IntImm>();
    int64_t product = 0;
    if (c1 != nullptr && c1->value > 0 && !__builtin_mul_overflow(c1->value, c, &product) &&
        (t.bits() >= 64 || product < (int64_t{1} << (t.bits() - 1)))) {
      return div_by_const(inner->a, product);  // (x/c1)/c == x/(c1*c)
    }
  }
  Linear lf = linear_form(a);
  Linear quotient{t, {}, 0};
  Linear rest{t, {}, 0};
  for (const auto& [atom, coeff] : lf.terms) {
    if (coeff % c == 0) {
      quotient.terms.emplace_back(atom, coeff / c);
    } else {
      rest.terms.emplace_back(atom, coeff);
    }
  }
  if (!quotient.terms.empty()) {
    quotient.constant = floor_div(lf.constant, c);
    rest.constant = floor_mod(lf.constant, c);
    return add(from_linear_form(std::move(quotient)),
               div_by_const(from_linear_form(std::move(rest)), c));
  }
  if (std::optional<ConstBound> b = linear_bound(lf, ranges_)) {
    if (floor_div(b->min, c) == floor_div(b->max, c)) {
      return make_const(t, floor_div(b->min, c));
    }
  }
  if (int64_t g = coefficient_gcd(lf, c); g > 1) {
    // a == g*A + r with 0 <= r < g, so floor(a / c) == floor(A / (c/g)).
    return div_by_const(from_linear_form(divide_terms(lf, g)), c / g);
  }
  return Div::make(a, make_const(t, c));
}

Expr Simplifier::mod_by_const(const Expr& a, int64_t c) {
  DataType t = a.type();
  if (c == 1) {
    return make_const(t, int64_t{0});
  }
  Linear lf = linear_form(a);
  Linear reduced{t, {}, floor_mod(lf.constant, c)};
  bool changed = reduced.constant != lf.constant;
  // Multiples of c vanish. Other coefficients are kept as they are (not reduced modulo c), so
  // that x % c still matches the x / c beside it and (x/c)*c + x%c can merge back into x.
  for (const auto& [atom, coeff] : lf.terms) {
    if (coeff % c == 0) {
      changed = true;
    } else {
      reduced.terms.emplace_back(atom, coeff);
    }
  }
  if (changed) {
    return mod_by_const(from_linear_form(std::move(reduced)), c);
  }
  if (std::optional<ConstBound> b = linear_bound(lf, ranges_)) {
    if (floor_div(b->min, c) == floor_div(b->max, c)) {
      lf.constant -= floor_div(b->min, c) * c;
      return from_linear_form(std::move(lf));
    }
  }
  if (const auto* inner = a.as<Mod>()) {
    const auto* c1 = inner->b.as<IntImm>();
    if (c1 != nullptr && c1->value > 0 && c1->value % c == 0) {
      return mod_by_const(inner->a, c);  // (x % (k*c)) % c == x % c
    }
  }
  if (int64_t g = coefficient_gcd(lf, c); g > 1 && !lf.terms.empty()) {
    // a == g*A + r with 0 <= r < g, so a % c == (A % (c/g))*g + r.
    Expr scaled = mul(mod_by_const(from_linear_form(divide_terms(lf, g)), c / g), make_const(t, g));
    return add(scaled, make_const(t, floor_mod(lf.constant, g)));
  }
  return Mod::make(a, make_const(t, c));
}

Expr Simplifier::div(const Expr& a, const Expr& b) {
  if (is_const_scalar(a) && is_const_scalar(b)) {
    return fold_constants(Div::make(a, b));
  }
  DataType t = a.type();
  if (t.is_vector()) {
    if (Expr v = vector_arith(ExprKind::Div, a, b); v.defined()) {
      return v;
    }
  } else if (t.is_int()) {
    if (const auto* c = b.as<IntImm>(); c != nullptr && c->value > 0) {
      return div_by_const(a, c->value);
    }
  }
  if (is_const_int(b, 1) || is_float_one(b)) {
    return a;
  }
  return Div::make(a, b);
}

Expr Simplifier::mod(const Expr& a, const Expr& b) {
  if (is_const_scalar(a) && is_const_scalar(b)) {
    return fold_constants(Mod::make(a, b));
  }
  DataType t = a.type();
  if (t.is_vector()) {
    if (Expr v = vector_arith(ExprKind::Mod, a, b); v.defined()) {
      return v;
    }
  } else if (t.is_int()) {
    if (const auto* c = b.as<IntImm>(); c != nullptr && c->value > 0) {
      return mod_by_const(a, c->value);
    }
  }
  if (!t.is_float() && is_const_int(b, 1)) {
    return make_const(t, int64_t{0});
  }
  return Mod::make(a, b);
}

Expr Simplifier::visit(const Div* op, const Expr& e) {
  (void)e;
  return div(mutate(op->a), mutate(op->b));
}

Expr Simplifier::visit(const Mod* op, const Expr& e) {
  (void)e;
  return mod(mutate(op->a), mutate(op->b));
}

}  // namespace tensortune::ir::simplify_detail

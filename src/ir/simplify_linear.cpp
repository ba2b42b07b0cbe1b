// SPDX-License-Identifier: Apache-2.0
// Linear forms and the additive rules of the simplifier: integer sums and products with constants
// are collected into constant + sum(coeff * atom) and rebuilt in one canonical order, so that
// x - x, x*2 + x, (i + 1)*8 - 8 and (f/8)*8 + f%8 all come out in their simplest form.
#include "simplify_internal.h"
#include "tensortune/ir/ir_equal.h"
#include "tensortune/ir/ops.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

namespace tensortune::ir::simplify_detail {
namespace {

int64_t wrap(DataType t, int64_t v) {
  if (t.bits() >= 64) {
    return v;
  }
  uint64_t u = static_cast<uint64_t>(v) & ((uint64_t{1} << t.bits()) - 1);
  uint64_t sign = uint64_t{1} << (t.bits() - 1);
  return static_cast<int64_t>((u ^ sign) - sign);
}

int64_t mul_wrap(DataType t, int64_t a, int64_t b) {
  return wrap(t, static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)));
}

int64_t add_wrap(DataType t, int64_t a, int64_t b) {
  return wrap(t, static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)));
}

void collect(const Expr& e, int64_t scale, Linear& out) {
  if (const auto* imm = e.as<IntImm>()) {
    out.constant = add_wrap(out.type, out.constant, mul_wrap(out.type, imm->value, scale));
    return;
  }
  if (const auto* op = e.as<Add>()) {
    collect(op->a, scale, out);
    collect(op->b, scale, out);
    return;
  }
  if (const auto* op = e.as<Sub>()) {
    collect(op->a, scale, out);
    collect(op->b, mul_wrap(out.type, scale, -1), out);
    return;
  }
  if (const auto* op = e.as<Mul>()) {
    if (const auto* c = op->b.as<IntImm>()) {
      collect(op->a, mul_wrap(out.type, scale, c->value), out);
      return;
    }
    if (const auto* c = op->a.as<IntImm>()) {
      collect(op->b, mul_wrap(out.type, scale, c->value), out);
      return;
    }
  }
  add_term(out, e, scale);
}

/// Finds (x/c) with coefficient c*k and (x%c) with coefficient k, for the same x and c > 0.
bool merge_div_mod_pair(Linear& lf) {
  for (size_t i = 0; i < lf.terms.size(); ++i) {
    const auto* d = lf.terms[i].first.as<Div>();
    const auto* c = d != nullptr ? d->b.as<IntImm>() : nullptr;
    if (c == nullptr || c->value <= 0 || lf.terms[i].second % c->value != 0) {
      continue;
    }
    int64_t k = lf.terms[i].second / c->value;
    for (size_t j = 0; j < lf.terms.size(); ++j) {
      const auto* m = lf.terms[j].first.as<Mod>();
      if (m == nullptr || lf.terms[j].second != k || !is_const_int(m->b, c->value) ||
          !structural_equal(m->a, d->a)) {
        continue;
      }
      Expr x = d->a;
      lf.terms.erase(lf.terms.begin() + static_cast<std::ptrdiff_t>(std::max(i, j)));
      lf.terms.erase(lf.terms.begin() + static_cast<std::ptrdiff_t>(std::min(i, j)));
      add_scaled(lf, linear_form(x), k);
      return true;
    }
  }
  return false;
}

Expr scaled_term(const Expr& atom, int64_t coeff) {
  if (coeff == 1) {
    return atom;
  }
  return Mul::make(atom, make_const(atom.type(), coeff));
}

bool term_before(const std::pair<Expr, int64_t>& x, const std::pair<Expr, int64_t>& y) {
  if ((x.second < 0) != (y.second < 0)) {
    return x.second > 0;
  }
  uint64_t ax = x.second < 0 ? 0 - static_cast<uint64_t>(x.second) : x.second;
  uint64_t ay = y.second < 0 ? 0 - static_cast<uint64_t>(y.second) : y.second;
  if (ax != ay) {
    return ax > ay;
  }
  return compare_expr(x.first, y.first) < 0;
}

}  // namespace

int64_t floor_div(int64_t x, int64_t y) {
  int64_t q = x / y;
  if ((x % y != 0) && ((x < 0) != (y < 0))) {
    --q;
  }
  return q;
}

int64_t floor_mod(int64_t x, int64_t y) {
  int64_t r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) {
    r += y;
  }
  return r;
}

void add_term(Linear& lf, const Expr& atom, int64_t coeff) {
  if (coeff == 0) {
    return;
  }
  for (auto it = lf.terms.begin(); it != lf.terms.end(); ++it) {
    if (structural_equal(it->first, atom)) {
      it->second = add_wrap(lf.type, it->second, coeff);
      if (it->second == 0) {
        lf.terms.erase(it);
      }
      return;
    }
  }
  lf.terms.emplace_back(atom, coeff);
}

void add_scaled(Linear& dst, const Linear& src, int64_t scale) {
  dst.constant = add_wrap(dst.type, dst.constant, mul_wrap(dst.type, src.constant, scale));
  for (const auto& [atom, coeff] : src.terms) {
    add_term(dst, atom, mul_wrap(dst.type, coeff, scale));
  }
}

Expr Simplifier::linear_add(const Expr& a, const Expr& b, int64_t sign) {
  Linear lf = linear_form(a);
  add_scaled(lf, linear_form(b), sign);
  return from_linear_form(std::move(lf));
}

Expr Simplifier::add(const Expr& a, const Expr& b) {
  if (is_const_scalar(a) && is_const_scalar(b)) {
    return fold_constants(Add::make(a, b));
  }
  DataType t = a.type();
  if (t.is_vector()) {
    // x + broadcast(-0) is x, exactly (a dropped Winograd term: te::conv2d_winograd_nchw).
    auto negative_zero = [](const Expr& e) {
      const auto* bc = e.as<Broadcast>();
      const auto* f = bc != nullptr ? bc->value.as<FloatImm>() : nullptr;
      return f != nullptr && f->value == 0 && std::signbit(f->value);
    };
    if (negative_zero(b)) {
      return a;
    }
    if (negative_zero(a)) {
      return b;
    }
    if (Expr v = vector_arith(ExprKind::Add, a, b); v.defined()) {
      return v;
    }
  } else if (t.is_int()) {
    return linear_add(a, b, 1);
  }
  if (is_const_int(b, 0) || (b.as<FloatImm>() != nullptr && b.as<FloatImm>()->value == 0)) {
    return a;
  }
  if (is_const_int(a, 0) || (a.as<FloatImm>() != nullptr && a.as<FloatImm>()->value == 0)) {
    return b;
  }
  if (is_const_scalar(a) && !is_const_scalar(b)) {
    return Add::make(b, a);
  }
  return Add::make(a, b);
}

Expr Simplifier::sub(const Expr& a, const Expr& b) {
  if (is_const_scalar(a) && is_const_scalar(b)) {
    return fold_constants(Sub::make(a, b));
  }
  DataType t = a.type();
  if (t.is_vector()) {
    if (Expr v = vector_arith(ExprKind::Sub, a, b); v.defined()) {
      return v;
    }
  } else if (t.is_int()) {
    return linear_add(a, b, -1);
  }
  if (is_const_int(b, 0) || (b.as<FloatImm>() != nullptr && b.as<FloatImm>()->value == 0)) {
    return a;
  }
  if (!t.is_float() && structural_equal(a, b)) {
    return make_const(t, int64_t{0});
  }
  return Sub::make(a, b);
}

Expr Simplifier::mul(const Expr& a, const Expr& b) {
  if (is_const_scalar(a) && is_const_scalar(b)) {
    return fold_constants(Mul::make(a, b));
  }
  DataType t = a.type();
  if (t.is_vector()) {
    if (Expr v = vector_arith(ExprKind::Mul, a, b); v.defined()) {
      return v;
    }
  } else if (t.is_int()) {
    if (b.as<IntImm>() != nullptr || a.as<IntImm>() != nullptr) {
      const Expr& c = b.as<IntImm>() != nullptr ? b : a;
      const Expr& x = b.as<IntImm>() != nullptr ? a : b;
      Linear lf;
      lf.type = t;
      add_scaled(lf, linear_form(x), c.as<IntImm>()->value);
      return from_linear_form(std::move(lf));
    }
    return compare_expr(b, a) < 0 ? Mul::make(b, a) : Mul::make(a, b);
  }
  // x * 1 is x, exactly, also for floats and for a vector times a broadcast one (the unit
  // coefficients of an unrolled, vectorized transform); x * 0 is not 0 for a float (NaN * 0).
  auto is_one = [](const Expr& e) {
    const auto* bc = e.as<Broadcast>();
    const Expr& s = bc != nullptr ? bc->value : e;
    return is_const_int(s, 1) || (s.as<FloatImm>() != nullptr && s.as<FloatImm>()->value == 1.0);
  };
  if (is_one(b)) {
    return a;
  }
  if (is_one(a)) {
    return b;
  }
  if (!t.is_float() && (is_const_int(a, 0) || is_const_int(b, 0))) {
    return make_const(t, int64_t{0});
  }
  if (is_const_scalar(a) && !is_const_scalar(b)) {
    return Mul::make(b, a);
  }
  return Mul::make(a, b);
}

Expr Simplifier::visit(const Add* op, const Expr& e) {
  (void)e;
  return add(mutate(op->a), mutate(op->b));
}

Expr Simplifier::visit(const Sub* op, const Expr& e) {
  (void)e;
  return sub(mutate(op->a), mutate(op->b));
}

Expr Simplifier::visit(const Mul* op, const Expr& e) {
  (void)e;
  return mul(mutate(op->a), mutate(op->b));
}

}  // namespace tensortune::ir::simplify_detail

namespace tensortune::ir {

LinearForm linear_form(const Expr& e) {
  LinearForm lf;
  lf.type = e.type();
  simplify_detail::collect(e, 1, lf);
  return lf;
}

Expr from_linear_form(LinearForm lf) {
  while (simplify_detail::merge_div_mod_pair(lf)) {
  }
  std::stable_sort(lf.terms.begin(), lf.terms.end(), simplify_detail::term_before);
  DataType t = lf.type;
  Expr acc;
  for (const auto& [atom, coeff] : lf.terms) {
    if (!acc.defined()) {
      // Only positive constants lead a sum ("5 - i"); otherwise the first term does ("i*-1").
      if (coeff < 0 && lf.constant > 0) {
        acc = make_const(t, lf.constant);
        lf.constant = 0;
      } else {
        acc = simplify_detail::scaled_term(atom, coeff);
        continue;
      }
    }
    acc = coeff > 0 ? Add::make(acc, simplify_detail::scaled_term(atom, coeff))
                    : Sub::make(acc, simplify_detail::scaled_term(
                                         atom, simplify_detail::mul_wrap(t, coeff, -1)));
  }
  if (!acc.defined()) {
    return make_const(t, lf.constant);
  }
  if (lf.constant > 0) {
    return Add::make(acc, make_const(t, lf.constant));
  }
  if (lf.constant < 0 && lf.constant != simplify_detail::mul_wrap(t, lf.constant, -1)) {
    return Sub::make(acc, make_const(t, simplify_detail::mul_wrap(t, lf.constant, -1)));
  }
  if (lf.constant < 0) {
    return Add::make(acc, make_const(t, lf.constant));
  }
  return acc;
}

int64_t common_divisor(const LinearForm& lf) {
  uint64_t g = lf.constant < 0 ? 0 - static_cast<uint64_t>(lf.constant) : lf.constant;
  for (const auto& term : lf.terms) {
    const int64_t c = term.second;
    g = std::gcd(g, c < 0 ? 0 - static_cast<uint64_t>(c) : static_cast<uint64_t>(c));
  }
  return static_cast<int64_t>(g);
}

}  // namespace tensortune::ir

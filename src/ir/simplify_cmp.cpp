// SPDX-License-Identifier: Apache-2.0
// Min/Max, comparisons, logic and Select. Integer min/max and comparisons are decided from the
// bound of the linear difference a - b (min(x + 3, x + 5) -> x + 3; i < 64 -> true for i in
// [0, 63]); float ones only fold constants, since NaN defeats the algebra.
#include "simplify_internal.h"
#include "tensortune/ir/ir_equal.h"
#include "tensortune/ir/ops.h"

namespace tensortune::ir::simplify_detail {
namespace {

Expr make_cmp(ExprKind kind, const Expr& a, const Expr& b) {
  switch (kind) {
    case ExprKind::Eq:
      return Eq::make(a, b);
    case ExprKind::Ne:
      return Ne::make(a, b);
    case ExprKind::Lt:
      return Lt::make(a, b);
    case ExprKind::Le:
      return Le::make(a, b);
    case ExprKind::Gt:
      return Gt::make(a, b);
    default:
      return Ge::make(a, b);
  }
}

std::optional<bool> known(bool surely_true, bool surely_false) {
  if (surely_true) {
    return true;
  }
  if (surely_false) {
    return false;
  }
  return std::nullopt;
}

/// The truth of `a kind b` given the interval of a - b, when the interval decides it.
std::optional<bool> decide(ExprKind kind, const ConstBound& d) {
  switch (kind) {
    case ExprKind::Eq:
    case ExprKind::Ne: {
      std::optional<bool> equal;
      if (d.min == 0 && d.max == 0) {
        equal = true;
      } else if (d.min > 0 || d.max < 0) {
        equal = false;
      }
      if (equal && kind == ExprKind::Ne) {
        return !*equal;
      }
      return equal;
    }
    case ExprKind::Lt:
      return known(d.max < 0, d.min >= 0);
    case ExprKind::Le:
      return known(d.max <= 0, d.min > 0);
    case ExprKind::Gt:
      return known(d.min > 0, d.max <= 0);
    default:
      return known(d.min >= 0, d.max < 0);
  }
}

/// The operands of a comparison node, if `e` is one.
bool comparison_operands(const Expr& e, Expr* a, Expr* b) {
  auto take = [&](const auto* op) {
    if (op == nullptr) {
      return false;
    }
    *a = op->a;
    *b = op->b;
    return true;
  };
  return take(e.as<Eq>()) || take(e.as<Ne>()) || take(e.as<Lt>()) || take(e.as<Le>()) ||
         take(e.as<Gt>()) || take(e.as<Ge>());
}

Expr bool_const(int lanes, bool value) {
  return make_const(DataType::boolean(lanes), int64_t{value ? 1 : 0});
}

}  // namespace

ExprKind negated(ExprKind kind) {
  switch (kind) {
    case ExprKind::Eq:
      return ExprKind::Ne;
    case ExprKind::Ne:
      return ExprKind::Eq;
    case ExprKind::Lt:
      return ExprKind::Ge;
    case ExprKind::Le:
      return ExprKind::Gt;
    case ExprKind::Gt:
      return ExprKind::Le;
    default:
      return ExprKind::Lt;
  }
}

ExprKind mirrored(ExprKind kind) {
  switch (kind) {
    case ExprKind::Lt:
      return ExprKind::Gt;
    case ExprKind::Le:
      return ExprKind::Ge;
    case ExprKind::Gt:
      return ExprKind::Lt;
    case ExprKind::Ge:
      return ExprKind::Le;
    default:
      return kind;
  }
}

std::optional<ConstBound> Simplifier::difference_bound(const Expr& a, const Expr& b) {
  if (a.type().is_scalar()) {
    Linear lf = linear_form(a);
    add_scaled(lf, linear_form(b), -1);
    return linear_bound(lf, ranges_);
  }
  return bound(sub(a, b));
}

Expr Simplifier::min_max(bool is_min, const Expr& a, const Expr& b) {
  ExprKind kind = is_min ? ExprKind::Min : ExprKind::Max;
  auto make = [&](const Expr& x, const Expr& y) {
    return is_min ? Min::make(x, y) : Max::make(x, y);
  };
  if (is_const_scalar(a) && is_const_scalar(b)) {
    return fold_constants(make(a, b));
  }
  if (a.type().is_vector()) {
    if (Expr v = vector_arith(kind, a, b); v.defined()) {
      return v;
    }
  }
  if (structural_equal(a, b)) {
    return a;
  }
  if (a.type().is_int()) {
    if (std::optional<ConstBound> d = difference_bound(a, b)) {
      if (d->max <= 0) {
        return is_min ? a : b;
      }
      if (d->min >= 0) {
        return is_min ? b : a;
      }
    }
  }
  if (is_const_scalar(a)) {
    return min_max(is_min, b, a);
  }
  // min(min(x, c1), c2) -> min(x, min(c1, c2))
  const Expr* inner_a = nullptr;
  const Expr* inner_b = nullptr;
  if (const auto* m = a.as<Min>(); m != nullptr && is_min) {
    inner_a = &m->a;
    inner_b = &m->b;
  } else if (const auto* n = a.as<Max>(); n != nullptr && !is_min) {
    inner_a = &n->a;
    inner_b = &n->b;
  }
  if (inner_a != nullptr && is_const_scalar(*inner_b) && is_const_scalar(b)) {
    return min_max(is_min, *inner_a, fold_constants(make(*inner_b, b)));
  }
  return make(a, b);
}

Expr Simplifier::min(const Expr& a, const Expr& b) {
  return min_max(true, a, b);
}

Expr Simplifier::max(const Expr& a, const Expr& b) {
  return min_max(false, a, b);
}

Expr Simplifier::compare(ExprKind kind, const Expr& a, const Expr& b) {
  if (is_const_scalar(a) && is_const_scalar(b)) {
    return fold_constants(make_cmp(kind, a, b));
  }
  int lanes = a.type().lanes();
  if (a.type().is_vector()) {
    if (Expr v = vector_arith(kind, a, b); v.defined()) {
      return v;
    }
  }
  if (a.type().is_int()) {
    if (std::optional<ConstBound> d = difference_bound(a, b)) {
      if (std::optional<bool> truth = decide(kind, *d)) {
        return bool_const(lanes, *truth);
      }
    }
  }
  if (is_const_scalar(a) && !is_const_scalar(b)) {
    return compare(mirrored(kind), b, a);  // constants go right
  }
  if (Expr e = compare_quotient(kind, a, b); e.defined()) {
    return e;
  }
  return make_cmp(kind, a, b);
}

Expr Simplifier::compare_quotient(ExprKind kind, const Expr& a, const Expr& b) {
  // For c > 0: x/c < k <=> x < k*c; x/c <= k <=> x < (k+1)*c; x/c > k <=> x >= (k+1)*c;
  // x/c >= k <=> x >= k*c.
  const auto* d = a.as<Div>();
  const auto* c = d != nullptr ? d->b.as<IntImm>() : nullptr;
  const auto* k = b.as<IntImm>();
  if (c == nullptr || c->value <= 0 || k == nullptr || kind == ExprKind::Eq ||
      kind == ExprKind::Ne) {
    return {};
  }
  bool next = kind == ExprKind::Le || kind == ExprKind::Gt;
  int64_t limit = 0;
  if (__builtin_add_overflow(k->value, next ? 1 : 0, &limit) ||
      __builtin_mul_overflow(limit, c->value, &limit)) {
    return {};
  }
  DataType t = a.type();
  if (t.bits() < 64 &&
      (limit >= (int64_t{1} << (t.bits() - 1)) || limit < -(int64_t{1} << (t.bits() - 1)))) {
    return {};
  }
  bool below = kind == ExprKind::Lt || kind == ExprKind::Le;
  return compare(below ? ExprKind::Lt : ExprKind::Ge, d->a, make_const(t, limit));
}

Expr Simplifier::logic_and(const Expr& a, const Expr& b) {
  if (std::optional<int64_t> va = const_value(a)) {
    return *va != 0 ? b : a;
  }
  if (std::optional<int64_t> vb = const_value(b)) {
    return *vb != 0 ? a : b;
  }
  if (structural_equal(a, b)) {
    return a;
  }
  return And::make(a, b);
}

Expr Simplifier::logic_or(const Expr& a, const Expr& b) {
  if (std::optional<int64_t> va = const_value(a)) {
    return *va != 0 ? a : b;
  }
  if (std::optional<int64_t> vb = const_value(b)) {
    return *vb != 0 ? b : a;
  }
  if (structural_equal(a, b)) {
    return a;
  }
  return Or::make(a, b);
}

Expr Simplifier::logic_not(const Expr& a) {
  if (std::optional<int64_t> v = const_value(a)) {
    return bool_const(a.type().lanes(), *v == 0);
  }
  if (const auto* n = a.as<Not>()) {
    return n->a;
  }
  Expr x;
  Expr y;
  if (comparison_operands(a, &x, &y) && !x.type().is_float()) {
    return compare(negated(a.kind()), x, y);
  }
  return Not::make(a);
}

Expr Simplifier::select(const Expr& c, const Expr& t, const Expr& f) {
  if (std::optional<int64_t> v = const_value(c)) {
    return *v != 0 ? t : f;
  }
  if (structural_equal(t, f)) {
    return t;
  }
  if (t.type().is_bool() && c.type() == t.type() && is_const_int(t, 1) && is_const_int(f, 0)) {
    return c;
  }
  return Select::make(c, t, f);
}

Expr Simplifier::visit(const Min* op, const Expr& /*e*/) {
  return min(mutate(op->a), mutate(op->b));
}
Expr Simplifier::visit(const Max* op, const Expr& /*e*/) {
  return max(mutate(op->a), mutate(op->b));
}
Expr Simplifier::visit(const Eq* op, const Expr& /*e*/) {
  return compare(ExprKind::Eq, mutate(op->a), mutate(op->b));
}
Expr Simplifier::visit(const Ne* op, const Expr& /*e*/) {
  return compare(ExprKind::Ne, mutate(op->a), mutate(op->b));
}
Expr Simplifier::visit(const Lt* op, const Expr& /*e*/) {
  return compare(ExprKind::Lt, mutate(op->a), mutate(op->b));
}
Expr Simplifier::visit(const Le* op, const Expr& /*e*/) {
  return compare(ExprKind::Le, mutate(op->a), mutate(op->b));
}
Expr Simplifier::visit(const Gt* op, const Expr& /*e*/) {
  return compare(ExprKind::Gt, mutate(op->a), mutate(op->b));
}
Expr Simplifier::visit(const Ge* op, const Expr& /*e*/) {
  return compare(ExprKind::Ge, mutate(op->a), mutate(op->b));
}
Expr Simplifier::visit(const And* op, const Expr& /*e*/) {
  return logic_and(mutate(op->a), mutate(op->b));
}
Expr Simplifier::visit(const Or* op, const Expr& /*e*/) {
  return logic_or(mutate(op->a), mutate(op->b));
}
Expr Simplifier::visit(const Not* op, const Expr& /*e*/) {
  return logic_not(mutate(op->a));
}
Expr Simplifier::visit(const Select* op, const Expr& /*e*/) {
  return select(mutate(op->condition), mutate(op->true_value), mutate(op->false_value));
}

}  // namespace tensortune::ir::simplify_detail

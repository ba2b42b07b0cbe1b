// SPDX-License-Identifier: Apache-2.0
// Ramp and Broadcast arithmetic: operations on broadcasts become broadcasts of the scalar
// operation, ramps absorb broadcast offsets and factors, and a ramp divided by a constant becomes
// a ramp or a broadcast when its lanes stay inside one block of the divisor.
#include "simplify_internal.h"
#include "tensortune/ir/ops.h"

namespace tensortune::ir::simplify_detail {
namespace {

Expr make_ramp(const Expr& base, const Expr& stride, int lanes) {
  if (is_const_int(stride, 0)) {
    return Broadcast::make(base, lanes);
  }
  return Ramp::make(base, stride, lanes);
}

}  // namespace

Expr Simplifier::vector_arith(ExprKind kind, const Expr& a, const Expr& b) {
  const auto* ba = a.as<Broadcast>();
  const auto* bb = b.as<Broadcast>();
  int lanes = a.type().lanes();
  if (ba != nullptr && bb != nullptr && ba->lanes == bb->lanes) {
    const Expr& x = ba->value;
    const Expr& y = bb->value;
    switch (kind) {
      case ExprKind::Add:
        return Broadcast::make(add(x, y), lanes);
      case ExprKind::Sub:
        return Broadcast::make(sub(x, y), lanes);
      case ExprKind::Mul:
        return Broadcast::make(mul(x, y), lanes);
      case ExprKind::Div:
        return Broadcast::make(div(x, y), lanes);
      case ExprKind::Mod:
        return Broadcast::make(mod(x, y), lanes);
      case ExprKind::Min:
        return Broadcast::make(min(x, y), lanes);
      case ExprKind::Max:
        return Broadcast::make(max(x, y), lanes);
      case ExprKind::And:
        return Broadcast::make(logic_and(x, y), lanes);
      case ExprKind::Or:
        return Broadcast::make(logic_or(x, y), lanes);
      default:
        return Broadcast::make(compare(kind, x, y), lanes);
    }
  }
  if (!a.type().is_int()) {
    return {};
  }
  const auto* ra = a.as<Ramp>();
  const auto* rb = b.as<Ramp>();
  if (kind == ExprKind::Add) {
    if (ra != nullptr && bb != nullptr) {
      return make_ramp(add(ra->base, bb->value), ra->stride, lanes);
    }
    if (ba != nullptr && rb != nullptr) {
      return make_ramp(add(ba->value, rb->base), rb->stride, lanes);
    }
    if (ra != nullptr && rb != nullptr) {
      return make_ramp(add(ra->base, rb->base), add(ra->stride, rb->stride), lanes);
    }
  }
  if (kind == ExprKind::Sub) {
    if (ra != nullptr && bb != nullptr) {
      return make_ramp(sub(ra->base, bb->value), ra->stride, lanes);
    }
    Expr zero = make_const(a.type().element_of(), int64_t{0});
    if (ba != nullptr && rb != nullptr) {
      return make_ramp(sub(ba->value, rb->base), sub(zero, rb->stride), lanes);
    }
    if (ra != nullptr && rb != nullptr) {
      return make_ramp(sub(ra->base, rb->base), sub(ra->stride, rb->stride), lanes);
    }
  }
  if (kind == ExprKind::Mul) {
    if (ra != nullptr && bb != nullptr) {
      return make_ramp(mul(ra->base, bb->value), mul(ra->stride, bb->value), lanes);
    }
    if (ba != nullptr && rb != nullptr) {
      return make_ramp(mul(ba->value, rb->base), mul(ba->value, rb->stride), lanes);
    }
  }
  if ((kind == ExprKind::Div || kind == ExprKind::Mod) && ra != nullptr && bb != nullptr) {
    std::optional<int64_t> c = const_value(bb->value);
    if (c && *c > 0) {
      return ramp_div_mod(kind == ExprKind::Div, ra, *c);
    }
  }
  return {};
}

Expr Simplifier::ramp_div_mod(bool is_div, const Ramp* ramp, int64_t c) {
  std::optional<int64_t> stride = const_value(ramp->stride);
  if (!stride) {
    return {};
  }
  int64_t s = *stride;
  DataType t = ramp->base.type();
  Expr c_expr = make_const(t, c);
  if (s % c == 0) {
    // (b + i*k*c) / c == b/c + i*k and (b + i*k*c) % c == b % c, exactly, for floor semantics.
    if (is_div) {
      return make_ramp(div(ramp->base, c_expr), make_const(t, s / c), ramp->lanes);
    }
    return Broadcast::make(mod(ramp->base, c_expr), ramp->lanes);
  }
  // All lanes in the block of the first lane: b%c + (lanes-1)*s stays within [0, c).
  std::optional<ConstBound> r = bound(mod(ramp->base, c_expr));
  int64_t span = s * (ramp->lanes - 1);
  if (!r || r->min + (span < 0 ? span : 0) < 0 || r->max + (span > 0 ? span : 0) >= c) {
    return {};
  }
  if (is_div) {
    return Broadcast::make(div(ramp->base, c_expr), ramp->lanes);
  }
  return make_ramp(mod(ramp->base, c_expr), ramp->stride, ramp->lanes);
}

}  // namespace tensortune::ir::simplify_detail

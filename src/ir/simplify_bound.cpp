// SPDX-License-Identifier: Apache-2.0
// const_bound: interval arithmetic over integer expressions (floor Div/Mod included), narrowed by
// the bound of the expression's canonical linear form (linear_bound), where correlated terms
// cancel instead of widening the interval. Any overflow of int64 gives "unbounded".
#include "simplify_internal.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <array>
#include <limits>

namespace tensortune::ir {
namespace simplify_detail {
namespace {

using Bound = std::optional<ConstBound>;

Bound add_bounds(const Bound& a, const Bound& b) {
  ConstBound r;
  if (!a || !b || __builtin_add_overflow(a->min, b->min, &r.min) ||
      __builtin_add_overflow(a->max, b->max, &r.max)) {
    return std::nullopt;
  }
  return r;
}

Bound negate(const Bound& a) {
  if (!a || a->min == std::numeric_limits<int64_t>::min()) {
    return std::nullopt;
  }
  return ConstBound{-a->max, -a->min};
}

Bound mul_bounds(const Bound& a, const Bound& b) {
  if (!a || !b) {
    return std::nullopt;
  }
  std::array<int64_t, 4> corners{};
  if (__builtin_mul_overflow(a->min, b->min, corners.data()) ||
      __builtin_mul_overflow(a->min, b->max, &corners[1]) ||
      __builtin_mul_overflow(a->max, b->min, &corners[2]) ||
      __builtin_mul_overflow(a->max, b->max, &corners[3])) {
    return std::nullopt;
  }
  return ConstBound{*std::min_element(corners.begin(), corners.end()),
                    *std::max_element(corners.begin(), corners.end())};
}

/// Floor division is monotone in each argument while the divisor keeps its sign, so the extremes
/// over a box are at its corners.
Bound div_bounds(const Bound& a, const Bound& b) {
  if (!a || !b || (b->min <= 0 && b->max >= 0)) {
    return std::nullopt;
  }
  if (b->min == -1 || b->max == -1) {
    return std::nullopt;  // keeps clear of INT64_MIN / -1
  }
  std::array<int64_t, 4> corners{floor_div(a->min, b->min), floor_div(a->min, b->max),
                                 floor_div(a->max, b->min), floor_div(a->max, b->max)};
  return ConstBound{*std::min_element(corners.begin(), corners.end()),
                    *std::max_element(corners.begin(), corners.end())};
}

Bound mod_bounds(const Bound& a, const Bound& b) {
  if (!b || (b->min <= 0 && b->max >= 0)) {
    return std::nullopt;
  }
  if (b->min > 0) {
    if (a && b->min == b->max && floor_div(a->min, b->min) == floor_div(a->max, b->min)) {
      int64_t base = floor_div(a->min, b->min) * b->min;
      return ConstBound{a->min - base, a->max - base};
    }
    if (a && a->min >= 0) {
      return ConstBound{0, std::min(a->max, b->max - 1)};
    }
    return ConstBound{0, b->max - 1};
  }
  return ConstBound{b->min + 1, 0};
}

Bound type_range(DataType t) {
  if (t.is_bool()) {
    return ConstBound{0, 1};
  }
  if (t.bits() >= 64) {
    return std::nullopt;
  }
  if (t.is_uint()) {
    return ConstBound{0, static_cast<int64_t>((uint64_t{1} << t.bits()) - 1)};
  }
  int64_t half = int64_t{1} << (t.bits() - 1);
  return ConstBound{-half, half - 1};
}

class BoundCalculator {
 public:
  explicit BoundCalculator(const VarRanges& ranges) : ranges_(ranges) {}
  Bound get(const Expr& e);

 private:
  template <class T>
  std::pair<Bound, Bound> operands(const Expr& e) {
    return {get(e.as<T>()->a), get(e.as<T>()->b)};
  }
  Bound var(const VarNode* v) const {
    auto it = ranges_.find(v);
    if (it != ranges_.end()) {
      return it->second;
    }
    return v->type.is_bool() ? Bound(ConstBound{0, 1}) : std::nullopt;
  }
  Bound cast(const Cast* op);
  Bound ramp(const Ramp* op);
  Bound node(const Expr& e);

  const VarRanges& ranges_;
};

Bound BoundCalculator::cast(const Cast* op) {
  if (op->value.type().is_float()) {
    return std::nullopt;
  }
  Bound v = get(op->value);
  Bound range = type_range(op->type);
  if (v && (!range || (v->min >= range->min && v->max <= range->max))) {
    return v;
  }
  return range;
}

Bound BoundCalculator::ramp(const Ramp* op) {
  // Lane i is base + i*stride for i in [0, lanes - 1].
  Bound offsets = mul_bounds(get(op->stride), ConstBound{0, op->lanes - 1});
  return add_bounds(get(op->base), offsets);
}

Bound BoundCalculator::get(const Expr& e) {
  if (!e.defined() || e.type().is_float()) {
    return std::nullopt;
  }
  if (e.type().is_bool() && e.as<VarNode>() == nullptr && e.as<IntImm>() == nullptr) {
    return ConstBound{0, 1};
  }
  return node(e);
}

Bound BoundCalculator::node(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::IntImm:
      return ConstBound{e.as<IntImm>()->value, e.as<IntImm>()->value};
    case ExprKind::FloatImm:
      return std::nullopt;
    case ExprKind::Var:
      return var(e.as<VarNode>());
    case ExprKind::Add: {
      auto [a, b] = operands<Add>(e);
      return add_bounds(a, b);
    }
    case ExprKind::Sub: {
      auto [a, b] = operands<Sub>(e);
      return add_bounds(a, negate(b));
    }
    case ExprKind::Mul: {
      auto [a, b] = operands<Mul>(e);
      return mul_bounds(a, b);
    }
    case ExprKind::Div: {
      auto [a, b] = operands<Div>(e);
      return div_bounds(a, b);
    }
    case ExprKind::Mod: {
      auto [a, b] = operands<Mod>(e);
      return mod_bounds(a, b);
    }
    case ExprKind::Min: {
      auto [a, b] = operands<Min>(e);
      return a && b ? Bound(ConstBound{std::min(a->min, b->min), std::min(a->max, b->max)})
                    : std::nullopt;
    }
    case ExprKind::Max: {
      auto [a, b] = operands<Max>(e);
      return a && b ? Bound(ConstBound{std::max(a->min, b->min), std::max(a->max, b->max)})
                    : std::nullopt;
    }
    case ExprKind::Eq:
    case ExprKind::Ne:
    case ExprKind::Lt:
    case ExprKind::Le:
    case ExprKind::Gt:
    case ExprKind::Ge:
    case ExprKind::And:
    case ExprKind::Or:
    case ExprKind::Not:
      return ConstBound{0, 1};
    case ExprKind::Select: {
      Bound t = get(e.as<Select>()->true_value);
      Bound f = get(e.as<Select>()->false_value);
      return t && f ? Bound(ConstBound{std::min(t->min, f->min), std::max(t->max, f->max)})
                    : std::nullopt;
    }
    case ExprKind::Cast:
      return cast(e.as<Cast>());
    case ExprKind::Ramp:
      return ramp(e.as<Ramp>());
    case ExprKind::Broadcast:
      return get(e.as<Broadcast>()->value);
    case ExprKind::Call: {
      const auto* op = e.as<Call>();
      Bound a = op->op == Intrinsic::Abs ? get(op->args[0]) : std::nullopt;
      if (!a || a->min == std::numeric_limits<int64_t>::min()) {
        return std::nullopt;
      }
      if (a->min >= 0) {
        return a;
      }
      if (a->max <= 0) {
        return negate(a);
      }
      return ConstBound{0, std::max(-a->min, a->max)};
    }
    case ExprKind::Load:
    case ExprKind::Reduce:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

namespace {

/// k * (x1 / d) - k * (x2 / d) where x1 - x2 is a constant c: floor((x + c) / d) - floor(x / d)
/// is floor(c / d) for every integer x, or one more when d does not divide c. A grouped
/// convolution reads input channel (f / 8) * 8 + rc: over a tile of 20 output channels that
/// spans 24 or 32 channels, where bounding the two quotients apart gave all 440.
Bound paired_division(const Expr& a, int64_t ka, const Expr& b, int64_t kb) {
  const auto* da = a.as<Div>();
  const auto* db = b.as<Div>();
  if (da == nullptr || db == nullptr || ka != -kb) {
    return std::nullopt;
  }
  const int64_t* d = as_const_int(da->b);
  const int64_t* d2 = as_const_int(db->b);
  if (d == nullptr || d2 == nullptr || *d != *d2 || *d <= 0) {
    return std::nullopt;
  }
  const Expr difference = simplify(da->a - db->a);  // kept: as_const_int points into it
  const int64_t* c = as_const_int(difference);
  if (c == nullptr) {
    return std::nullopt;
  }
  const int64_t low = floor_div(*c, *d);
  return mul_bounds(ConstBound{low, low + (floor_mod(*c, *d) != 0 ? 1 : 0)}, ConstBound{ka, ka});
}

}  // namespace

std::optional<ConstBound> linear_bound(const Linear& lf, const VarRanges& ranges) {
  BoundCalculator calc(ranges);
  Bound total = ConstBound{lf.constant, lf.constant};
  std::vector<bool> paired(lf.terms.size(), false);
  for (size_t i = 0; i < lf.terms.size(); ++i) {
    for (size_t j = i + 1; j < lf.terms.size() && !paired[i]; ++j) {
      if (paired[j]) {
        continue;
      }
      Bound pair = paired_division(lf.terms[i].first, lf.terms[i].second, lf.terms[j].first,
                                   lf.terms[j].second);
      if (pair) {
        total = add_bounds(total, pair);
        paired[i] = paired[j] = true;
      }
    }
  }
  for (size_t i = 0; i < lf.terms.size(); ++i) {
    if (paired[i]) {
      continue;
    }
    const auto& [atom, coeff] = lf.terms[i];
    total = add_bounds(total, mul_bounds(calc.get(atom), ConstBound{coeff, coeff}));
    if (!total) {
      return std::nullopt;
    }
  }
  return total;
}

std::optional<ConstBound> Simplifier::bound(const Expr& e) const {
  return BoundCalculator(ranges_).get(e);
}

}  // namespace simplify_detail

std::optional<ConstBound> const_bound(const Expr& e, const VarRanges& ranges) {
  std::optional<ConstBound> direct = simplify_detail::BoundCalculator(ranges).get(e);
  if (!e.defined() || !e.type().is_int() || e.type().lanes() != 1) {
    return direct;
  }
  // The linear form cancels correlated terms (x - x, paired quotients) that intervals widen.
  std::optional<ConstBound> linear =
      simplify_detail::linear_bound(linear_form(simplify(e, ranges)), ranges);
  if (!direct || !linear) {
    return direct ? direct : linear;
  }
  return ConstBound{std::max(direct->min, linear->min), std::min(direct->max, linear->max)};
}

std::optional<Expr> max_over(const Expr& e, const VarRanges& ranges) {
  using simplify_detail::Linear;
  TT_CHECK(e.type().is_int() && e.type().lanes() == 1)
      << "max_over of a non-scalar-integer expression";
  Linear lf = linear_form(simplify(e));
  Linear out;
  out.type = lf.type;
  out.constant = lf.constant;
  for (const auto& [atom, coeff] : lf.terms) {
    bool ranged = false;
    bool other = false;
    post_order_visit(atom, [&](const Expr& node) {
      if (const auto* v = node.as<VarNode>()) {
        (ranges.count(v) != 0 ? ranged : other) = true;
      }
    });
    if (!ranged) {
      simplify_detail::add_term(out, atom, coeff);
      continue;
    }
    std::optional<ConstBound> b = other ? std::nullopt : const_bound(atom, ranges);
    int64_t end = 0;
    if (!b || __builtin_mul_overflow(coeff > 0 ? b->max : b->min, coeff, &end) ||
        __builtin_add_overflow(out.constant, end, &out.constant)) {
      return std::nullopt;
    }
  }
  return from_linear_form(std::move(out));
}

}  // namespace tensortune::ir

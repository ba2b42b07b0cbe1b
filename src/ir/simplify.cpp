// SPDX-License-Identifier: Apache-2.0
// The simplifier's entry points, its shared helpers (constant folding through the interpreter, the
// pointer-free expression order) and the rules for the leaf-like kinds: Var, Cast, Load, Ramp,
// Broadcast, Call, Reduce. The other kinds live in simplify_{linear,div,cmp,vector,stmt}.cpp.
#include "tensortune/ir/simplify.h"

#include "simplify_internal.h"
#include "tensortune/ir/eval.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"

#include <cmath>

namespace tensortune::ir {
namespace simplify_detail {
namespace {

int cmp(int64_t a, int64_t b) {
  return a < b ? -1 : (a > b ? 1 : 0);
}

int cmp_type(DataType a, DataType b) {
  if (int c = cmp(static_cast<int>(a.code()), static_cast<int>(b.code()))) {
    return c;
  }
  if (int c = cmp(a.bits(), b.bits())) {
    return c;
  }
  return cmp(a.lanes(), b.lanes());
}

int cmp_all(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (int c = cmp(static_cast<int64_t>(a.size()), static_cast<int64_t>(b.size()))) {
    return c;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (int c = compare_expr(a[i], b[i])) {
      return c;
    }
  }
  return 0;
}

template <class T>
int cmp_binary(const Expr& a, const Expr& b) {
  return cmp_all({a.as<T>()->a, a.as<T>()->b}, {b.as<T>()->a, b.as<T>()->b});
}

int cmp_load(const Load* x, const Load* y) {
  if (int c = x->buffer.name().compare(y->buffer.name())) {
    return c < 0 ? -1 : 1;
  }
  if (int c = cmp_all(x->indices, y->indices)) {
    return c;
  }
  return compare_expr(x->predicate, y->predicate);
}

int cmp_node(const Expr& a, const Expr& b) {
  switch (a.kind()) {
    case ExprKind::IntImm:
      return cmp(a.as<IntImm>()->value, b.as<IntImm>()->value);
    case ExprKind::FloatImm: {
      double x = a.as<FloatImm>()->value;
      double y = b.as<FloatImm>()->value;
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    case ExprKind::Var: {
      int c = a.as<VarNode>()->name.compare(b.as<VarNode>()->name);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case ExprKind::Add:
      return cmp_binary<Add>(a, b);
    case ExprKind::Sub:
      return cmp_binary<Sub>(a, b);
    case ExprKind::Mul:
      return cmp_binary<Mul>(a, b);
    case ExprKind::Div:
      return cmp_binary<Div>(a, b);
    case ExprKind::Mod:
      return cmp_binary<Mod>(a, b);
    case ExprKind::Min:
      return cmp_binary<Min>(a, b);
    case ExprKind::Max:
      return cmp_binary<Max>(a, b);
    case ExprKind::Eq:
      return cmp_binary<Eq>(a, b);
    case ExprKind::Ne:
      return cmp_binary<Ne>(a, b);
    case ExprKind::Lt:
      return cmp_binary<Lt>(a, b);
    case ExprKind::Le:
      return cmp_binary<Le>(a, b);
    case ExprKind::Gt:
      return cmp_binary<Gt>(a, b);
    case ExprKind::Ge:
      return cmp_binary<Ge>(a, b);
    case ExprKind::And:
      return cmp_binary<And>(a, b);
    case ExprKind::Or:
      return cmp_binary<Or>(a, b);
    case ExprKind::Not:
      return compare_expr(a.as<Not>()->a, b.as<Not>()->a);
    case ExprKind::Select: {
      const auto* x = a.as<Select>();
      const auto* y = b.as<Select>();
      return cmp_all({x->condition, x->true_value, x->false_value},
                     {y->condition, y->true_value, y->false_value});
    }
    case ExprKind::Cast:
      return compare_expr(a.as<Cast>()->value, b.as<Cast>()->value);
    case ExprKind::Load:
      return cmp_load(a.as<Load>(), b.as<Load>());
    case ExprKind::Ramp:
      return cmp_all({a.as<Ramp>()->base, a.as<Ramp>()->stride},
                     {b.as<Ramp>()->base, b.as<Ramp>()->stride});
    case ExprKind::Broadcast:
      return compare_expr(a.as<Broadcast>()->value, b.as<Broadcast>()->value);
    case ExprKind::Call: {
      if (int c = cmp(static_cast<int>(a.as<Call>()->op), static_cast<int>(b.as<Call>()->op))) {
        return c;
      }
      return cmp_all(a.as<Call>()->args, b.as<Call>()->args);
    }
    case ExprKind::Reduce:
      return compare_expr(a.as<Reduce>()->source, b.as<Reduce>()->source);
  }
  return 0;
}

/// Folding is skipped where evaluation would fail: integer division by zero, casting NaN or an
/// out-of-range float to an integer.
bool safe_to_fold(const Expr& e) {
  auto zero_divisor = [](const Expr& d) {
    return !d.type().is_float() && is_const_int(d, 0);
  };
  if (const auto* op = e.as<Div>()) {
    return !zero_divisor(op->b);
  }
  if (const auto* op = e.as<Mod>()) {
    return !zero_divisor(op->b);
  }
  if (const auto* op = e.as<Cast>()) {
    const auto* f = op->value.as<FloatImm>();
    if (f == nullptr || e.type().is_float() || e.type().is_bool()) {
      return true;
    }
    double t = std::trunc(f->value);
    int bits = e.type().bits();
    double lo = e.type().is_uint() ? 0.0 : -std::ldexp(1.0, bits - 1);
    double hi = std::ldexp(1.0, e.type().is_uint() && bits < 64 ? bits : bits - 1);
    return t >= lo && t < hi;
  }
  return true;
}

}  // namespace

int compare_expr(const Expr& a, const Expr& b) {
  if (a.same_as(b)) {
    return 0;
  }
  if (!a.defined() || !b.defined()) {
    return cmp(a.defined() ? 1 : 0, b.defined() ? 1 : 0);
  }
  if (a.kind() != b.kind()) {
    return cmp(static_cast<int>(a.kind()), static_cast<int>(b.kind()));
  }
  if (int c = cmp_type(a.type(), b.type())) {
    return c;
  }
  return cmp_node(a, b);
}

bool is_const_scalar(const Expr& e) {
  return e.as<IntImm>() != nullptr || e.as<FloatImm>() != nullptr;
}

std::optional<int64_t> const_value(const Expr& e) {
  if (const int64_t* v = as_const_int(e)) {
    return *v;
  }
  return std::nullopt;
}

Expr fold_constants(const Expr& e) {
  if (!e.type().is_scalar() || !safe_to_fold(e)) {
    return e;
  }
  // The interpreter computes float32 and float64 only; float16/bfloat16 constants stay as written.
  bool interpretable = true;
  post_order_visit(e, [&](const Expr& x) {
    DataType t = x.type();
    interpretable = interpretable && (!t.is_float() || (t.code() == DataType::Code::Float &&
                                                        (t.bits() == 32 || t.bits() == 64)));
  });
  if (!interpretable) {
    return e;
  }
  if (e.type().is_float()) {
    return FloatImm::make(e.type(), eval_float(e, {}));
  }
  return IntImm::make(e.type(), eval_int(e, {}));
}

bool is_no_op(const Stmt& s) {
  if (const auto* seq = s.as<Seq>()) {
    return seq->stmts.empty();
  }
  if (const auto* ev = s.as<Evaluate>()) {
    return is_const_scalar(ev->value);
  }
  return false;
}

Stmt no_op() {
  return Evaluate::make(0);
}

Expr Simplifier::visit(const VarNode* op, const Expr& e) {
  auto it = ranges_.find(op);
  if (it != ranges_.end() && it->second.min == it->second.max) {
    return make_const(e.type(), it->second.min);
  }
  return e;
}

Expr Simplifier::visit(const Cast* op, const Expr& e) {
  Expr v = mutate(op->value);
  if (v.type() == e.type()) {
    return v;
  }
  if (is_const_scalar(v)) {
    return fold_constants(Cast::make(e.type(), v));
  }
  if (const auto* b = v.as<Broadcast>()) {
    return Broadcast::make(mutate(Cast::make(e.type().element_of(), b->value)), b->lanes);
  }
  return v.same_as(op->value) ? e : Cast::make(e.type(), v);
}

Expr Simplifier::visit(const Load* op, const Expr& e) {
  bool changed = false;
  std::vector<Expr> indices;
  for (const Expr& index : op->indices) {
    indices.push_back(mutate(index));
    changed = changed || !indices.back().same_as(index);
  }
  Expr predicate = mutate(op->predicate);
  if (predicate.defined()) {
    std::optional<int64_t> p = const_value(predicate);
    if (p && *p != 0) {
      predicate = Expr();
    }
  }
  if (!changed && predicate.same_as(op->predicate)) {
    return e;
  }
  return Load::make(op->buffer, std::move(indices), predicate);
}

Expr Simplifier::visit(const Ramp* op, const Expr& e) {
  Expr base = mutate(op->base);
  Expr stride = mutate(op->stride);
  if (is_const_int(stride, 0)) {
    return Broadcast::make(base, op->lanes);
  }
  if (base.same_as(op->base) && stride.same_as(op->stride)) {
    return e;
  }
  return Ramp::make(base, stride, op->lanes);
}

Expr Simplifier::visit(const Broadcast* op, const Expr& e) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? e : Broadcast::make(v, op->lanes);
}

Expr Simplifier::visit(const Call* op, const Expr& e) {
  bool changed = false;
  std::vector<Expr> args;
  for (const Expr& arg : op->args) {
    args.push_back(mutate(arg));
    changed = changed || !args.back().same_as(arg);
  }
  return changed ? Call::make(op->op, std::move(args)) : e;
}

Expr Simplifier::visit(const Reduce* op, const Expr& e) {
  VarRanges saved = ranges_;
  for (const IterVar& iv : op->axes) {
    if (iv.extent >= 1) {
      ranges_[iv.var.get()] = ConstBound{0, iv.extent - 1};
    }
  }
  // An axis of extent 1 must stay a variable here: the Reduce node still binds it.
  for (const IterVar& iv : op->axes) {
    if (iv.extent == 1) {
      ranges_.erase(iv.var.get());
    }
  }
  Expr source = mutate(op->source);
  ranges_ = std::move(saved);
  return source.same_as(op->source) ? e : Reduce::make(op->reducer, source, op->axes);
}

}  // namespace simplify_detail

Expr simplify(const Expr& e, const VarRanges& ranges) {
  if (!e.defined()) {
    return e;
  }
  simplify_detail::Simplifier simplifier(ranges);
  return simplifier.mutate(e);
}

Stmt simplify(const Stmt& s, const VarRanges& ranges) {
  if (!s.defined()) {
    return s;
  }
  simplify_detail::Simplifier simplifier(ranges);
  return simplifier.mutate(s);
}

bool can_prove(const Expr& condition, const VarRanges& ranges) {
  std::optional<int64_t> v = simplify_detail::const_value(simplify(condition, ranges));
  return v.has_value() && *v != 0;
}

}  // namespace tensortune::ir

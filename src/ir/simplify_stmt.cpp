// SPDX-License-Identifier: Apache-2.0
// Statement simplification: loop ranges become variable ranges for the body, extent-0 loops
// vanish, extent-1 loops are replaced by their body at the loop's min, decided ifs keep one
// branch, and an undecided if narrows the ranges of the variables its condition constrains.
#include "simplify_internal.h"
#include "tensortune/ir/ir_equal.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"

#include <algorithm>

namespace tensortune::ir::simplify_detail {
namespace {

bool uses_var(const Stmt& s, const VarNode* v) {
  bool used = false;
  post_order_visit(s, [&](const Expr& e) { used = used || e.get() == v; });
  return used;
}

/// Sets `ranges[v]` for the lifetime of the object, then restores the previous state.
class ScopedRange {
 public:
  ScopedRange(VarRanges& ranges, const VarNode* v, std::optional<ConstBound> range)
      : ranges_(ranges), var_(v) {
    auto it = ranges.find(v);
    if (it != ranges.end()) {
      old_ = it->second;
    }
    if (range) {
      ranges[v] = *range;
    } else {
      ranges.erase(v);
    }
  }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;
  ~ScopedRange() {
    if (old_) {
      ranges_[var_] = *old_;
    } else {
      ranges_.erase(var_);
    }
  }

 private:
  VarRanges& ranges_;
  const VarNode* var_;
  std::optional<ConstBound> old_;
};

}  // namespace

void Simplifier::learn(const Expr& cond, bool truth) {
  if (const auto* op = cond.as<And>(); op != nullptr && truth) {
    learn(op->a, true);
    learn(op->b, true);
    return;
  }
  if (const auto* op = cond.as<Or>(); op != nullptr && !truth) {
    learn(op->a, false);
    learn(op->b, false);
    return;
  }
  if (const auto* op = cond.as<Not>()) {
    learn(op->a, !truth);
    return;
  }
  // Normalise to `x OP e` with x a variable of known range, OP one of <, <=, >, >=, ==.
  ExprKind kind = cond.kind();
  Expr x;
  Expr other;
  auto take = [&](const auto* op) {
    if (op == nullptr) {
      return false;
    }
    x = op->a;
    other = op->b;
    return true;
  };
  if (!take(cond.as<Lt>()) && !take(cond.as<Le>()) && !take(cond.as<Gt>()) &&
      !take(cond.as<Ge>()) && !take(cond.as<Eq>())) {
    return;
  }
  if (x.as<VarNode>() == nullptr || ranges_.count(x.as<VarNode>()) == 0) {
    std::swap(x, other);
    kind = mirrored(kind);
  }
  const auto* v = x.as<VarNode>();
  std::optional<ConstBound> e = bound(other);
  if (v == nullptr || !e || ranges_.count(v) == 0 || !x.type().is_scalar()) {
    return;
  }
  if (!truth) {
    if (kind == ExprKind::Eq) {
      return;
    }
    kind = negated(kind);
  }
  ConstBound r = ranges_[v];
  if (kind == ExprKind::Lt || kind == ExprKind::Le || kind == ExprKind::Eq) {
    r.max = std::min(r.max, kind == ExprKind::Lt ? e->max - 1 : e->max);
  }
  if (kind == ExprKind::Gt || kind == ExprKind::Ge || kind == ExprKind::Eq) {
    r.min = std::max(r.min, kind == ExprKind::Gt ? e->min + 1 : e->min);
  }
  if (r.min <= r.max) {
    ranges_[v] = r;
  }
}

Stmt Simplifier::visit(const For* op, const Stmt& s) {
  Expr min = mutate(op->min);
  Expr extent = mutate(op->extent);
  std::optional<int64_t> n = const_value(extent);
  if (n && *n <= 0) {
    return no_op();
  }
  if (n && *n == 1) {
    return mutate(substitute(op->body, VarMap{{op->var.get(), min}}));
  }
  std::optional<ConstBound> bm = bound(min);
  std::optional<ConstBound> be = bound(extent);
  std::optional<ConstBound> range;
  if (bm && be && be->max >= 1) {
    range = ConstBound{bm->min, bm->max + be->max - 1};
  }
  Stmt body;
  {
    ScopedRange scope(ranges_, op->var.get(), range);
    body = mutate(op->body);
  }
  if (is_no_op(body)) {
    return no_op();
  }
  if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) {
    return s;
  }
  return For::make(op->var, min, extent, op->for_kind, body, op->auto_unroll_max_step);
}

Stmt Simplifier::visit(const Store* op, const Stmt& s) {
  Expr value = mutate(op->value);
  bool changed = !value.same_as(op->value);
  std::vector<Expr> indices;
  for (const Expr& index : op->indices) {
    indices.push_back(mutate(index));
    changed = changed || !indices.back().same_as(index);
  }
  Expr predicate = mutate(op->predicate);
  if (std::optional<int64_t> p = predicate.defined() ? const_value(predicate) : std::nullopt) {
    if (*p == 0) {
      return no_op();
    }
    predicate = Expr();
  }
  // a[i] = a[i] changes nothing (an accumulation whose term folded away), also with the same
  // predicate on the load and the store (the masked lanes are neither read nor written).
  if (const auto* load = value.as<Load>();
      load != nullptr && load->buffer.same_as(op->buffer) &&
      load->indices.size() == indices.size() && predicate.defined() == load->predicate.defined() &&
      (!predicate.defined() || structural_equal(predicate, load->predicate))) {
    bool same = true;
    for (size_t k = 0; k < indices.size() && same; ++k) {
      same = structural_equal(load->indices[k], indices[k]);
    }
    if (same) {
      return no_op();
    }
  }
  if (!changed && predicate.same_as(op->predicate)) {
    return s;
  }
  return Store::make(op->buffer, value, std::move(indices), predicate);
}

Stmt Simplifier::visit(const Allocate* op, const Stmt& s) {
  Stmt body = mutate(op->body);
  if (is_no_op(body)) {
    return no_op();
  }
  return body.same_as(op->body) ? s : Allocate::make(op->buffer, body);
}

Stmt Simplifier::visit(const IfThenElse* op, const Stmt& s) {
  Expr cond = mutate(op->condition);
  if (std::optional<int64_t> v = const_value(cond)) {
    if (*v != 0) {
      return mutate(op->then_case);
    }
    return op->else_case.defined() ? mutate(op->else_case) : no_op();
  }
  VarRanges saved = ranges_;
  learn(cond, true);
  Stmt then_case = mutate(op->then_case);
  ranges_ = saved;
  Stmt else_case;
  if (op->else_case.defined()) {
    learn(cond, false);
    else_case = mutate(op->else_case);
    ranges_ = std::move(saved);
    if (is_no_op(else_case)) {
      else_case = Stmt();
    }
  }
  if (is_no_op(then_case)) {
    return else_case.defined() ? IfThenElse::make(logic_not(cond), else_case) : no_op();
  }
  if (cond.same_as(op->condition) && then_case.same_as(op->then_case) &&
      else_case.same_as(op->else_case)) {
    return s;
  }
  return IfThenElse::make(cond, then_case, else_case);
}

Stmt Simplifier::visit(const Seq* op, const Stmt& s) {
  bool changed = false;
  std::vector<Stmt> stmts;
  for (const Stmt& child : op->stmts) {
    Stmt c = mutate(child);
    changed = changed || !c.same_as(child);
    if (!is_no_op(c)) {
      stmts.push_back(c);
    }
  }
  if (!changed) {
    return s;
  }
  return stmts.empty() ? no_op() : Seq::make(std::move(stmts));
}

Stmt Simplifier::visit(const Evaluate* op, const Stmt& s) {
  Expr value = mutate(op->value);
  if (is_const_scalar(value)) {
    return no_op();
  }
  return value.same_as(op->value) ? s : Evaluate::make(value);
}

Stmt Simplifier::visit(const LetStmt* op, const Stmt& s) {
  Expr value = mutate(op->value);
  if (is_const_scalar(value) || value.as<VarNode>() != nullptr) {
    return mutate(substitute(op->body, VarMap{{op->var.get(), value}}));
  }
  std::optional<ConstBound> range;
  if (value.type().is_scalar() && value.type().is_int()) {
    range = bound(value);
  }
  Stmt body;
  {
    ScopedRange scope(ranges_, op->var.get(), range);
    body = mutate(op->body);
  }
  if (!uses_var(body, op->var.get())) {
    return body;
  }
  if (value.same_as(op->value) && body.same_as(op->body)) {
    return s;
  }
  return LetStmt::make(op->var, value, body);
}

}  // namespace tensortune::ir::simplify_detail

// SPDX-License-Identifier: Apache-2.0
// The mutator's dispatch and its default rebuild: children are mutated and the node is rebuilt
// only when one of them changed, so `same_as` tells a pass whether anything happened.
#include "tensortune/ir/ir_mutator.h"

namespace tensortune::ir {

Expr IRMutator::mutate(const Expr& e) {
  if (!e.defined()) {
    return e;
  }
  const ExprNode* n = e.get();
  switch (e.kind()) {
    case ExprKind::IntImm: return visit(static_cast<const IntImm*>(n), e);
    case ExprKind::FloatImm: return visit(static_cast<const FloatImm*>(n), e);
    case ExprKind::Var: return visit(static_cast<const VarNode*>(n), e);
    case ExprKind::Add: return visit(static_cast<const Add*>(n), e);
    case ExprKind::Sub: return visit(static_cast<const Sub*>(n), e);
    case ExprKind::Mul: return visit(static_cast<const Mul*>(n), e);
    case ExprKind::Div: return visit(static_cast<const Div*>(n), e);
    case ExprKind::Mod: return visit(static_cast<const Mod*>(n), e);
    case ExprKind::Min: return visit(static_cast<const Min*>(n), e);
    case ExprKind::Max: return visit(static_cast<const Max*>(n), e);
    case ExprKind::Eq: return visit(static_cast<const Eq*>(n), e);
    case ExprKind::Ne: return visit(static_cast<const Ne*>(n), e);
    case ExprKind::Lt: return visit(static_cast<const Lt*>(n), e);
    case ExprKind::Le: return visit(static_cast<const Le*>(n), e);
    case ExprKind::Gt: return visit(static_cast<const Gt*>(n), e);
    case ExprKind::Ge: return visit(static_cast<const Ge*>(n), e);
    case ExprKind::And: return visit(static_cast<const And*>(n), e);
    case ExprKind::Or: return visit(static_cast<const Or*>(n), e);
    case ExprKind::Not: return visit(static_cast<const Not*>(n), e);
    case ExprKind::Select: return visit(static_cast<const Select*>(n), e);
    case ExprKind::Cast: return visit(static_cast<const Cast*>(n), e);
    case ExprKind::Load: return visit(static_cast<const Load*>(n), e);
    case ExprKind::Ramp: return visit(static_cast<const Ramp*>(n), e);
    case ExprKind::Broadcast: return visit(static_cast<const Broadcast*>(n), e);
    case ExprKind::Call: return visit(static_cast<const Call*>(n), e);
    case ExprKind::Reduce: return visit(static_cast<const Reduce*>(n), e);
  }
  return e;
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s.defined()) {
    return s;
  }
  const StmtNode* n = s.get();
  switch (s.kind()) {
    case StmtKind::For: return visit(static_cast<const For*>(n), s);
    case StmtKind::Store: return visit(static_cast<const Store*>(n), s);
    case StmtKind::Allocate: return visit(static_cast<const Allocate*>(n), s);
    case StmtKind::IfThenElse: return visit(static_cast<const IfThenElse*>(n), s);
    case StmtKind::Seq: return visit(static_cast<const Seq*>(n), s);
    case StmtKind::Evaluate: return visit(static_cast<const Evaluate*>(n), s);
    case StmtKind::LetStmt: return visit(static_cast<const LetStmt*>(n), s);
  }
  return s;
}

namespace {

// Mutates each element; sets `changed` when any differs.
template <class T, class M>
std::vector<T> mutate_all(M* m, const std::vector<T>& v, bool* changed) {
  std::vector<T> out;
  out.reserve(v.size());
  for (const T& x : v) {
    out.push_back(m->mutate(x));
    *changed = *changed || !out.back().same_as(x);
  }
  return out;
}

class Rebuilder {
 public:
  template <class Node>
  static Expr binary(IRMutator* m, const Node* op, const Expr& e) {
    Expr a = m->mutate(op->a);
    Expr b = m->mutate(op->b);
    if (a.same_as(op->a) && b.same_as(op->b)) {
      return e;
    }
    return Node::make(std::move(a), std::move(b));
  }
};

}  // namespace

Expr IRMutator::visit(const IntImm* /*op*/, const Expr& e) { return e; }
Expr IRMutator::visit(const FloatImm* /*op*/, const Expr& e) { return e; }
Expr IRMutator::visit(const VarNode* /*op*/, const Expr& e) { return e; }

Expr IRMutator::visit(const Add* op, const Expr& e) { return Rebuilder::binary(this, op, e); }
Expr IRMutator::visit(const Sub* op, const Expr& e) { return Rebuilder::binary(this, op, e); }
Expr IRMutator::visit(const Mul* op, const Expr& e) { return Rebuilder::binary(this, op, e); }
Expr IRMutator::visit(const Div* op, const Expr& e) { return Rebuilder::binary(this, op, e); }
Expr IRMutator::visit(const Mod* op, const Expr& e) { return Rebuilder::binary(this, op, e); }
Expr IRMutator::visit(const Min* op, const Expr& e) { return Rebuilder::binary(this, op, e); }
Expr IRMutator::visit(const Max* op, const Expr& e) { return Rebuilder::binary(this, op, e); }
Expr IRMutator::visit(const Eq* op, const Expr& e) { return Rebuilder::binary(this, op, e); }
Expr IRMutator::visit(const Ne* op, const Expr& e) { return Rebuilder::binary(this, op, e); }
Expr IRMutator::visit(const Lt* op, const Expr& e) { return Rebuilder::binary(this, op, e); }
Expr IRMutator::visit(const Le* op, const Expr& e) { return Rebuilder::binary(this, op, e); }
Expr IRMutator::visit(const Gt* op, const Expr& e) { return Rebuilder::binary(this, op, e); }
Expr IRMutator::visit(const Ge* op, const Expr& e) { return Rebuilder::binary(this, op, e); }
Expr IRMutator::visit(const And* op, const Expr& e) { return Rebuilder::binary(this, op, e); }
Expr IRMutator::visit(const Or* op, const Expr& e) { return Rebuilder::binary(this, op, e); }

Expr IRMutator::visit(const Not* op, const Expr& e) {
  Expr a = mutate(op->a);
  return a.same_as(op->a) ? e : Not::make(std::move(a));
}

Expr IRMutator::visit(const Select* op, const Expr& e) {
  Expr c = mutate(op->condition);
  Expr t = mutate(op->true_value);
  Expr f = mutate(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
    return e;
  }
  return Select::make(std::move(c), std::move(t), std::move(f));
}

Expr IRMutator::visit(const Cast* op, const Expr& e) {
  Expr v = mutate(op->value);
  if (v.same_as(op->value)) {
    return e;
  }
  DataType t = op->type.with_lanes(v.type().lanes());  // before v is moved from
  return Cast::make(t, std::move(v));
}

Expr IRMutator::visit(const Load* op, const Expr& e) {
  bool changed = false;
  std::vector<Expr> idx = mutate_all(this, op->indices, &changed);
  Expr p = mutate(op->predicate);
  if (!changed && p.same_as(op->predicate)) {
    return e;
  }
  return Load::make(op->buffer, std::move(idx), std::move(p));
}

Expr IRMutator::visit(const Ramp* op, const Expr& e) {
  Expr b = mutate(op->base);
  Expr s = mutate(op->stride);
  if (b.same_as(op->base) && s.same_as(op->stride)) {
    return e;
  }
  return Ramp::make(std::move(b), std::move(s), op->lanes);
}

Expr IRMutator::visit(const Broadcast* op, const Expr& e) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? e : Broadcast::make(std::move(v), op->lanes);
}

Expr IRMutator::visit(const Call* op, const Expr& e) {
  bool changed = false;
  std::vector<Expr> args = mutate_all(this, op->args, &changed);
  return changed ? Call::make(op->op, std::move(args)) : e;
}

Expr IRMutator::visit(const Reduce* op, const Expr& e) {
  Expr s = mutate(op->source);
  return s.same_as(op->source) ? e : Reduce::make(op->reducer, std::move(s), op->axes);
}

Stmt IRMutator::visit(const For* op, const Stmt& s) {
  Expr mn = mutate(op->min);
  Expr ext = mutate(op->extent);
  Stmt body = mutate(op->body);
  if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) {
    return s;
  }
  return For::make(op->var, std::move(mn), std::move(ext), op->for_kind, std::move(body),
                   op->auto_unroll_max_step);
}

Stmt IRMutator::visit(const Store* op, const Stmt& s) {
  Expr v = mutate(op->value);
  bool changed = !v.same_as(op->value);
  std::vector<Expr> idx = mutate_all(this, op->indices, &changed);
  Expr p = mutate(op->predicate);
  if (!changed && p.same_as(op->predicate)) {
    return s;
  }
  return Store::make(op->buffer, std::move(v), std::move(idx), std::move(p));
}

Stmt IRMutator::visit(const Allocate* op, const Stmt& s) {
  Stmt body = mutate(op->body);
  return body.same_as(op->body) ? s : Allocate::make(op->buffer, std::move(body));
}

Stmt IRMutator::visit(const IfThenElse* op, const Stmt& s) {
  Expr c = mutate(op->condition);
  Stmt t = mutate(op->then_case);
  Stmt f = mutate(op->else_case);
  if (c.same_as(op->condition) && t.same_as(op->then_case) && f.same_as(op->else_case)) {
    return s;
  }
  return IfThenElse::make(std::move(c), std::move(t), std::move(f));
}

Stmt IRMutator::visit(const Seq* op, const Stmt& s) {
  bool changed = false;
  std::vector<Stmt> stmts = mutate_all(this, op->stmts, &changed);
  return changed ? Seq::make(std::move(stmts)) : s;
}

Stmt IRMutator::visit(const Evaluate* op, const Stmt& s) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? s : Evaluate::make(std::move(v));
}

Stmt IRMutator::visit(const LetStmt* op, const Stmt& s) {
  Expr v = mutate(op->value);
  Stmt body = mutate(op->body);
  if (v.same_as(op->value) && body.same_as(op->body)) {
    return s;
  }
  return LetStmt::make(op->var, std::move(v), std::move(body));
}

namespace {

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& map) : map_(map) {}
  using IRMutator::mutate;

 protected:
  using IRMutator::visit;
  Expr visit(const VarNode* op, const Expr& e) override {
    auto it = map_.find(op);
    return it == map_.end() ? e : it->second;
  }

 private:
  const VarMap& map_;
};

}  // namespace

Expr substitute(const Expr& e, const VarMap& map) {
  if (map.empty()) {
    return e;
  }
  Substituter s(map);
  return s.mutate(e);
}

Stmt substitute(const Stmt& s, const VarMap& map) {
  if (map.empty()) {
    return s;
  }
  Substituter sub(map);
  return sub.mutate(s);
}

}  // namespace tensortune::ir

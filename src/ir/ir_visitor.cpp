// SPDX-License-Identifier: Apache-2.0
// The visitor's dispatch (one switch per node family, no default, so -Wswitch flags a new kind)
// and its default recursion.
#include "tensortune/ir/ir_visitor.h"

namespace tensortune::ir {

void IRVisitor::visit(const Expr& e) {
  if (!e.defined()) {
    return;
  }
  const ExprNode* n = e.get();
  switch (e.kind()) {
    case ExprKind::IntImm: return visit(static_cast<const IntImm*>(n));
    case ExprKind::FloatImm: return visit(static_cast<const FloatImm*>(n));
    case ExprKind::Var: return visit(static_cast<const VarNode*>(n));
    case ExprKind::Add: return visit(static_cast<const Add*>(n));
    case ExprKind::Sub: return visit(static_cast<const Sub*>(n));
    case ExprKind::Mul: return visit(static_cast<const Mul*>(n));
    case ExprKind::Div: return visit(static_cast<const Div*>(n));
    case ExprKind::Mod: return visit(static_cast<const Mod*>(n));
    case ExprKind::Min: return visit(static_cast<const Min*>(n));
    case ExprKind::Max: return visit(static_cast<const Max*>(n));
    case ExprKind::Eq: return visit(static_cast<const Eq*>(n));
    case ExprKind::Ne: return visit(static_cast<const Ne*>(n));
    case ExprKind::Lt: return visit(static_cast<const Lt*>(n));
    case ExprKind::Le: return visit(static_cast<const Le*>(n));
    case ExprKind::Gt: return visit(static_cast<const Gt*>(n));
    case ExprKind::Ge: return visit(static_cast<const Ge*>(n));
    case ExprKind::And: return visit(static_cast<const And*>(n));
    case ExprKind::Or: return visit(static_cast<const Or*>(n));
    case ExprKind::Not: return visit(static_cast<const Not*>(n));
    case ExprKind::Select: return visit(static_cast<const Select*>(n));
    case ExprKind::Cast: return visit(static_cast<const Cast*>(n));
    case ExprKind::Load: return visit(static_cast<const Load*>(n));
    case ExprKind::Ramp: return visit(static_cast<const Ramp*>(n));
    case ExprKind::Broadcast: return visit(static_cast<const Broadcast*>(n));
    case ExprKind::Call: return visit(static_cast<const Call*>(n));
    case ExprKind::Reduce: return visit(static_cast<const Reduce*>(n));
  }
}

void IRVisitor::visit(const Stmt& s) {
  if (!s.defined()) {
    return;
  }
  const StmtNode* n = s.get();
  switch (s.kind()) {
    case StmtKind::For: return visit(static_cast<const For*>(n));
    case StmtKind::Store: return visit(static_cast<const Store*>(n));
    case StmtKind::Allocate: return visit(static_cast<const Allocate*>(n));
    case StmtKind::IfThenElse: return visit(static_cast<const IfThenElse*>(n));
    case StmtKind::Seq: return visit(static_cast<const Seq*>(n));
    case StmtKind::Evaluate: return visit(static_cast<const Evaluate*>(n));
    case StmtKind::LetStmt: return visit(static_cast<const LetStmt*>(n));
  }
}

void IRVisitor::visit(const IntImm* /*op*/) {}
void IRVisitor::visit(const FloatImm* /*op*/) {}
void IRVisitor::visit(const VarNode* /*op*/) {}

void IRVisitor::visit(const Add* op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit(const Sub* op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit(const Mul* op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit(const Div* op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit(const Mod* op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit(const Min* op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit(const Max* op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit(const Eq* op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit(const Ne* op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit(const Lt* op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit(const Le* op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit(const Gt* op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit(const Ge* op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit(const And* op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit(const Or* op) {
  visit(op->a);
  visit(op->b);
}

void IRVisitor::visit(const Not* op) { visit(op->a); }
void IRVisitor::visit(const Select* op) {
  visit(op->condition);
  visit(op->true_value);
  visit(op->false_value);
}
void IRVisitor::visit(const Cast* op) { visit(op->value); }
void IRVisitor::visit(const Load* op) {
  for (const Expr& i : op->indices) {
    visit(i);
  }
  visit(op->predicate);
}
void IRVisitor::visit(const Ramp* op) {
  visit(op->base);
  visit(op->stride);
}
void IRVisitor::visit(const Broadcast* op) { visit(op->value); }
void IRVisitor::visit(const Call* op) {
  for (const Expr& a : op->args) {
    visit(a);
  }
}
void IRVisitor::visit(const Reduce* op) { visit(op->source); }

void IRVisitor::visit(const For* op) {
  visit(op->min);
  visit(op->extent);
  visit(op->body);
}
void IRVisitor::visit(const Store* op) {
  visit(op->value);
  for (const Expr& i : op->indices) {
    visit(i);
  }
  visit(op->predicate);
}
void IRVisitor::visit(const Allocate* op) { visit(op->body); }
void IRVisitor::visit(const IfThenElse* op) {
  visit(op->condition);
  visit(op->then_case);
  visit(op->else_case);
}
void IRVisitor::visit(const Seq* op) {
  for (const Stmt& s : op->stmts) {
    visit(s);
  }
}
void IRVisitor::visit(const Evaluate* op) { visit(op->value); }
void IRVisitor::visit(const LetStmt* op) {
  visit(op->value);
  visit(op->body);
}

namespace {

class PostOrder : public IRVisitor {
 public:
  explicit PostOrder(const std::function<void(const Expr&)>& fn) : fn_(fn) {}
  using IRVisitor::visit;
  void visit(const Expr& e) override {
    IRVisitor::visit(e);
    if (e.defined()) {
      fn_(e);
    }
  }

 private:
  const std::function<void(const Expr&)>& fn_;
};

}  // namespace

void post_order_visit(const Expr& e, const std::function<void(const Expr&)>& fn) {
  PostOrder v(fn);
  v.visit(e);
}

void post_order_visit(const Stmt& s, const std::function<void(const Expr&)>& fn) {
  PostOrder v(fn);
  v.visit(s);
}

}  // namespace tensortune::ir

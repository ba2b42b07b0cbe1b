// SPDX-License-Identifier: Apache-2.0
// A recursive read-only walk over expressions and statements. Override the node kinds a pass
// cares about and call the base version to keep recursing.
#pragma once

#include "tensortune/ir/expr.h"
#include "tensortune/ir/stmt.h"

#include <functional>

namespace tensortune::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  /// Dispatches on the node kind (one switch, no default). Undefined handles are ignored.
  virtual void visit(const Expr& e);
  virtual void visit(const Stmt& s);

 protected:
  virtual void visit(const IntImm* op);
  virtual void visit(const FloatImm* op);
  virtual void visit(const VarNode* op);
  virtual void visit(const Add* op);
  virtual void visit(const Sub* op);
  virtual void visit(const Mul* op);
  virtual void visit(const Div* op);
  virtual void visit(const Mod* op);
  virtual void visit(const Min* op);
  virtual void visit(const Max* op);
  virtual void visit(const Eq* op);
  virtual void visit(const Ne* op);
  virtual void visit(const Lt* op);
  virtual void visit(const Le* op);
  virtual void visit(const Gt* op);
  virtual void visit(const Ge* op);
  virtual void visit(const And* op);
  virtual void visit(const Or* op);
  virtual void visit(const Not* op);
  virtual void visit(const Select* op);
  virtual void visit(const Cast* op);
  virtual void visit(const Load* op);
  virtual void visit(const Ramp* op);
  virtual void visit(const Broadcast* op);
  virtual void visit(const Call* op);
  virtual void visit(const Reduce* op);

  virtual void visit(const For* op);
  virtual void visit(const Store* op);
  virtual void visit(const Allocate* op);
  virtual void visit(const IfThenElse* op);
  virtual void visit(const Seq* op);
  virtual void visit(const Evaluate* op);
  virtual void visit(const LetStmt* op);
};

/// Calls `fn` on every expression node under `e` (children before parents).
void post_order_visit(const Expr& e, const std::function<void(const Expr&)>& fn);
/// Calls `fn` on every expression node under `s`.
void post_order_visit(const Stmt& s, const std::function<void(const Expr&)>& fn);

}  // namespace tensortune::ir

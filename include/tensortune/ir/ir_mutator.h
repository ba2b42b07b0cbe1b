// SPDX-License-Identifier: Apache-2.0
// A recursive rewriter. Each overload receives the node and its handle; the default rebuilds the
// node from mutated children and returns the *same handle* when no child changed.
#pragma once

#include "tensortune/ir/expr.h"
#include "tensortune/ir/stmt.h"

#include <unordered_map>

namespace tensortune::ir {

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  /// Dispatches on the node kind (one switch, no default). Undefined handles map to themselves.
  virtual Expr mutate(const Expr& e);
  virtual Stmt mutate(const Stmt& s);

 protected:
  virtual Expr visit(const IntImm* op, const Expr& e);
  virtual Expr visit(const FloatImm* op, const Expr& e);
  virtual Expr visit(const VarNode* op, const Expr& e);
  virtual Expr visit(const Add* op, const Expr& e);
  virtual Expr visit(const Sub* op, const Expr& e);
  virtual Expr visit(const Mul* op, const Expr& e);
  virtual Expr visit(const Div* op, const Expr& e);
  virtual Expr visit(const Mod* op, const Expr& e);
  virtual Expr visit(const Min* op, const Expr& e);
  virtual Expr visit(const Max* op, const Expr& e);
  virtual Expr visit(const Eq* op, const Expr& e);
  virtual Expr visit(const Ne* op, const Expr& e);
  virtual Expr visit(const Lt* op, const Expr& e);
  virtual Expr visit(const Le* op, const Expr& e);
  virtual Expr visit(const Gt* op, const Expr& e);
  virtual Expr visit(const Ge* op, const Expr& e);
  virtual Expr visit(const And* op, const Expr& e);
  virtual Expr visit(const Or* op, const Expr& e);
  virtual Expr visit(const Not* op, const Expr& e);
  virtual Expr visit(const Select* op, const Expr& e);
  virtual Expr visit(const Cast* op, const Expr& e);
  virtual Expr visit(const Load* op, const Expr& e);
  virtual Expr visit(const Ramp* op, const Expr& e);
  virtual Expr visit(const Broadcast* op, const Expr& e);
  virtual Expr visit(const Call* op, const Expr& e);
  virtual Expr visit(const Reduce* op, const Expr& e);

  virtual Stmt visit(const For* op, const Stmt& s);
  virtual Stmt visit(const Store* op, const Stmt& s);
  virtual Stmt visit(const Allocate* op, const Stmt& s);
  virtual Stmt visit(const IfThenElse* op, const Stmt& s);
  virtual Stmt visit(const Seq* op, const Stmt& s);
  virtual Stmt visit(const Evaluate* op, const Stmt& s);
  virtual Stmt visit(const LetStmt* op, const Stmt& s);
};

using VarMap = std::unordered_map<const VarNode*, Expr>;

/// Replaces every occurrence of the variables in `map` (by identity).
Expr substitute(const Expr& e, const VarMap& map);
Stmt substitute(const Stmt& s, const VarMap& map);

}  // namespace tensortune::ir

// SPDX-License-Identifier: Apache-2.0
// Private to simplify*.cpp: the Simplifier mutator, split by node kind over several files, and the
// linear forms (constant + sum of coefficient * atom) that canonicalise integer index arithmetic.
#pragma once

#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/linear.h"
#include "tensortune/ir/simplify.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace tensortune::ir::simplify_detail {

int64_t floor_div(int64_t x, int64_t y);
int64_t floor_mod(int64_t x, int64_t y);

using Linear = LinearForm;

/// Adds `coeff * atom`, merging with a structurally equal atom.
void add_term(Linear& lf, const Expr& atom, int64_t coeff);
/// dst += scale * src.
void add_scaled(Linear& dst, const Linear& src, int64_t scale);
/// Interval of a linear form from the bounds of its atoms; nullopt when an atom is unbounded.
std::optional<ConstBound> linear_bound(const Linear& lf, const VarRanges& ranges);

/// The comparison with swapped operands: a < b is b > a, a <= b is b >= a (== and != stay).
ExprKind mirrored(ExprKind kind);
/// The comparison that holds when `kind` does not: Eq <-> Ne, Lt <-> Ge, Le <-> Gt.
ExprKind negated(ExprKind kind);

/// A deterministic total preorder on expressions that never looks at pointers (variables compare
/// by name, so distinct variables with one name tie).
int compare_expr(const Expr& a, const Expr& b);

/// Scalar IntImm or FloatImm.
bool is_const_scalar(const Expr& e);
/// The value of a scalar or broadcast boolean/integer constant, if `e` is one.
std::optional<int64_t> const_value(const Expr& e);
/// Evaluates `e` when all its operands are constants and folding is safe (no division by zero, no
/// out-of-range cast); otherwise returns it unchanged. Uses the interpreter, so folding always
/// agrees with ir::eval.
Expr fold_constants(const Expr& e);

/// The arithmetic simplifier. Every rule takes simplified operands and returns a simplified
/// result, so rules may call each other to build their output.
class Simplifier : public IRMutator {
 public:
  explicit Simplifier(VarRanges ranges) : ranges_(std::move(ranges)) {}
  using IRMutator::mutate;

  Expr add(const Expr& a, const Expr& b);
  Expr sub(const Expr& a, const Expr& b);
  Expr mul(const Expr& a, const Expr& b);
  Expr div(const Expr& a, const Expr& b);
  Expr mod(const Expr& a, const Expr& b);
  Expr min(const Expr& a, const Expr& b);
  Expr max(const Expr& a, const Expr& b);
  Expr compare(ExprKind kind, const Expr& a, const Expr& b);
  static Expr logic_and(const Expr& a, const Expr& b);
  static Expr logic_or(const Expr& a, const Expr& b);
  Expr logic_not(const Expr& a);
  static Expr select(const Expr& c, const Expr& t, const Expr& f);
  /// Bound of a simplified integer expression (scalar or vector: over all lanes).
  std::optional<ConstBound> bound(const Expr& e) const;
  /// Bound of a - b, from their linear difference (scalar ints only).
  std::optional<ConstBound> difference_bound(const Expr& a, const Expr& b);

  VarRanges& ranges() { return ranges_; }

 protected:
  Expr visit(const VarNode* op, const Expr& e) override;
  Expr visit(const Add* op, const Expr& e) override;
  Expr visit(const Sub* op, const Expr& e) override;
  Expr visit(const Mul* op, const Expr& e) override;
  Expr visit(const Div* op, const Expr& e) override;
  Expr visit(const Mod* op, const Expr& e) override;
  Expr visit(const Min* op, const Expr& e) override;
  Expr visit(const Max* op, const Expr& e) override;
  Expr visit(const Eq* op, const Expr& e) override;
  Expr visit(const Ne* op, const Expr& e) override;
  Expr visit(const Lt* op, const Expr& e) override;
  Expr visit(const Le* op, const Expr& e) override;
  Expr visit(const Gt* op, const Expr& e) override;
  Expr visit(const Ge* op, const Expr& e) override;
  Expr visit(const And* op, const Expr& e) override;
  Expr visit(const Or* op, const Expr& e) override;
  Expr visit(const Not* op, const Expr& e) override;
  Expr visit(const Select* op, const Expr& e) override;
  Expr visit(const Cast* op, const Expr& e) override;
  Expr visit(const Load* op, const Expr& e) override;
  Expr visit(const Ramp* op, const Expr& e) override;
  Expr visit(const Broadcast* op, const Expr& e) override;
  Expr visit(const Call* op, const Expr& e) override;
  Expr visit(const Reduce* op, const Expr& e) override;

  Stmt visit(const For* op, const Stmt& s) override;
  Stmt visit(const Store* op, const Stmt& s) override;
  Stmt visit(const Allocate* op, const Stmt& s) override;
  Stmt visit(const IfThenElse* op, const Stmt& s) override;
  Stmt visit(const Seq* op, const Stmt& s) override;
  Stmt visit(const Evaluate* op, const Stmt& s) override;
  Stmt visit(const LetStmt* op, const Stmt& s) override;

 private:
  /// Ramp/Broadcast arithmetic: broadcast(a) op broadcast(b) -> broadcast(a op b),
  /// ramp(b, s) +- broadcast(x) -> ramp(b +- x, s), ... Undefined when no rule applies.
  Expr vector_arith(ExprKind kind, const Expr& a, const Expr& b);
  static Expr linear_add(const Expr& a, const Expr& b, int64_t sign);
  Expr div_by_const(const Expr& a, int64_t c);
  Expr mod_by_const(const Expr& a, int64_t c);
  Expr ramp_div_mod(bool is_div, const Ramp* ramp, int64_t c);
  Expr min_max(bool is_min, const Expr& a, const Expr& b);
  /// x/c OP k (c > 0, k constant) as a comparison of x itself; undefined when not of that form.
  Expr compare_quotient(ExprKind kind, const Expr& a, const Expr& b);
  /// Narrows `ranges_` with what `cond == truth` implies about single variables.
  void learn(const Expr& cond, bool truth);

  VarRanges ranges_;
};

/// True for statements that do nothing (an empty Seq, evaluating a constant).
bool is_no_op(const Stmt& s);
/// The canonical no-op statement, "evaluate(0)" (Seq::make refuses an empty sequence).
Stmt no_op();

}  // namespace tensortune::ir::simplify_detail

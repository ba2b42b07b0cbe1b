// SPDX-License-Identifier: Apache-2.0
// parallel_outer_loops (see host_reference.h).
#include "measure/host_reference.h"

#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ir_visitor.h"

namespace tensortune::measure::detail {
namespace {

/// Whether every store under a statement writes an index that uses `var`, and whether it has any.
class StoresUse : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  explicit StoresUse(const ir::VarNode* var) : var_(var) {}
  bool all = true;
  bool any = false;

 protected:
  void visit(const ir::Store* op) override {
    any = true;
    uses_ = false;
    for (const ir::Expr& index : op->indices) {
      ir::IRVisitor::visit(index);
    }
    all = all && uses_;
    ir::IRVisitor::visit(op->value);
  }
  void visit(const ir::VarNode* op) override { uses_ = uses_ || op == var_; }

 private:
  const ir::VarNode* var_;
  bool uses_ = false;
};

/// Makes the outermost loops parallel and leaves everything under them alone.
class ParallelOuter : public ir::IRMutator {
 public:
  using ir::IRMutator::mutate;

 protected:
  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    if (op->for_kind != ir::ForKind::Serial) {
      return s;
    }
    StoresUse stores(op->var.get());
    stores.visit(op->body);
    if (!stores.any || !stores.all) {
      return s;
    }
    return ir::For::make(op->var, op->min, op->extent, ir::ForKind::Parallel, op->body,
                         op->auto_unroll_max_step);
  }
};

}  // namespace

ir::LoweredFunc parallel_outer_loops(const ir::LoweredFunc& func) {
  ir::LoweredFunc out = func;
  out.body = ParallelOuter().mutate(func.body);
  return out;
}

}  // namespace tensortune::measure::detail

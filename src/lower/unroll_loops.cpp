// SPDX-License-Identifier: Apache-2.0
// The unroll pass (after TVM's UnrollLoop): explicit Unrolled loops, and serial loop nests that
// fit the auto_unroll_max_step budget of an enclosing pragma, become copies of their body.
#include "tensortune/lower/unroll_loops.h"

#include "freshen.h"
#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ops.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace tensortune::lower {
namespace {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max() / 4;

int64_t saturate(int64_t v) {
  return v > kUnbounded ? kUnbounded : v;
}

/// Statement executions of `s`; kUnbounded when a loop extent is not constant.
int64_t steps(const ir::Stmt& s) {
  if (!s.defined()) {
    return 0;
  }
  if (const auto* op = s.as<ir::For>()) {
    const int64_t* extent = ir::as_const_int(op->extent);
    int64_t inner = steps(op->body);
    if (extent == nullptr || (*extent > 0 && inner > kUnbounded / *extent)) {
      return kUnbounded;
    }
    return *extent * inner;
  }
  if (const auto* op = s.as<ir::Seq>()) {
    int64_t total = 0;
    for (const ir::Stmt& c : op->stmts) {
      total = saturate(total + steps(c));
    }
    return total;
  }
  if (const auto* op = s.as<ir::IfThenElse>()) {
    // One branch runs: an unswitched tile (then: full, else: guarded) costs its larger branch.
    return std::max(steps(op->then_case), steps(op->else_case));
  }
  if (const auto* op = s.as<ir::Allocate>()) {
    return steps(op->body);
  }
  if (const auto* op = s.as<ir::LetStmt>()) {
    return steps(op->body);
  }
  return 1;
}

bool has_if(const ir::Stmt& s) {
  if (!s.defined()) {
    return false;
  }
  if (s.as<ir::IfThenElse>() != nullptr) {
    return true;
  }
  if (const auto* op = s.as<ir::For>()) {
    return has_if(op->body);
  }
  if (const auto* op = s.as<ir::Seq>()) {
    return std::any_of(op->stmts.begin(), op->stmts.end(),
                       [](const ir::Stmt& c) { return has_if(c); });
  }
  if (const auto* op = s.as<ir::Allocate>()) {
    return has_if(op->body);
  }
  if (const auto* op = s.as<ir::LetStmt>()) {
    return has_if(op->body);
  }
  return false;
}

class Unroller : public ir::IRMutator {
 protected:
  using ir::IRMutator::visit;

  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    const int64_t saved = max_step_;
    if (op->auto_unroll_max_step > 0) {
      max_step_ = std::min(op->auto_unroll_max_step, kMaxAutoUnrollSteps);
    }
    ir::Stmt body = mutate(op->body);
    const int64_t budget = max_step_;
    max_step_ = saved;
    const int64_t* extent = ir::as_const_int(op->extent);
    if (extent != nullptr && *extent > 0) {
      const int64_t inner = steps(body);
      const int64_t total = inner > kUnbounded / *extent ? kUnbounded : *extent * inner;
      const bool affordable = total <= budget_left_;
      bool explicit_unroll =
          op->for_kind == ir::ForKind::Unrolled && *extent <= kMaxUnrollExtent && affordable;
      // Guarded nests (the boundary copies left by unswitch_guards) are not auto-unrolled: they
      // run for a few tiles only, and unrolled they are most of the code LLVM has to compile.
      bool auto_unroll = op->for_kind == ir::ForKind::Serial && budget > 0 && total <= budget &&
                         affordable && !has_if(body);
      if (explicit_unroll || auto_unroll) {
        budget_left_ -= total;  // counts nested copies twice: errs on the side of smaller code
        return unroll(op, body, *extent);
      }
    }
    if (body.same_as(op->body)) {
      return s;
    }
    return ir::For::make(op->var, op->min, op->extent, op->for_kind, body,
                         op->auto_unroll_max_step);
  }

 private:
  static ir::Stmt unroll(const ir::For* op, const ir::Stmt& body, int64_t extent) {
    std::vector<ir::Stmt> copies;
    for (int64_t i = 0; i < extent; ++i) {
      ir::Expr value = ir::is_const_int(op->min, 0) ? ir::make_const(op->var.type(), i)
                                                    : op->min + ir::make_const(op->var.type(), i);
      copies.push_back(freshen(body, ir::VarMap{{op->var.get(), value}}));
    }
    return ir::Seq::make(std::move(copies));
  }

  int64_t max_step_ = 0;
  int64_t budget_left_ = kMaxUnrolledStatements;
};

}  // namespace

ir::Stmt unroll_loops(const ir::Stmt& s) {
  Unroller unroller;
  return unroller.mutate(s);
}

}  // namespace tensortune::lower

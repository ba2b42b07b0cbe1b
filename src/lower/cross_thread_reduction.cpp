// SPDX-License-Identifier: Apache-2.0
// Cross-thread reductions in lowering: which thread-bound loops reduce across the threads of a
// block, and the forms the CUDA generator cannot turn into a block-wide combine (see the
// header). The generator checks its final loop IR again; rejecting here lets the search drop
// such candidates before anything is built.
#include "cross_thread_reduction.h"

#include "tensortune/ir/ir_equal.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tensortune::lower {
namespace {

using VarSet = std::set<const ir::VarNode*>;

bool is_thread(ir::ForKind k) {
  return k == ir::ForKind::ThreadX || k == ir::ForKind::ThreadY || k == ir::ForKind::ThreadZ;
}

bool uses_any(const ir::Expr& e, const VarSet& vars) {
  bool found = false;
  ir::post_order_visit(e, [&](const ir::Expr& x) {
    const auto* v = x.as<ir::VarNode>();
    found = found || (v != nullptr && vars.count(v) != 0);
  });
  return found;
}

bool uses_any(const std::vector<ir::Expr>& exprs, const VarSet& vars) {
  for (const ir::Expr& e : exprs) {
    if (uses_any(e, vars)) {
      return true;
    }
  }
  return false;
}

/// How many loads of `buffer` there are in `s`.
size_t count_loads(const ir::Stmt& s, const ir::Buffer& buffer) {
  size_t n = 0;
  ir::post_order_visit(s, [&](const ir::Expr& x) {
    const auto* load = x.as<ir::Load>();
    n += load != nullptr && load->buffer.same_as(buffer) ? 1 : 0;
  });
  return n;
}

bool reads(const ir::Expr& e, const ir::Buffer& buffer) {
  bool found = false;
  ir::post_order_visit(e, [&](const ir::Expr& x) {
    const auto* load = x.as<ir::Load>();
    found = found || (load != nullptr && load->buffer.same_as(buffer));
  });
  return found;
}

bool same_indices(const std::vector<ir::Expr>& a, const std::vector<ir::Expr>& b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (!ir::structural_equal(a[i], b[i])) {
      return false;
    }
  }
  return true;
}

/// True for `B[idx] = B[idx] op value` (op: +, -, *, min, max; B[idx] first for -) where
/// `value` does not read B.
bool is_update(const ir::Store* st) {
  auto is_target = [&](const ir::Expr& e) {
    const auto* load = e.as<ir::Load>();
    return load != nullptr && load->buffer.same_as(st->buffer) &&
           same_indices(load->indices, st->indices);
  };
  auto check = [&](const ir::Expr& a, const ir::Expr& b, bool commutative) {
    if (is_target(a)) {
      return !reads(b, st->buffer);
    }
    return commutative && is_target(b) && !reads(a, st->buffer);
  };
  const ir::Expr& v = st->value;
  switch (v.kind()) {
    case ir::ExprKind::Add:
      return check(v.as<ir::Add>()->a, v.as<ir::Add>()->b, true);
    case ir::ExprKind::Sub:
      return check(v.as<ir::Sub>()->a, v.as<ir::Sub>()->b, false);
    case ir::ExprKind::Mul:
      return check(v.as<ir::Mul>()->a, v.as<ir::Mul>()->b, true);
    case ir::ExprKind::Min:
      return check(v.as<ir::Min>()->a, v.as<ir::Min>()->b, true);
    case ir::ExprKind::Max:
      return check(v.as<ir::Max>()->a, v.as<ir::Max>()->b, true);
    default:
      return false;
  }
}

std::string describe(const ir::For* op, const LoopOrigins& origins) {
  auto it = origins.find(op->var.get());
  if (it == origins.end()) {
    return "loop '" + op->var.name() + "'";
  }
  return "axis '" + it->second.axis + "' of stage '" + it->second.stage + "'";
}

/// A store inside a thread-bound loop, and whether some condition around it (inside the loop)
/// uses no variable defined inside the loop.
struct InnerStore {
  const ir::Store* store = nullptr;
  bool under_invariant_condition = false;
};

/// What is inside one thread-bound loop: its stores, the buffers it allocates (private to a
/// thread), the variables it defines, the first loop inside it bound to threadIdx.
class LoopBody : public ir::IRVisitor {
 public:
  explicit LoopBody(const ir::For* loop) { inner.insert(loop->var.get()); }
  using ir::IRVisitor::visit;

  std::vector<InnerStore> stores;
  std::set<const ir::BufferNode*> private_buffers;
  VarSet inner;
  const ir::For* nested_thread = nullptr;

 protected:
  void visit(const ir::For* op) override {
    inner.insert(op->var.get());
    if (is_thread(op->for_kind) && nested_thread == nullptr) {
      nested_thread = op;
    }
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::LetStmt* op) override {
    inner.insert(op->var.get());
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Allocate* op) override {
    private_buffers.insert(op->buffer.get());
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::IfThenElse* op) override {
    const int invariant = uses_any(op->condition, inner) ? 0 : 1;
    invariant_ += invariant;
    ir::IRVisitor::visit(op);
    invariant_ -= invariant;
  }
  void visit(const ir::Store* op) override {
    stores.push_back(InnerStore{op, invariant_ > 0});
    ir::IRVisitor::visit(op);
  }

 private:
  int invariant_ = 0;
};

/// The largest extent bound to each thread index in a kernel: the launch's block.
class BlockShape : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  std::map<ir::ForKind, int64_t> threads;

 protected:
  void visit(const ir::For* op) override {
    const int64_t* extent = ir::as_const_int(op->extent);
    if (is_thread(op->for_kind) && extent != nullptr) {
      threads[op->for_kind] = std::max(threads[op->for_kind], *extent);
    }
    ir::IRVisitor::visit(op);
  }
};

/// Walks a kernel: the thread variables in scope and the enclosing places that not every thread
/// of the block reaches.
class Walker : public ir::IRVisitor {
 public:
  Walker(const LoopOrigins& origins, std::map<ir::ForKind, int64_t> block)
      : origins_(origins), block_(std::move(block)) {}
  using ir::IRVisitor::visit;

 protected:
  void visit(const ir::For* op) override {
    const bool thread = is_thread(op->for_kind);
    if (thread && is_reduction(op)) {
      return;  // checked; nothing inside binds threads
    }
    std::string divergent;
    const int64_t* extent = ir::as_const_int(op->extent);
    if (thread && extent != nullptr && *extent < block_[op->for_kind]) {
      divergent = describe(op, origins_) + ", bound to " + ir::for_kind_name(op->for_kind) +
                  " with fewer iterations than the block has threads";
    } else if (uses_any(op->min, thread_vars_) || uses_any(op->extent, thread_vars_)) {
      divergent = "loop '" + op->var.name() + "', whose bounds depend on threadIdx";
    }
    if (!divergent.empty()) {
      divergent_.push_back(divergent);
    }
    if (thread) {
      thread_vars_.insert(op->var.get());
      enclosing_x_ += op->for_kind == ir::ForKind::ThreadX ? 1 : 0;
    }
    ir::IRVisitor::visit(op);
    if (thread) {
      thread_vars_.erase(op->var.get());
      enclosing_x_ -= op->for_kind == ir::ForKind::ThreadX ? 1 : 0;
    }
    if (!divergent.empty()) {
      divergent_.pop_back();
    }
  }
  void visit(const ir::IfThenElse* op) override {
    const bool divergent = uses_any(op->condition, thread_vars_);
    if (divergent) {
      divergent_.push_back("the condition '" + ir::to_string(op->condition) +
                           "', which depends on threadIdx");
    }
    ir::IRVisitor::visit(op);
    if (divergent) {
      divergent_.pop_back();
    }
  }
  void visit(const ir::LetStmt* op) override {
    const bool derived = uses_any(op->value, thread_vars_);
    if (derived) {
      thread_vars_.insert(op->var.get());
    }
    ir::IRVisitor::visit(op);
    if (derived) {
      thread_vars_.erase(op->var.get());
    }
  }

 private:
  /// False for an ordinary thread loop; true for a valid cross-thread reduction; else throws.
  bool is_reduction(const ir::For* op) const {
    const int64_t* extent = ir::as_const_int(op->extent);
    if (extent != nullptr && *extent <= 1) {
      return false;  // one thread: nothing runs concurrently
    }
    LoopBody body(op);
    body.visit(op->body);
    const VarSet loop_var = {op->var.get()};
    const ir::Store* reduction = nullptr;
    const ir::Store* other = nullptr;
    bool invariant_condition = false;
    for (const InnerStore& s : body.stores) {
      if (body.private_buffers.count(s.store->buffer.get()) != 0) {
        continue;
      }
      if (uses_any(s.store->indices, loop_var)) {
        other = other != nullptr ? other : s.store;
        continue;
      }
      invariant_condition = invariant_condition || s.under_invariant_condition;
      if (reduction == nullptr) {
        reduction = s.store;
        continue;
      }
      if (!reduction->buffer.same_as(s.store->buffer) ||
          !same_indices(reduction->indices, s.store->indices)) {
        fail(op, "stores to '" + reduction->buffer.name() + "' and '" + s.store->buffer.name() +
                     "' at more than one index that does not depend on it; a cross-thread "
                     "reduction updates one element");
      }
    }
    if (reduction == nullptr) {
      return false;
    }
    const std::string target = "'" + reduction->buffer.name() + "'";
    if (op->for_kind != ir::ForKind::ThreadX) {
      fail(op, "stores to " + target + " at an index that does not depend on it; only a loop " +
                   "bound to threadIdx.x can reduce across threads");
    }
    if (other != nullptr) {
      fail(op, "reduces into " + target + " across threads but also stores to '" +
                   other->buffer.name() + "' at an index that depends on it");
    }
    if (uses_any(reduction->indices, body.inner)) {
      fail(op, "reduces into " + target + " at an index that changes inside it; move the " +
                   "stage's data-parallel loops outside it");
    }
    size_t updates = 0;
    for (const InnerStore& s : body.stores) {
      if (s.store->buffer.same_as(reduction->buffer) && !is_update(s.store)) {
        fail(op, "stores to " + target + " something other than an update " + target + " = " +
                     target + " op value (op: +, -, *, min, max)");
      }
      updates += s.store->buffer.same_as(reduction->buffer) ? 1 : 0;
    }
    if (count_loads(op->body, reduction->buffer) != updates) {
      fail(op, "reads " + target + " other than in its updates");
    }
    if (invariant_condition) {
      fail(op, "updates " + target + " under a condition that does not depend on the loops " +
                   "inside it");
    }
    if (body.nested_thread != nullptr) {
      fail(op, "reduces across threads around " + describe(body.nested_thread, origins_) +
                   ", bound to " + ir::for_kind_name(body.nested_thread->for_kind) +
                   "; bind the reduction to the innermost thread-bound loop");
    }
    if (enclosing_x_ > 0) {
      fail(op, "is bound to threadIdx.x inside another loop bound to threadIdx.x");
    }
    if (!divergent_.empty()) {
      fail(op, "reduces across threads inside " + divergent_.front() +
                   "; every thread of the block must reach a cross-thread reduction (its " +
                   "combine has barriers)");
    }
    return true;
  }

  [[noreturn]] void fail(const ir::For* op, const std::string& what) const {
    throw ScheduleError("bind: " + describe(op, origins_) + " (" + ir::for_kind_name(op->for_kind) +
                        ") " + what);
  }

  const LoopOrigins& origins_;
  std::map<ir::ForKind, int64_t> block_;
  VarSet thread_vars_;
  int enclosing_x_ = 0;
  std::vector<std::string> divergent_;
};

}  // namespace

void check_cross_thread_reductions(const ir::Stmt& kernel, const LoopOrigins& origins) {
  BlockShape shape;
  shape.visit(kernel);
  Walker walker(origins, std::move(shape.threads));
  walker.visit(kernel);
}

}  // namespace tensortune::lower

// SPDX-License-Identifier: Apache-2.0
// Cross-thread reductions (see the header): the analysis lowering and the CUDA generator share.
#include "tensortune/ir/cross_thread.h"

#include "tensortune/ir/ir_equal.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <array>
#include <set>

namespace tensortune::ir {
namespace {

using VarSet = std::set<const VarNode*>;

size_t thread_dimension(ForKind k) {
  return k == ForKind::ThreadY ? 1 : k == ForKind::ThreadZ ? 2 : 0;
}

bool uses_any(const Expr& e, const VarSet& vars) {
  bool found = false;
  post_order_visit(e, [&](const Expr& x) {
    const auto* v = x.as<VarNode>();
    found = found || (v != nullptr && vars.count(v) != 0);
  });
  return found;
}

bool uses_any(const std::vector<Expr>& exprs, const VarSet& vars) {
  return std::any_of(exprs.begin(), exprs.end(), [&](const Expr& e) { return uses_any(e, vars); });
}

/// How many loads of `buffer` `s` holds.
size_t count_loads(const Stmt& s, const Buffer& buffer) {
  size_t n = 0;
  post_order_visit(s, [&](const Expr& x) {
    const auto* load = x.as<Load>();
    n += load != nullptr && load->buffer.same_as(buffer) ? 1 : 0;
  });
  return n;
}

bool reads(const Expr& e, const Buffer& buffer) {
  bool found = false;
  post_order_visit(e, [&](const Expr& x) {
    const auto* load = x.as<Load>();
    found = found || (load != nullptr && load->buffer.same_as(buffer));
  });
  return found;
}

bool same_indices(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(),
                    [](const Expr& x, const Expr& y) { return structural_equal(x, y); });
}

/// A load of the element `store` writes.
bool loads_target(const Expr& e, const Store& store) {
  const auto* load = e.as<Load>();
  return load != nullptr && load->buffer.same_as(store.buffer) && !load->predicate.defined() &&
         same_indices(load->indices, store.indices);
}

/// A store inside a thread-bound loop, and whether some condition around it (inside the loop)
/// uses no variable defined inside the loop.
struct InnerStore {
  const Store* store = nullptr;
  bool under_invariant_condition = false;
};

/// What is inside one thread-bound loop: its stores, the buffers it allocates (private to a
/// thread), the variables it defines, the first loop inside it bound to threadIdx.
class LoopBody : public IRVisitor {
 public:
  explicit LoopBody(const For& loop) {
    inner.insert(loop.var.get());
    visit(loop.body);
  }
  using IRVisitor::visit;

  std::vector<InnerStore> stores;
  std::set<const BufferNode*> private_buffers;
  VarSet inner;
  const For* nested_thread = nullptr;

  /// The stores outside the loop's own allocations.
  std::vector<InnerStore> shared_stores() const {
    std::vector<InnerStore> out;
    for (const InnerStore& s : stores) {
      if (private_buffers.count(s.store->buffer.get()) == 0) {
        out.push_back(s);
      }
    }
    return out;
  }

 protected:
  void visit(const For* op) override {
    inner.insert(op->var.get());
    if (is_thread_kind(op->for_kind) && nested_thread == nullptr) {
      nested_thread = op;
    }
    IRVisitor::visit(op);
  }
  void visit(const LetStmt* op) override {
    inner.insert(op->var.get());
    IRVisitor::visit(op);
  }
  void visit(const Allocate* op) override {
    private_buffers.insert(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const IfThenElse* op) override {
    const int invariant = uses_any(op->condition, inner) ? 0 : 1;
    invariant_ += invariant;
    IRVisitor::visit(op);
    invariant_ -= invariant;
  }
  void visit(const Store* op) override {
    stores.push_back(InnerStore{op, invariant_ > 0});
    IRVisitor::visit(op);
  }

 private:
  int invariant_ = 0;
};

/// The largest extent bound to each thread index in a kernel: the launch's block.
class BlockShape : public IRVisitor {
 public:
  using IRVisitor::visit;
  std::array<int64_t, 3> block{{1, 1, 1}};

 protected:
  void visit(const For* op) override {
    const int64_t* extent = as_const_int(op->extent);
    if (extent != nullptr && is_thread_kind(op->for_kind)) {
      size_t d = thread_dimension(op->for_kind);
      block[d] = std::max(block[d], *extent);
    }
    IRVisitor::visit(op);
  }
};

/// Walks a kernel: the thread variables in scope and the enclosing places that not every thread
/// of the block reaches.
class Finder : public IRVisitor {
 public:
  Finder(const CrossThreadFailure& fail, std::array<int64_t, 3> block)
      : fail_(fail), block_(block) {}
  using IRVisitor::visit;

  std::vector<CrossThreadReduction> found;

 protected:
  void visit(const For* op) override {
    const bool thread = is_thread_kind(op->for_kind);
    if (thread) {
      std::optional<CrossThreadReduction> r = classify(*op);
      if (r.has_value()) {
        found.push_back(*r);
        return;  // nothing inside binds threads
      }
    }
    std::string divergent;
    const int64_t* extent = as_const_int(op->extent);
    if (thread && extent != nullptr && *extent < block_[thread_dimension(op->for_kind)]) {
      divergent = "loop '" + op->var.name() + "', bound to " + for_kind_name(op->for_kind) +
                  " with fewer iterations than the block has threads";
    } else if (uses_any(op->min, thread_vars_) || uses_any(op->extent, thread_vars_)) {
      divergent = "loop '" + op->var.name() + "', whose bounds depend on threadIdx";
    }
    push(divergent);
    if (thread) {
      thread_vars_.insert(op->var.get());
      enclosing_x_ += op->for_kind == ForKind::ThreadX ? 1 : 0;
    }
    IRVisitor::visit(op);
    if (thread) {
      thread_vars_.erase(op->var.get());
      enclosing_x_ -= op->for_kind == ForKind::ThreadX ? 1 : 0;
    }
    pop(divergent);
  }
  void visit(const IfThenElse* op) override {
    std::string divergent;
    if (uses_any(op->condition, thread_vars_)) {
      divergent = "the condition '" + to_string(op->condition) + "', which depends on threadIdx";
    }
    push(divergent);
    IRVisitor::visit(op);
    pop(divergent);
  }
  void visit(const LetStmt* op) override {
    const bool derived = uses_any(op->value, thread_vars_);
    if (derived) {
      thread_vars_.insert(op->var.get());
    }
    IRVisitor::visit(op);
    if (derived) {
      thread_vars_.erase(op->var.get());
    }
  }

 private:
  void push(const std::string& divergent) {
    if (!divergent.empty()) {
      divergent_.push_back(divergent);
    }
  }
  void pop(const std::string& divergent) {
    if (!divergent.empty()) {
      divergent_.pop_back();
    }
  }
  [[noreturn]] void fail(const For& op, const std::string& reason) const {
    fail_(op, reason);
    throw InternalError("find_cross_thread_reductions: the failure callback returned");
  }

  /// nullopt for an ordinary thread loop; the reduction it is; else fail().
  std::optional<CrossThreadReduction> classify(const For& op) const {
    const int64_t* extent = as_const_int(op.extent);
    if (extent == nullptr || *extent <= 1) {
      return std::nullopt;  // one thread (a non-constant extent is the binding check's error)
    }
    LoopBody body(op);
    const VarSet loop_var = {op.var.get()};
    const Store* update = nullptr;
    const Store* other = nullptr;
    bool invariant_condition = false;
    for (const InnerStore& s : body.shared_stores()) {
      if (uses_any(s.store->indices, loop_var)) {
        other = other != nullptr ? other : s.store;
        continue;
      }
      invariant_condition = invariant_condition || s.under_invariant_condition;
      if (update == nullptr) {
        update = s.store;
      } else if (!update->buffer.same_as(s.store->buffer) ||
                 !same_indices(update->indices, s.store->indices)) {
        fail(op, "updates '" + update->buffer.name() + "' and '" + s.store->buffer.name() +
                     "' at more than one index that does not depend on it; a cross-thread "
                     "reduction updates one element");
      }
    }
    if (update == nullptr) {
      return std::nullopt;
    }
    const std::string target = "'" + update->buffer.name() + "'";
    if (op.for_kind != ForKind::ThreadX) {
      fail(op, "stores to " + target + " at an index that does not depend on it; only a loop " +
                   "bound to threadIdx.x can reduce across threads");
    }
    if (other != nullptr) {
      fail(op, "reduces into " + target + " across threads but also stores to '" +
                   other->buffer.name() + "' at an index that depends on it");
    }
    if (uses_any(update->indices, body.inner)) {
      fail(op, "reduces into " + target + " at an index that changes inside it; move the " +
                   "stage's data-parallel loops outside it");
    }
    std::optional<ReduceKind> kind;
    size_t updates = 0;
    for (const InnerStore& s : body.stores) {
      if (!s.store->buffer.same_as(update->buffer)) {
        continue;
      }
      std::optional<ReduceKind> k = reduction_update_kind(*s.store);
      if (!k.has_value() || (kind.has_value() && *kind != *k)) {
        fail(op, "stores to " + target + " something other than one kind of update " + target +
                     " = " + target + " op value (op: +, -, *, min, max)");
      }
      kind = k;
      ++updates;
    }
    if (count_loads(op.body, update->buffer) != updates) {
      fail(op, "reads " + target + " other than in its updates");
    }
    if (invariant_condition) {
      fail(op, "updates " + target + " under a condition that does not depend on the loops " +
                   "inside it");
    }
    if (body.nested_thread != nullptr) {
      fail(op, "reduces across threads around loop '" + body.nested_thread->var.name() +
                   "', bound to " + for_kind_name(body.nested_thread->for_kind) +
                   "; bind the reduction to the innermost thread-bound loop");
    }
    if (enclosing_x_ > 0) {
      fail(op, "is bound to threadIdx.x inside another loop bound to threadIdx.x");
    }
    if (!divergent_.empty()) {
      fail(op, "is inside " + divergent_.front() +
                   "; not every thread of the block reaches it, but every thread of the block "
                   "must reach a cross-thread reduction (its combine has barriers)");
    }
    return CrossThreadReduction{&op, update, *kind};
  }

  const CrossThreadFailure& fail_;
  std::array<int64_t, 3> block_;
  VarSet thread_vars_;
  int enclosing_x_ = 0;
  std::vector<std::string> divergent_;
};

}  // namespace

std::optional<ReduceKind> reduction_update_kind(const Store& store) {
  auto match = [&](const Expr& a, const Expr& b, bool commutative, ReduceKind kind) {
    bool ok = (loads_target(a, store) && !reads(b, store.buffer)) ||
              (commutative && loads_target(b, store) && !reads(a, store.buffer));
    return ok ? std::optional<ReduceKind>(kind) : std::nullopt;
  };
  const Expr& v = store.value;
  if (v.type().is_vector() || store.predicate.defined()) {
    return std::nullopt;
  }
  switch (v.kind()) {
    case ExprKind::Add:
      return match(v.as<Add>()->a, v.as<Add>()->b, true, ReduceKind::Sum);
    case ExprKind::Sub:
      return match(v.as<Sub>()->a, v.as<Sub>()->b, false, ReduceKind::Sum);
    case ExprKind::Mul:
      return match(v.as<Mul>()->a, v.as<Mul>()->b, true, ReduceKind::Prod);
    case ExprKind::Min:
      return match(v.as<Min>()->a, v.as<Min>()->b, true, ReduceKind::Minimum);
    case ExprKind::Max:
      return match(v.as<Max>()->a, v.as<Max>()->b, true, ReduceKind::Maximum);
    default:
      return std::nullopt;
  }
}

std::vector<CrossThreadReduction> find_cross_thread_reductions(const Stmt& kernel,
                                                               const CrossThreadFailure& fail) {
  BlockShape shape;
  shape.visit(kernel);
  Finder finder(fail, shape.block);
  finder.visit(kernel);
  return std::move(finder.found);
}

std::optional<CrossThreadReduction> cross_thread_update(const For& loop) {
  const LoopBody body(loop);
  for (const InnerStore& s : body.shared_stores()) {
    if (std::optional<ReduceKind> kind = reduction_update_kind(*s.store)) {
      return CrossThreadReduction{&loop, s.store, *kind};
    }
  }
  return std::nullopt;
}

}  // namespace tensortune::ir

// SPDX-License-Identifier: Apache-2.0
// Which thread-bound loops reduce across the threads of a block (TVM's allreduce), and whether
// they can be combined (cuda_codegen_allreduce.cpp prints them): the loop updates one element,
// B[idx] = B[idx] op value with idx independent of the loop, is bound to threadIdx.x, and every
// thread of the block reaches it, since the combine has barriers and full-warp shuffles.
#include "codegen/cuda_codegen_internal.h"
#include "tensortune/ir/ir_equal.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <optional>

namespace tensortune::codegen::cuda {
namespace {

using VarSet = std::set<const ir::VarNode*>;

bool is_thread_kind(ir::ForKind k) {
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

/// A load of the element `st` stores to.
bool loads_target(const ir::Expr& e, const ir::Store* st) {
  const auto* load = e.as<ir::Load>();
  return load != nullptr && load->buffer.same_as(st->buffer) && !load->predicate.defined() &&
         ir::structural_equal(load->indices[0], st->indices[0]);
}

/// The reducer of `B[idx] = B[idx] op value` (op: +, -, *, min, max; B[idx] first for -), where
/// value does not read B; nullopt for any other store.
std::optional<ir::ReduceKind> update_kind(const ir::Store* st) {
  auto match = [&](const ir::Expr& a, const ir::Expr& b, bool commutative, ir::ReduceKind kind) {
    bool ok = (loads_target(a, st) && !reads(b, st->buffer)) ||
              (commutative && loads_target(b, st) && !reads(a, st->buffer));
    return ok ? std::optional<ir::ReduceKind>(kind) : std::nullopt;
  };
  const ir::Expr& v = st->value;
  if (v.type().is_vector() || st->predicate.defined()) {
    return std::nullopt;
  }
  switch (v.kind()) {
    case ir::ExprKind::Add:
      return match(v.as<ir::Add>()->a, v.as<ir::Add>()->b, true, ir::ReduceKind::Sum);
    case ir::ExprKind::Sub:
      return match(v.as<ir::Sub>()->a, v.as<ir::Sub>()->b, false, ir::ReduceKind::Sum);
    case ir::ExprKind::Mul:
      return match(v.as<ir::Mul>()->a, v.as<ir::Mul>()->b, true, ir::ReduceKind::Prod);
    case ir::ExprKind::Min:
      return match(v.as<ir::Min>()->a, v.as<ir::Min>()->b, true, ir::ReduceKind::Minimum);
    case ir::ExprKind::Max:
      return match(v.as<ir::Max>()->a, v.as<ir::Max>()->b, true, ir::ReduceKind::Maximum);
    default:
      return std::nullopt;
  }
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
    if (is_thread_kind(op->for_kind) && nested_thread == nullptr) {
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

/// Finds the cross-thread reductions of a kernel and checks that the printer can combine them.
class Planner : public ir::IRVisitor {
 public:
  Planner(std::string kernel, const std::array<int64_t, 3>& block)
      : kernel_(std::move(kernel)), block_(block) {}
  using ir::IRVisitor::visit;

  std::set<const ir::VarNode*> found;

 protected:
  void visit(const ir::For* op) override {
    const bool thread = is_thread_kind(op->for_kind);
    if (thread) {
      if (is_reduction(op)) {
        found.insert(op->var.get());
        return;
      }
    }
    std::string divergent;
    const int64_t* extent = ir::as_const_int(op->extent);
    if (thread && extent != nullptr && *extent < block_[dimension(op->for_kind)]) {
      divergent = "loop '" + op->var.name() + "', bound to " + ir::for_kind_name(op->for_kind) +
                  " with fewer iterations than threads";
    } else if (uses_any(op->min, thread_vars_) || uses_any(op->extent, thread_vars_)) {
      divergent = "loop '" + op->var.name() + "', whose bounds depend on threadIdx";
    }
    push(divergent);
    if (thread) {
      thread_vars_.insert(op->var.get());
      enclosing_x_ += op->for_kind == ir::ForKind::ThreadX ? 1 : 0;
    }
    ir::IRVisitor::visit(op);
    if (thread) {
      thread_vars_.erase(op->var.get());
      enclosing_x_ -= op->for_kind == ir::ForKind::ThreadX ? 1 : 0;
    }
    pop(divergent);
  }
  void visit(const ir::IfThenElse* op) override {
    std::string divergent;
    if (uses_any(op->condition, thread_vars_)) {
      divergent = "the condition '" + ir::to_string(op->condition) + "'";
    }
    push(divergent);
    ir::IRVisitor::visit(op);
    pop(divergent);
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
  static size_t dimension(ir::ForKind k) {
    return k == ir::ForKind::ThreadY ? 1 : k == ir::ForKind::ThreadZ ? 2 : 0;
  }
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

  /// False for an ordinary thread loop; true for a cross-thread reduction; else throws.
  bool is_reduction(const ir::For* op) const {
    const int64_t* extent = ir::as_const_int(op->extent);
    if (extent == nullptr || *extent <= 1) {
      return false;  // one thread (a non-constant extent is LaunchShape's error)
    }
    LoopBody body(op);
    body.visit(op->body);
    const VarSet loop_var = {op->var.get()};
    const ir::Store* update = nullptr;
    const ir::Store* other = nullptr;
    bool invariant_condition = false;
    for (const InnerStore& s : body.stores) {
      const ir::Store* st = s.store;
      TT_CHECK(st->indices.size() == 1)
          << "cuda codegen: store to '" << st->buffer.name() << "' is not flattened";
      if (body.private_buffers.count(st->buffer.get()) != 0) {
        continue;
      }
      if (uses_any(st->indices[0], loop_var)) {
        other = other != nullptr ? other : st;
        continue;
      }
      invariant_condition = invariant_condition || s.under_invariant_condition;
      if (update == nullptr) {
        update = st;
      } else if (!update->buffer.same_as(st->buffer) ||
                 !ir::structural_equal(update->indices[0], st->indices[0])) {
        fail(op, "updates '" + update->buffer.name() + "' and '" + st->buffer.name() +
                     "' at more than one index that does not depend on it");
      }
    }
    if (update == nullptr) {
      return false;
    }
    const std::string target = "'" + update->buffer.name() + "'";
    if (op->for_kind != ir::ForKind::ThreadX) {
      fail(op, "stores to " + target + " at an index that does not depend on it; only " +
                   "threadIdx.x can reduce across threads");
    }
    if (other != nullptr) {
      fail(op, "reduces into " + target + " but also stores to '" + other->buffer.name() +
                   "' at an index that depends on it");
    }
    if (uses_any(update->indices[0], body.inner)) {
      fail(op, "reduces into " + target + " at an index that changes inside it");
    }
    std::optional<ir::ReduceKind> kind;
    size_t updates = 0;
    for (const InnerStore& s : body.stores) {
      if (!s.store->buffer.same_as(update->buffer)) {
        continue;
      }
      std::optional<ir::ReduceKind> k = update_kind(s.store);
      if (!k.has_value() || (kind.has_value() && *kind != *k)) {
        fail(op, "stores to " + target + " something other than one kind of update " + target +
                     " = " + target + " op value (op: +, -, *, min, max)");
      }
      kind = k;
      ++updates;
    }
    if (count_loads(op->body, update->buffer) != updates) {
      fail(op, "reads " + target + " other than in its updates");
    }
    if (invariant_condition) {
      fail(op, "updates " + target +
                   " under a condition that does not depend on the loops "
                   "inside it");
    }
    if (body.nested_thread != nullptr) {
      fail(op, "holds loop '" + body.nested_thread->var.name() + "' bound to " +
                   ir::for_kind_name(body.nested_thread->for_kind));
    }
    if (enclosing_x_ > 0) {
      fail(op, "is inside another loop bound to threadIdx.x");
    }
    if (!divergent_.empty()) {
      fail(op, "is inside " + divergent_.front() +
                   ", which not every thread of the block reaches; the combine needs all of them");
    }
    return true;
  }

  [[noreturn]] void fail(const ir::For* op, const std::string& what) const {
    throw UserError("cuda codegen: cross-thread reduction over loop '" + op->var.name() +
                    "' of kernel '" + kernel_ + "': the loop " + what);
  }

  std::string kernel_;
  std::array<int64_t, 3> block_;
  VarSet thread_vars_;
  int enclosing_x_ = 0;
  std::vector<std::string> divergent_;
};

}  // namespace

std::set<const ir::VarNode*> plan_cross_thread_reductions(const ir::Stmt& kernel,
                                                          const std::string& kernel_name,
                                                          const std::array<int64_t, 3>& block) {
  Planner planner(kernel_name, block);
  planner.visit(kernel);
  return std::move(planner.found);
}

// After shrink_local_buffers: the loop's stores outside the buffers it allocates all update the
// same element (a local buffer's thread-private slice may have had its thread part removed).
CrossThreadReduction cross_thread_update(const ir::For* op) {
  LoopBody body(op);
  body.visit(op->body);
  for (const InnerStore& s : body.stores) {
    if (body.private_buffers.count(s.store->buffer.get()) == 0) {
      std::optional<ir::ReduceKind> kind = update_kind(s.store);
      TT_CHECK(kind.has_value()) << "cuda codegen: cross-thread reduction over loop '"
                                 << op->var.name() << "' lost its update";
      return CrossThreadReduction{s.store->buffer, s.store->indices[0], *kind};
    }
  }
  TT_CHECK(false) << "cuda codegen: cross-thread reduction over loop '" << op->var.name()
                  << "' has no update";
  return {};
}

}  // namespace tensortune::codegen::cuda

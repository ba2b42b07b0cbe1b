// SPDX-License-Identifier: Apache-2.0
// Structural equality and hashing. Variables and buffers bound inside the compared trees (For and
// LetStmt variables, Reduce axes, Allocate buffers) are matched by binding position; free ones by
// identity. Float constants compare by bit pattern so that equality and hashing agree on NaN.
#include "tensortune/ir/ir_equal.h"

#include "tensortune/support/hash.h"

#include <cstring>
#include <unordered_map>

namespace tensortune::ir {
namespace {

uint64_t float_bits(double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

/// A partial bijection between the bound entities of two trees, restored on scope exit.
template <class Node>
class Binding {
 public:
  bool equal(const Node* x, const Node* y) const {
    auto it = a2b_.find(x);
    if (it != a2b_.end()) {
      return it->second == y;
    }
    return b2a_.count(y) == 0 && x == y;
  }
  /// Binds x <-> y; returns the previous partners to restore.
  std::pair<const Node*, const Node*> bind(const Node* x, const Node* y) {
    std::pair<const Node*, const Node*> old{lookup(a2b_, x), lookup(b2a_, y)};
    a2b_[x] = y;
    b2a_[y] = x;
    return old;
  }
  void unbind(const Node* x, const Node* y, std::pair<const Node*, const Node*> old) {
    restore(a2b_, x, old.first);
    restore(b2a_, y, old.second);
  }
  bool empty() const { return a2b_.empty(); }

 private:
  using Map = std::unordered_map<const Node*, const Node*>;
  static const Node* lookup(const Map& m, const Node* k) {
    auto it = m.find(k);
    return it == m.end() ? nullptr : it->second;
  }
  static void restore(Map& m, const Node* k, const Node* old) {
    if (old == nullptr) {
      m.erase(k);
    } else {
      m[k] = old;
    }
  }
  Map a2b_, b2a_;
};

class Equal {
 public:
  bool eq(const Expr& a, const Expr& b);
  bool eq(const Stmt& a, const Stmt& b);

 private:
  template <class T>
  bool binary(const Expr& a, const Expr& b) {
    const T* x = a.as<T>();
    const T* y = b.as<T>();
    return eq(x->a, y->a) && eq(x->b, y->b);
  }
  bool eq(const std::vector<Expr>& a, const std::vector<Expr>& b);
  static bool buffer_shape_eq(const Buffer& a, const Buffer& b) {
    return a.dtype() == b.dtype() && a.shape() == b.shape() && a.scope() == b.scope();
  }
  bool buffer_eq(const Buffer& a, const Buffer& b) const { return bufs_.equal(a.get(), b.get()); }
  bool reduce_eq(const Reduce* x, const Reduce* y);
  bool expr_node_eq(const Expr& a, const Expr& b);
  bool stmt_node_eq(const Stmt& a, const Stmt& b);

  Binding<VarNode> vars_;
  Binding<BufferNode> bufs_;
};

bool Equal::eq(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (!eq(a[i], b[i])) {
      return false;
    }
  }
  return true;
}

bool Equal::eq(const Expr& a, const Expr& b) {
  // A shared subtree is equal to itself only while no bound variable could mean different things.
  if (a.same_as(b) && vars_.empty() && bufs_.empty()) {
    return true;
  }
  if (!a.defined() || !b.defined()) {
    return a.defined() == b.defined();
  }
  if (a.kind() != b.kind() || a.type() != b.type()) {
    return false;
  }
  return expr_node_eq(a, b);
}

bool Equal::reduce_eq(const Reduce* x, const Reduce* y) {
  if (x->reducer != y->reducer || x->axes.size() != y->axes.size()) {
    return false;
  }
  for (size_t i = 0; i < x->axes.size(); ++i) {
    const IterVar& p = x->axes[i];
    const IterVar& q = y->axes[i];
    if (p.extent != q.extent || p.kind != q.kind || p.var.type() != q.var.type()) {
      return false;
    }
  }
  std::vector<std::pair<const VarNode*, const VarNode*>> saved;
  for (size_t i = 0; i < x->axes.size(); ++i) {
    saved.push_back(vars_.bind(x->axes[i].var.get(), y->axes[i].var.get()));
  }
  bool result = eq(x->source, y->source);
  for (size_t i = x->axes.size(); i-- > 0;) {
    vars_.unbind(x->axes[i].var.get(), y->axes[i].var.get(), saved[i]);
  }
  return result;
}

bool Equal::expr_node_eq(const Expr& a, const Expr& b) {
  switch (a.kind()) {
    case ExprKind::IntImm:
      return a.as<IntImm>()->value == b.as<IntImm>()->value;
    case ExprKind::FloatImm:
      return float_bits(a.as<FloatImm>()->value) == float_bits(b.as<FloatImm>()->value);
    case ExprKind::Var:
      return vars_.equal(a.as<VarNode>(), b.as<VarNode>());
    case ExprKind::Add:
      return binary<Add>(a, b);
    case ExprKind::Sub:
      return binary<Sub>(a, b);
    case ExprKind::Mul:
      return binary<Mul>(a, b);
    case ExprKind::Div:
      return binary<Div>(a, b);
    case ExprKind::Mod:
      return binary<Mod>(a, b);
    case ExprKind::Min:
      return binary<Min>(a, b);
    case ExprKind::Max:
      return binary<Max>(a, b);
    case ExprKind::Eq:
      return binary<Eq>(a, b);
    case ExprKind::Ne:
      return binary<Ne>(a, b);
    case ExprKind::Lt:
      return binary<Lt>(a, b);
    case ExprKind::Le:
      return binary<Le>(a, b);
    case ExprKind::Gt:
      return binary<Gt>(a, b);
    case ExprKind::Ge:
      return binary<Ge>(a, b);
    case ExprKind::And:
      return binary<And>(a, b);
    case ExprKind::Or:
      return binary<Or>(a, b);
    case ExprKind::Not:
      return eq(a.as<Not>()->a, b.as<Not>()->a);
    case ExprKind::Select: {
      const auto* x = a.as<Select>();
      const auto* y = b.as<Select>();
      return eq(x->condition, y->condition) && eq(x->true_value, y->true_value) &&
             eq(x->false_value, y->false_value);
    }
    case ExprKind::Cast:
      return eq(a.as<Cast>()->value, b.as<Cast>()->value);
    case ExprKind::Load: {
      const auto* x = a.as<Load>();
      const auto* y = b.as<Load>();
      return buffer_eq(x->buffer, y->buffer) && eq(x->indices, y->indices) &&
             eq(x->predicate, y->predicate);
    }
    case ExprKind::Ramp: {
      const auto* x = a.as<Ramp>();
      const auto* y = b.as<Ramp>();
      return x->lanes == y->lanes && eq(x->base, y->base) && eq(x->stride, y->stride);
    }
    case ExprKind::Broadcast:
      return a.as<Broadcast>()->lanes == b.as<Broadcast>()->lanes &&
             eq(a.as<Broadcast>()->value, b.as<Broadcast>()->value);
    case ExprKind::Call:
      return a.as<Call>()->op == b.as<Call>()->op && eq(a.as<Call>()->args, b.as<Call>()->args);
    case ExprKind::Reduce:
      return reduce_eq(a.as<Reduce>(), b.as<Reduce>());
  }
  return false;
}

bool Equal::eq(const Stmt& a, const Stmt& b) {
  if (a.same_as(b) && vars_.empty() && bufs_.empty()) {
    return true;
  }
  if (!a.defined() || !b.defined()) {
    return a.defined() == b.defined();
  }
  if (a.kind() != b.kind()) {
    return false;
  }
  return stmt_node_eq(a, b);
}

bool Equal::stmt_node_eq(const Stmt& a, const Stmt& b) {
  switch (a.kind()) {
    case StmtKind::For: {
      const auto* x = a.as<For>();
      const auto* y = b.as<For>();
      if (x->for_kind != y->for_kind || x->auto_unroll_max_step != y->auto_unroll_max_step ||
          x->var.type() != y->var.type() || !eq(x->min, y->min) || !eq(x->extent, y->extent)) {
        return false;
      }
      auto saved = vars_.bind(x->var.get(), y->var.get());
      bool result = eq(x->body, y->body);
      vars_.unbind(x->var.get(), y->var.get(), saved);
      return result;
    }
    case StmtKind::Store: {
      const auto* x = a.as<Store>();
      const auto* y = b.as<Store>();
      return buffer_eq(x->buffer, y->buffer) && eq(x->value, y->value) &&
             eq(x->indices, y->indices) && eq(x->predicate, y->predicate);
    }
    case StmtKind::Allocate: {
      const auto* x = a.as<Allocate>();
      const auto* y = b.as<Allocate>();
      if (!buffer_shape_eq(x->buffer, y->buffer)) {
        return false;
      }
      auto saved = bufs_.bind(x->buffer.get(), y->buffer.get());
      bool result = eq(x->body, y->body);
      bufs_.unbind(x->buffer.get(), y->buffer.get(), saved);
      return result;
    }
    case StmtKind::IfThenElse: {
      const auto* x = a.as<IfThenElse>();
      const auto* y = b.as<IfThenElse>();
      return eq(x->condition, y->condition) && eq(x->then_case, y->then_case) &&
             eq(x->else_case, y->else_case);
    }
    case StmtKind::Seq: {
      const auto& x = a.as<Seq>()->stmts;
      const auto& y = b.as<Seq>()->stmts;
      if (x.size() != y.size()) {
        return false;
      }
      for (size_t i = 0; i < x.size(); ++i) {
        if (!eq(x[i], y[i])) {
          return false;
        }
      }
      return true;
    }
    case StmtKind::Evaluate:
      return eq(a.as<Evaluate>()->value, b.as<Evaluate>()->value);
    case StmtKind::LetStmt: {
      const auto* x = a.as<LetStmt>();
      const auto* y = b.as<LetStmt>();
      if (x->var.type() != y->var.type() || !eq(x->value, y->value)) {
        return false;
      }
      auto saved = vars_.bind(x->var.get(), y->var.get());
      bool result = eq(x->body, y->body);
      vars_.unbind(x->var.get(), y->var.get(), saved);
      return result;
    }
  }
  return false;
}

}  // namespace

bool structural_equal(const Expr& a, const Expr& b) {
  return Equal().eq(a, b);
}

bool structural_equal(const Stmt& a, const Stmt& b) {
  return Equal().eq(a, b);
}

}  // namespace tensortune::ir

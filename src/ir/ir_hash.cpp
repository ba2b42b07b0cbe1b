// SPDX-License-Identifier: Apache-2.0
// structural_hash: the hash that agrees with structural_equal (ir_equal.cpp). Bound variables and
// allocated buffers hash by the order in which they are bound, free ones by identity.
#include "tensortune/ir/ir_equal.h"
#include "tensortune/support/hash.h"

#include <cstring>
#include <unordered_map>

namespace tensortune::ir {
namespace {

using support::hash_combine;

constexpr uint64_t kFreeTag = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t kBoundTag = 0xc2b2ae3d27d4eb4fULL;

uint64_t type_hash(DataType t) {
  return (static_cast<uint64_t>(t.code()) << 32) | (static_cast<uint64_t>(t.bits()) << 16) |
         static_cast<uint64_t>(t.lanes());
}

class Hasher {
 public:
  uint64_t hash(const Expr& e);
  uint64_t hash(const Stmt& s);

 private:
  uint64_t entity(const void* node) const {
    auto it = bound_.find(node);
    if (it != bound_.end()) {
      return hash_combine(kBoundTag, it->second);
    }
    return hash_combine(kFreeTag, reinterpret_cast<uintptr_t>(node));
  }
  /// Binds `node` to the next position; returns the previous binding to restore.
  std::pair<bool, uint64_t> bind(const void* node) {
    auto it = bound_.find(node);
    std::pair<bool, uint64_t> old{it != bound_.end(), it != bound_.end() ? it->second : 0};
    bound_[node] = next_++;
    return old;
  }
  void unbind(const void* node, std::pair<bool, uint64_t> old) {
    if (old.first) {
      bound_[node] = old.second;
    } else {
      bound_.erase(node);
    }
  }
  template <class T>
  uint64_t binary(uint64_t seed, const Expr& e) {
    return hash_combine(hash_combine(seed, hash(e.as<T>()->a)), hash(e.as<T>()->b));
  }
  uint64_t hash_all(uint64_t seed, const std::vector<Expr>& v) {
    for (const Expr& x : v) {
      seed = hash_combine(seed, hash(x));
    }
    return seed;
  }
  static uint64_t buffer_shape(const Buffer& b) {
    uint64_t h = hash_combine(type_hash(b.dtype()), static_cast<uint64_t>(b.scope()));
    for (int64_t d : b.shape()) {
      h = hash_combine(h, static_cast<uint64_t>(d));
    }
    return h;
  }
  uint64_t reduce(uint64_t seed, const Reduce* op);
  uint64_t expr_node(uint64_t seed, const Expr& e);
  uint64_t stmt_node(uint64_t seed, const Stmt& s);

  std::unordered_map<const void*, uint64_t> bound_;
  uint64_t next_ = 0;
};

uint64_t Hasher::hash(const Expr& e) {
  if (!e.defined()) {
    return 0;
  }
  uint64_t seed = hash_combine(static_cast<uint64_t>(e.kind()) + 1, type_hash(e.type()));
  return expr_node(seed, e);
}

uint64_t Hasher::reduce(uint64_t seed, const Reduce* op) {
  seed = hash_combine(seed, static_cast<uint64_t>(op->reducer));
  std::vector<std::pair<bool, uint64_t>> saved;
  for (const IterVar& iv : op->axes) {
    seed = hash_combine(seed, static_cast<uint64_t>(iv.extent));
    seed = hash_combine(seed, static_cast<uint64_t>(iv.kind));
    saved.push_back(bind(iv.var.get()));
  }
  seed = hash_combine(seed, hash(op->source));
  for (size_t i = op->axes.size(); i-- > 0;) {
    unbind(op->axes[i].var.get(), saved[i]);
  }
  return seed;
}

uint64_t Hasher::expr_node(uint64_t seed, const Expr& e) {
  switch (e.kind()) {
    case ExprKind::IntImm:
      return hash_combine(seed, static_cast<uint64_t>(e.as<IntImm>()->value));
    case ExprKind::FloatImm: {
      uint64_t bits = 0;
      std::memcpy(&bits, &e.as<FloatImm>()->value, sizeof(bits));
      return hash_combine(seed, bits);
    }
    case ExprKind::Var:
      return hash_combine(seed, entity(e.get()));
    case ExprKind::Add:
      return binary<Add>(seed, e);
    case ExprKind::Sub:
      return binary<Sub>(seed, e);
    case ExprKind::Mul:
      return binary<Mul>(seed, e);
    case ExprKind::Div:
      return binary<Div>(seed, e);
    case ExprKind::Mod:
      return binary<Mod>(seed, e);
    case ExprKind::Min:
      return binary<Min>(seed, e);
    case ExprKind::Max:
      return binary<Max>(seed, e);
    case ExprKind::Eq:
      return binary<Eq>(seed, e);
    case ExprKind::Ne:
      return binary<Ne>(seed, e);
    case ExprKind::Lt:
      return binary<Lt>(seed, e);
    case ExprKind::Le:
      return binary<Le>(seed, e);
    case ExprKind::Gt:
      return binary<Gt>(seed, e);
    case ExprKind::Ge:
      return binary<Ge>(seed, e);
    case ExprKind::And:
      return binary<And>(seed, e);
    case ExprKind::Or:
      return binary<Or>(seed, e);
    case ExprKind::Not:
      return hash_combine(seed, hash(e.as<Not>()->a));
    case ExprKind::Select: {
      const auto* op = e.as<Select>();
      return hash_all(seed, {op->condition, op->true_value, op->false_value});
    }
    case ExprKind::Cast:
      return hash_combine(seed, hash(e.as<Cast>()->value));
    case ExprKind::Load: {
      const auto* op = e.as<Load>();
      seed = hash_combine(seed, entity(op->buffer.get()));
      return hash_combine(hash_all(seed, op->indices), hash(op->predicate));
    }
    case ExprKind::Ramp: {
      const auto* op = e.as<Ramp>();
      return hash_all(hash_combine(seed, static_cast<uint64_t>(op->lanes)), {op->base, op->stride});
    }
    case ExprKind::Broadcast: {
      const auto* op = e.as<Broadcast>();
      return hash_combine(hash_combine(seed, static_cast<uint64_t>(op->lanes)), hash(op->value));
    }
    case ExprKind::Call: {
      const auto* op = e.as<Call>();
      return hash_all(hash_combine(seed, static_cast<uint64_t>(op->op)), op->args);
    }
    case ExprKind::Reduce:
      return reduce(seed, e.as<Reduce>());
  }
  return seed;
}

uint64_t Hasher::hash(const Stmt& s) {
  if (!s.defined()) {
    return 0;
  }
  return stmt_node(static_cast<uint64_t>(s.kind()) + 101, s);
}

uint64_t Hasher::stmt_node(uint64_t seed, const Stmt& s) {
  switch (s.kind()) {
    case StmtKind::For: {
      const auto* op = s.as<For>();
      seed = hash_all(seed, {op->min, op->extent});
      seed = hash_combine(seed, static_cast<uint64_t>(op->for_kind));
      seed = hash_combine(seed, static_cast<uint64_t>(op->auto_unroll_max_step));
      seed = hash_combine(seed, type_hash(op->var.type()));
      auto saved = bind(op->var.get());
      seed = hash_combine(seed, hash(op->body));
      unbind(op->var.get(), saved);
      return seed;
    }
    case StmtKind::Store: {
      const auto* op = s.as<Store>();
      seed = hash_combine(seed, entity(op->buffer.get()));
      seed = hash_all(seed, op->indices);
      return hash_all(seed, {op->value, op->predicate});
    }
    case StmtKind::Allocate: {
      const auto* op = s.as<Allocate>();
      seed = hash_combine(seed, buffer_shape(op->buffer));
      auto saved = bind(op->buffer.get());
      seed = hash_combine(seed, hash(op->body));
      unbind(op->buffer.get(), saved);
      return seed;
    }
    case StmtKind::IfThenElse: {
      const auto* op = s.as<IfThenElse>();
      seed = hash_combine(seed, hash(op->condition));
      return hash_combine(hash_combine(seed, hash(op->then_case)), hash(op->else_case));
    }
    case StmtKind::Seq:
      for (const Stmt& child : s.as<Seq>()->stmts) {
        seed = hash_combine(seed, hash(child));
      }
      return seed;
    case StmtKind::Evaluate:
      return hash_combine(seed, hash(s.as<Evaluate>()->value));
    case StmtKind::LetStmt: {
      const auto* op = s.as<LetStmt>();
      seed = hash_combine(hash_combine(seed, hash(op->value)), type_hash(op->var.type()));
      auto saved = bind(op->var.get());
      seed = hash_combine(seed, hash(op->body));
      unbind(op->var.get(), saved);
      return seed;
    }
  }
  return seed;
}

}  // namespace

uint64_t structural_hash(const Expr& e) {
  return Hasher().hash(e);
}

uint64_t structural_hash(const Stmt& s) {
  return Hasher().hash(s);
}

}  // namespace tensortune::ir

// SPDX-License-Identifier: Apache-2.0
#include "freshen.h"

#include <unordered_map>
#include <utility>

namespace tensortune::lower {
namespace {

class Freshen : public ir::IRMutator {
 public:
  explicit Freshen(ir::VarMap seed) : vars_(std::move(seed)) {}

 protected:
  using ir::IRMutator::visit;

  ir::Expr visit(const ir::VarNode* op, const ir::Expr& e) override {
    auto it = vars_.find(op);
    return it == vars_.end() ? e : it->second;
  }
  ir::Expr visit(const ir::Load* op, const ir::Expr& e) override {
    const ir::Expr mutated = ir::IRMutator::visit(op, e);
    const auto* load = mutated.as<ir::Load>();
    return ir::Load::make(buffer(load->buffer), load->indices, load->predicate);
  }
  ir::Stmt visit(const ir::Store* op, const ir::Stmt& s) override {
    const ir::Stmt mutated = ir::IRMutator::visit(op, s);
    const auto* store = mutated.as<ir::Store>();
    return ir::Store::make(buffer(store->buffer), store->value, store->indices, store->predicate);
  }
  ir::Stmt visit(const ir::For* op, const ir::Stmt&) override {
    ir::Expr min = mutate(op->min);
    ir::Expr extent = mutate(op->extent);
    ir::Var var(op->var.name(), op->var.type());
    vars_[op->var.get()] = var;
    return ir::For::make(var, min, extent, op->for_kind, mutate(op->body),
                         op->auto_unroll_max_step);
  }
  ir::Stmt visit(const ir::LetStmt* op, const ir::Stmt&) override {
    ir::Expr value = mutate(op->value);
    ir::Var var(op->var.name(), op->var.type());
    vars_[op->var.get()] = var;
    return ir::LetStmt::make(var, value, mutate(op->body));
  }
  ir::Stmt visit(const ir::Allocate* op, const ir::Stmt&) override {
    const ir::Buffer& b = op->buffer;
    ir::Buffer copy(b.name(), b.dtype(), b.shape(), b.scope(), b.pipeline_stages());
    buffers_[b.get()] = copy;
    return ir::Allocate::make(copy, mutate(op->body));
  }

 private:
  ir::Buffer buffer(const ir::Buffer& b) const {
    auto it = buffers_.find(b.get());
    return it == buffers_.end() ? b : it->second;
  }

  ir::VarMap vars_;
  std::unordered_map<const ir::BufferNode*, ir::Buffer> buffers_;
};

}  // namespace

ir::Stmt freshen(const ir::Stmt& s, ir::VarMap seed) {
  Freshen f(std::move(seed));
  return f.mutate(s);
}

}  // namespace tensortune::lower

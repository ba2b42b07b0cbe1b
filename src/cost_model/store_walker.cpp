// SPDX-License-Identifier: Apache-2.0
// The store walker: a visitor that keeps the stacks of loops, allocations and guards and records a
// StoreSite at each store. Expressions are not visited here (store_features.cpp does that).
#include "store_walker.h"

#include "tensortune/ir/ir_visitor.h"

#include <algorithm>

namespace tensortune::cost_model {
namespace {

class StoreWalker final : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  FunctionScan scan;

 protected:
  void visit(const ir::For* op) override {
    LoopInfo loop;
    loop.var = op->var.get();
    loop.extent = std::max<int64_t>(0, eval_index(op->extent, env_));
    loop.kind = op->for_kind;
    loop.auto_unroll_max_step = op->auto_unroll_max_step;
    int64_t base = eval_index(op->min, env_) + (loop.extent > 0 ? (loop.extent - 1) / 2 : 0);
    ++scan.num_loops;
    if (op->for_kind == ir::ForKind::Parallel) {
      ++scan.num_parallel_loops;
    }
    loops_.push_back(loop);
    scan.max_depth = std::max<int64_t>(scan.max_depth, static_cast<int64_t>(loops_.size()));
    env_.values[loop.var] = base;
    visit(op->body);
    env_.values.erase(loop.var);
    loops_.pop_back();
  }

  void visit(const ir::Store* op) override {
    StoreSite site;
    site.store = op;
    site.loops = loops_;
    site.allocs = allocs_;
    site.guards = guards_;
    site.env = env_;
    scan.stores.push_back(std::move(site));
  }

  void visit(const ir::Allocate* op) override {
    const ir::Buffer& b = op->buffer;
    scan.alloc_bytes += static_cast<double>(b.num_elements()) * b.dtype().bytes();
    allocs_.push_back(AllocInfo{b, loops_.size()});
    visit(op->body);
    allocs_.pop_back();
  }

  void visit(const ir::IfThenElse* op) override {
    ++guards_;
    visit(op->then_case);
    visit(op->else_case);
    --guards_;
  }

  void visit(const ir::LetStmt* op) override {
    env_.lets[op->var.get()] = op->value;
    visit(op->body);
    env_.lets.erase(op->var.get());
  }

  void visit(const ir::Evaluate* /*op*/) override {}

 private:
  std::vector<LoopInfo> loops_;
  std::vector<AllocInfo> allocs_;
  int guards_ = 0;
  EvalEnv env_;
};

}  // namespace

FunctionScan scan_function(const ir::Stmt& body) {
  StoreWalker walker;
  walker.visit(body);
  return std::move(walker.scan);
}

}  // namespace tensortune::cost_model

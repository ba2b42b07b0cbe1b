// SPDX-License-Identifier: Apache-2.0
// Where __syncthreads() goes. Outside the thread-bound loops all threads of a block run the same
// statements, so a barrier there is legal; each thread-bound nest (and each store) is one unit.
// A unit needs a barrier before it when it reads a shared buffer written, or writes one read or
// written, by an earlier unit since the last barrier. Serial loops are iterated to a fixed point,
// which adds the barrier that keeps the next iteration's fetch from overwriting data in use.
// A loop whose iterations write provably disjoint parts of a shared buffer it does not read (the
// serial outer loop of a cooperative fetch) carries no write-after-write conflict on it from one
// iteration to the next, so such a fetch gets one barrier before it, not one per iteration.
#include "codegen/cuda/internal.h"
#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/ir/simplify.h"
#include "tensortune/support/error.h"

#include <map>

namespace tensortune::codegen::cuda {
namespace {

/// Shared buffers read and written since the last barrier (or by one unit).
struct Access {
  std::set<const ir::BufferNode*> reads, writes;

  bool empty() const { return reads.empty() && writes.empty(); }
  bool operator==(const Access& o) const { return reads == o.reads && writes == o.writes; }
  void merge(const Access& o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
  }
};

bool intersects(const std::set<const ir::BufferNode*>& a,
                const std::set<const ir::BufferNode*>& b) {
  for (const ir::BufferNode* x : a) {
    if (b.count(x) != 0) {
      return true;
    }
  }
  return false;
}

/// True when `next` can race with what happened since the last barrier.
bool conflicts(const Access& since_barrier, const Access& next) {
  return intersects(next.reads, since_barrier.writes) ||
         intersects(next.writes, since_barrier.writes) ||
         intersects(next.writes, since_barrier.reads);
}

class SharedAccess : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  Access access;

 protected:
  void visit(const ir::Load* op) override {
    if (op->buffer.scope() == ir::MemoryScope::Shared) {
      access.reads.insert(op->buffer.get());
    }
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    if (op->buffer.scope() == ir::MemoryScope::Shared) {
      access.writes.insert(op->buffer.get());
    }
    ir::IRVisitor::visit(op);
  }
};

/// True for a nest every thread runs alike with no thread sharing data inside it: no loop bound
/// to threadIdx, and shared memory read only inside stores to shared or global memory, which one
/// thread alone executes (the single-writer guard). Such a nest is one unit, not one per store.
class SingleThreadNest : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  bool ok = true;

 protected:
  void visit(const ir::For* op) override {
    ok = ok && !ir::is_thread_kind(op->for_kind);
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    if (op->buffer.scope() == ir::MemoryScope::Local) {
      ir::IRVisitor::visit(op);
    }
  }
  void visit(const ir::Load* op) override {
    ok = ok && op->buffer.scope() != ir::MemoryScope::Shared;
    ir::IRVisitor::visit(op);
  }
};

/// The shared buffers that the iterations of `loop` write at disjoint elements and never read in
/// it: each is written by one store whose index moves by a constant c per iteration while
/// everything inside one iteration (inner loops, thread indices, vector lanes) spans less than |c|.
class DisjointWrites : public ir::IRVisitor {
 public:
  explicit DisjointWrites(const ir::For* loop) : loop_(loop) {}
  using ir::IRVisitor::visit;

  std::set<const ir::BufferNode*> result() {
    visit(loop_->body);
    std::set<const ir::BufferNode*> out;
    for (const auto& [buffer, stores] : stores_) {
      if (stores.size() == 1 && read_.count(buffer) == 0 && disjoint(*stores.front())) {
        out.insert(buffer);
      }
    }
    return out;
  }

 protected:
  void visit(const ir::For* op) override {
    const int64_t* min = ir::as_const_int(op->min);
    const int64_t* extent = ir::as_const_int(op->extent);
    if (min != nullptr && extent != nullptr && *extent >= 1) {
      ranges_[op->var.get()] = ir::ConstBound{*min, *min + *extent - 1};
      inner_[op->var.get()] = ir::make_const(op->var.type(), *min);
    } else {
      unbounded_ = true;
    }
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::LetStmt* op) override {
    unbounded_ = true;  // kept simple: a let inside the loop makes the analysis give up
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Load* op) override {
    read_.insert(op->buffer.get());
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    if (op->buffer.scope() == ir::MemoryScope::Shared) {
      stores_[op->buffer.get()].push_back(op);
    }
    ir::IRVisitor::visit(op);
  }

 private:
  bool disjoint(const ir::Store& store) const {
    if (unbounded_ || store.indices.size() != 1) {
      return false;
    }
    ir::Expr index = store.indices[0];
    int64_t lanes_span = 0;
    if (const auto* ramp = index.as<ir::Ramp>()) {
      const int64_t* stride = ir::as_const_int(ramp->stride);
      if (stride == nullptr) {
        return false;
      }
      lanes_span = (ramp->lanes - 1) * (*stride < 0 ? -*stride : *stride);
      index = ramp->base;
    }
    if (!index.type().is_scalar()) {
      return false;
    }
    const ir::Var& v = loop_->var;
    // Kept alive: as_const_int points into it.
    const ir::Expr step_expr = ir::simplify(
        ir::substitute(index, {{v.get(), v + ir::make_const(v.type(), int64_t{1})}}) - index);
    const int64_t* step = ir::as_const_int(step_expr);
    if (step == nullptr || *step == 0) {
      return false;
    }
    // What one iteration spans: the index less its value at the inner loops' first iteration.
    const ir::Expr at_v = ir::substitute(index, {{v.get(), ir::make_const(v.type(), int64_t{0})}});
    const ir::Expr spread = ir::simplify(at_v - ir::substitute(at_v, inner_));
    std::optional<ir::ConstBound> bound = ir::const_bound(spread, ranges_);
    return bound.has_value() && bound->max - bound->min + lanes_span < (*step < 0 ? -*step : *step);
  }

  const ir::For* loop_;
  ir::VarRanges ranges_;
  ir::VarMap inner_;
  bool unbounded_ = false;
  std::set<const ir::BufferNode*> read_;
  std::map<const ir::BufferNode*, std::vector<const ir::Store*>> stores_;
};

class Planner {
 public:
  explicit Planner(const Pipelines& pipelines) : pipelines_(pipelines) {}

  std::set<const ir::StmtNode*> before;

  /// The accesses since the last barrier after `s`, given those before it.
  Access plan(const ir::Stmt& s, const Access& given) {
    if (!s.defined()) {
      return given;
    }
    Access in = given;
    if (pipelines_.step_starts.count(s.get()) != 0) {
      before.insert(s.get());  // a pipelined step starts with a barrier
      in = Access();
    }
    switch (s.kind()) {
      case ir::StmtKind::For: {
        const auto* op = s.as<ir::For>();
        if (ir::is_thread_kind(op->for_kind)) {
          return unit(s, in);
        }
        if (ir::is_gpu_kind(op->for_kind)) {
          return plan(op->body, in);  // one block each: nothing carries from one to the next
        }
        SingleThreadNest nest;
        nest.visit(s);
        return nest.ok ? unit(s, in) : loop(op, in);
      }
      case ir::StmtKind::Store:
      case ir::StmtKind::Evaluate:
        return unit(s, in);
      case ir::StmtKind::Allocate:
        return plan(s.as<ir::Allocate>()->body, in);
      case ir::StmtKind::LetStmt:
        return plan(s.as<ir::LetStmt>()->body, in);
      case ir::StmtKind::IfThenElse: {
        const auto* op = s.as<ir::IfThenElse>();
        Access out = plan(op->then_case, in);
        out.merge(op->else_case.defined() ? plan(op->else_case, in) : in);
        return out;
      }
      case ir::StmtKind::Seq: {
        Access state = in;
        for (const ir::Stmt& child : s.as<ir::Seq>()->stmts) {
          state = plan(child, state);
        }
        return state;
      }
    }
    return in;
  }

 private:
  Access unit(const ir::Stmt& s, Access in) {
    SharedAccess collector;
    collector.visit(s);
    for (const ir::BufferNode* b : ignored_) {
      collector.access.reads.erase(b);
      collector.access.writes.erase(b);
    }
    if (collector.access.empty()) {
      return in;
    }
    if (conflicts(in, collector.access)) {
      before.insert(s.get());
      in = Access();
    }
    in.merge(collector.access);
    return in;
  }

  // An iteration starts with what preceded the loop or what the previous iteration left; the
  // barriers only grow, so this reaches a fixed point.
  Access loop(const ir::For* op, const Access& in) {
    if (pipelines_.loops.count(op) != 0) {
      // Each step starts with a barrier; inside, a step's fetch and compute use different halves.
      const std::set<const ir::BufferNode*> outer = ignored_;
      ignored_.insert(pipelines_.doubled.begin(), pipelines_.doubled.end());
      Access out = plan(op->body, in);
      ignored_ = outer;
      out.reads.insert(pipelines_.doubled.begin(), pipelines_.doubled.end());
      out.writes.insert(pipelines_.doubled.begin(), pipelines_.doubled.end());
      return out;
    }
    const std::set<const ir::BufferNode*> disjoint = DisjointWrites(op).result();
    Access state = in;
    for (int round = 0; round < 64; ++round) {
      size_t barriers = before.size();
      Access out = plan(op->body, state);
      Access carried = out;  // what the next iteration must not race with
      for (const ir::BufferNode* b : disjoint) {
        carried.writes.erase(b);
      }
      Access next = in;
      next.merge(carried);
      if (before.size() == barriers && next == state) {
        const int64_t* extent = ir::as_const_int(op->extent);
        return extent != nullptr && *extent > 0 ? out : next;
      }
      state = next;
    }
    TT_CHECK(false) << "cuda codegen: barrier placement did not converge for loop '"
                    << op->var.name() << "'";
    return in;
  }

  const Pipelines& pipelines_;
  std::set<const ir::BufferNode*> ignored_;  ///< doubled buffers, inside their loops
};

}  // namespace

std::set<const ir::StmtNode*> plan_barriers(const ir::Stmt& kernel, const Pipelines& pipelines) {
  Planner planner(pipelines);
  planner.plan(kernel, Access());
  return planner.before;
}

}  // namespace tensortune::codegen::cuda

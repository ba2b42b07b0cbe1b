// SPDX-License-Identifier: Apache-2.0
// The vectorize pass: finds Vectorized loops (innermost first), checks that running their
// iterations in lockstep cannot change what they compute, and widens their bodies.
#include "tensortune/lower/vectorize_loops.h"

#include "tensortune/ir/ir_equal.h"
#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "vectorize_widen.h"

#include <unordered_map>
#include <vector>

namespace tensortune::lower {
namespace {

/// Stores and loads of the body by buffer, and whether any expression is already a vector.
class AccessCollector : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;

  std::unordered_map<const ir::BufferNode*, std::vector<const ir::Store*>> stores;
  std::vector<const ir::Load*> loads;
  bool has_vector = false;

  void visit(const ir::Expr& e) override {
    if (e.defined() && !e.type().is_scalar()) {
      has_vector = true;
    }
    ir::IRVisitor::visit(e);
  }

 protected:
  void visit(const ir::Store* op) override {
    stores[op->buffer.get()].push_back(op);
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Load* op) override {
    loads.push_back(op);
    ir::IRVisitor::visit(op);
  }
};

bool same_indices(const std::vector<ir::Expr>& a, const std::vector<ir::Expr>& b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t d = 0; d < a.size(); ++d) {
    if (!ir::structural_equal(a[d], b[d])) {
      return false;
    }
  }
  return true;
}

/// True when lockstep execution keeps every read-after-write of the scalar loop: a buffer the
/// body writes is written once and read only at the element the same iteration writes.
bool lockstep_safe(const AccessCollector& access) {
  for (const auto& [buffer, stores] : access.stores) {
    if (stores.size() > 1) {
      return false;
    }
  }
  for (const ir::Load* load : access.loads) {
    auto it = access.stores.find(load->buffer.get());
    if (it != access.stores.end() && !same_indices(load->indices, it->second[0]->indices)) {
      return false;
    }
  }
  return true;
}

class VectorizeLoops : public ir::IRMutator {
 protected:
  using ir::IRMutator::visit;

  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    const int64_t* min = ir::as_const_int(op->min);
    const int64_t* extent = ir::as_const_int(op->extent);
    if (min != nullptr && extent != nullptr) {
      ranges_[op->var.get()] = ir::ConstBound{*min, *min + *extent - 1};
    }
    ir::Stmt body = mutate(op->body);
    ranges_.erase(op->var.get());
    ir::Stmt loop = body.same_as(op->body)
                        ? s
                        : ir::For::make(op->var, op->min, op->extent, op->for_kind, body,
                                        op->auto_unroll_max_step);
    if (op->for_kind != ir::ForKind::Vectorized || extent == nullptr || *extent < 1) {
      return loop;
    }
    if (*extent == 1) {
      return ir::substitute(body, ir::VarMap{{op->var.get(), op->min}});
    }
    AccessCollector access;
    access.visit(body);
    if (access.has_vector || !lockstep_safe(access)) {
      return loop;
    }
    if (ir::Stmt chunked = widen_in_chunks(op, *extent, body); chunked.defined()) {
      return chunked;
    }
    ir::Stmt widened = widen_loop_body(op->var, op->min, static_cast<int>(*extent), body, ranges_);
    return widened.defined() ? widened : loop;
  }

 private:
  /// A lane count that is not a power of two but has a power-of-two factor P >= 2 (48 = 3 x 16)
  /// becomes an unrolled loop over extent / P chunks of P lanes: LLVM widens a <48 x float> to 64
  /// lanes and scalarizes its loads, stores and shuffles (a matmul with 48-wide vectors ran at
  /// 12 GFLOP/s against 370 with 64). Undefined when the extent is a power of two or odd, or the
  /// chunk body cannot be widened.
  ir::Stmt widen_in_chunks(const ir::For* op, int64_t extent, const ir::Stmt& body) {
    const int64_t lanes = extent & -extent;  // the largest power of two dividing the extent
    if (lanes == extent || lanes < 2) {
      return ir::Stmt();
    }
    const ir::DataType t = op->var.type();
    ir::Var chunk(op->var.name() + ".c", t);
    ir::Var lane(op->var.name() + ".v", t);
    ir::Stmt inner = ir::substitute(
        body, ir::VarMap{{op->var.get(), op->min + chunk * ir::make_const(t, lanes) + lane}});
    ranges_[chunk.get()] = ir::ConstBound{0, extent / lanes - 1};
    ir::Stmt widened = widen_loop_body(lane, ir::make_const(t, int64_t{0}), static_cast<int>(lanes),
                                       inner, ranges_);
    ranges_.erase(chunk.get());
    if (!widened.defined()) {
      return ir::Stmt();
    }
    return ir::For::make(chunk, ir::make_const(t, int64_t{0}), ir::make_const(t, extent / lanes),
                         ir::ForKind::Unrolled, widened);
  }

  ir::VarRanges ranges_;
};

}  // namespace

ir::Stmt vectorize_loops(const ir::Stmt& s) {
  VectorizeLoops pass;
  return pass.mutate(s);
}

}  // namespace tensortune::lower

// SPDX-License-Identifier: Apache-2.0
// Storage flattening: A[i, j, k] of a [I, J, K] buffer becomes A[i*J*K + j*K + k]. Buffers keep
// their shapes (codegen and the runtime still see them); only accesses change.
#include "tensortune/lower/flatten_storage.h"

#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <cstdint>
#include <limits>

namespace tensortune::lower {
namespace {

void check_size(const ir::Buffer& b) {
  int64_t elements = 1;
  for (int64_t d : b.shape()) {
    TT_USER_CHECK(d <= std::numeric_limits<int32_t>::max() &&
                  elements <= std::numeric_limits<int32_t>::max() / d)
        << "flatten_storage: buffer '" << b.name() << "' has more than 2^31 - 1 elements; "
        << "indices are int32";
    elements *= d;
  }
}

ir::Expr flat_index(const ir::Buffer& b, const std::vector<ir::Expr>& indices) {
  TT_CHECK(indices.size() == b.shape().size())
      << "flatten_storage: '" << b.name() << "' accessed with " << indices.size()
      << " indices but has rank " << b.shape().size();
  ir::Expr flat;
  int64_t stride = 1;
  for (size_t d = indices.size(); d-- > 0;) {
    ir::Expr term = indices[d];
    if (stride != 1) {
      term = term * ir::make_const(term.type().element_of(), stride);
    }
    flat = flat.defined() ? term + flat : term;
    stride *= b.shape()[d];
  }
  return flat;
}

class Flattener : public ir::IRMutator {
 protected:
  using ir::IRMutator::visit;

  ir::Expr visit(const ir::Load* op, const ir::Expr& e) override {
    ir::Expr mutated = ir::IRMutator::visit(op, e);
    const auto* load = mutated.as<ir::Load>();
    if (load->indices.size() == 1 && load->buffer.shape().size() <= 1) {
      return mutated;
    }
    return ir::Load::make(load->buffer, {flat_index(load->buffer, load->indices)}, load->predicate);
  }

  ir::Stmt visit(const ir::Store* op, const ir::Stmt& s) override {
    ir::Stmt mutated = ir::IRMutator::visit(op, s);
    const auto* store = mutated.as<ir::Store>();
    if (store->indices.size() == 1 && store->buffer.shape().size() <= 1) {
      return mutated;
    }
    return ir::Store::make(store->buffer, store->value, {flat_index(store->buffer, store->indices)},
                           store->predicate);
  }

  ir::Stmt visit(const ir::Allocate* op, const ir::Stmt& s) override {
    check_size(op->buffer);
    return ir::IRMutator::visit(op, s);
  }
};

}  // namespace

ir::LoweredFunc flatten_storage(const ir::LoweredFunc& f) {
  for (const ir::Buffer& b : f.params) {
    check_size(b);
  }
  ir::LoweredFunc out = f;
  Flattener flattener;
  out.body = flattener.mutate(f.body);
  return out;
}

}  // namespace tensortune::lower

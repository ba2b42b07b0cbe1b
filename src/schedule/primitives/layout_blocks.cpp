// SPDX-License-Identifier: Apache-2.0
// Blocked layouts of cache stages (CacheRead::blocks, CacheWrite::blocks): dimension d blocked by
// f becomes d / f in place (or first, outer_first) and d % f after the tensor's own dimensions;
// a padded block rounds d / f up.
#include "primitives.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

namespace tensortune::schedule {

void check_layout_blocks(const char* what,
                         const std::string& tensor,
                         const std::vector<LayoutBlock>& blocks,
                         const std::vector<int64_t>& shape) {
  std::vector<bool> seen(shape.size(), false);
  for (const LayoutBlock& b : blocks) {
    if (b.dim < 0 || b.dim >= static_cast<int64_t>(shape.size())) {
      throw ScheduleError(std::string(what) + ": block dimension " + std::to_string(b.dim) +
                          " of '" + tensor + "' is out of range (it has " +
                          std::to_string(shape.size()) + " dimensions)");
    }
    auto d = static_cast<size_t>(b.dim);
    if (seen[d]) {
      throw ScheduleError(std::string(what) + ": dimension " + std::to_string(b.dim) + " of '" +
                          tensor + "' is blocked twice");
    }
    seen[d] = true;
    if (b.factor < 1 || (!b.pad && shape[d] % b.factor != 0)) {
      throw ScheduleError(std::string(what) + ": block factor " + std::to_string(b.factor) +
                          " does not divide dimension " + std::to_string(b.dim) + " of '" + tensor +
                          "' (extent " + std::to_string(shape[d]) + ")");
    }
  }
}

namespace {

/// Moves the elements at the outer_first blocks' dimensions to the front, in block order.
template <typename T>
std::vector<T> outer_first_order(const std::vector<LayoutBlock>& blocks, std::vector<T> items) {
  std::vector<T> front;
  std::vector<bool> moved(items.size(), false);
  for (const LayoutBlock& b : blocks) {
    if (b.outer_first) {
      front.push_back(std::move(items[static_cast<size_t>(b.dim)]));
      moved[static_cast<size_t>(b.dim)] = true;
    }
  }
  for (size_t d = 0; d < items.size(); ++d) {
    if (!moved[d]) {
      front.push_back(std::move(items[d]));
    }
  }
  return front;
}

}  // namespace

std::vector<ir::Expr> blocked_indices(const std::vector<LayoutBlock>& blocks,
                                      std::vector<ir::Expr> indices) {
  std::vector<ir::Expr> inner;
  for (const LayoutBlock& b : blocks) {
    ir::Expr& x = indices[static_cast<size_t>(b.dim)];
    ir::Expr f = ir::make_const(x.type(), b.factor);
    inner.push_back(x % f);
    x = x / f;
  }
  std::vector<ir::Expr> out = outer_first_order(blocks, std::move(indices));
  out.insert(out.end(), inner.begin(), inner.end());
  return out;
}

BlockedAxes blocked_axes(const std::vector<ir::IterVar>& axes,
                         const std::vector<LayoutBlock>& blocks) {
  BlockedAxes out;
  std::vector<ir::IterVar> own = axes;
  std::vector<ir::IterVar> inner_axes;
  for (const ir::IterVar& a : axes) {
    out.source.push_back(a.var);
  }
  for (const LayoutBlock& b : blocks) {
    auto d = static_cast<size_t>(b.dim);
    const std::string& name = axes[d].var.name();
    ir::Var outer(name, axes[d].var.type());
    ir::Var inner(name + ".b", axes[d].var.type());
    own[d] = ir::IterVar{outer, (axes[d].extent + b.factor - 1) / b.factor, axes[d].kind};
    inner_axes.push_back(ir::IterVar{inner, b.factor, axes[d].kind});
    out.source[d] = outer * ir::make_const(outer.type(), b.factor) + inner;
  }
  out.axes = outer_first_order(blocks, std::move(own));
  out.axes.insert(out.axes.end(), inner_axes.begin(), inner_axes.end());
  for (const ir::IterVar& a : out.axes) {
    out.shape.push_back(a.extent);
  }
  return out;
}

}  // namespace tensortune::schedule

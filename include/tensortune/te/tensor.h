// SPDX-License-Identifier: Apache-2.0
// Tensors and the operations that produce them. An operation is a placeholder (an input) or a
// compute (an element-wise definition over its axes, possibly a reduction). Element bodies are
// ir::Expr; reading a tensor is an ir::Load of the tensor's buffer. te knows nothing of schedules.
#pragma once

#include "tensortune/ir/expr.h"

#include <memory>
#include <string>
#include <vector>

namespace tensortune::te {

enum class OpKind : uint8_t { Placeholder, Compute };

/// One operation with a single output. Immutable once built.
struct Operation {
  OpKind kind = OpKind::Placeholder;
  std::string name;
  /// A free-form classification: "matmul", "conv2d", "elemwise", "broadcast", "injective",
  /// "reduction", "" (unknown). Search rules may read it; lowering never does.
  std::string tag;
  /// The output buffer: its name, dtype and shape are the tensor's.
  ir::Buffer output;
  /// Compute only: one data-parallel axis per output dimension, in order.
  std::vector<ir::IterVar> axes;
  /// Compute only: the element value at `axes`; a Reduce node only at the top.
  ir::Expr body;
  /// Compute only: the operations whose outputs `body` reads, in first-read order.
  std::vector<std::shared_ptr<const Operation>> inputs;

  bool is_placeholder() const { return kind == OpKind::Placeholder; }
  /// The Reduce node when the body is a reduction, else nullptr.
  const ir::Reduce* reduce() const { return body.as<ir::Reduce>(); }
  /// The reduction axes (empty unless a reduction).
  std::vector<ir::IterVar> reduce_axes() const;
};

using OperationRef = std::shared_ptr<const Operation>;

/// Handle to the output of an operation.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(OperationRef op) : op_(std::move(op)) {}

  bool defined() const { return op_ != nullptr; }
  const OperationRef& op() const { return op_; }
  const std::string& name() const { return op_->name; }
  ir::DataType dtype() const { return op_->output.dtype(); }
  const std::vector<int64_t>& shape() const { return op_->output.shape(); }
  size_t ndim() const { return shape().size(); }
  const ir::Buffer& buffer() const { return op_->output; }

  /// Element read: a Load of this tensor at `indices` (one per dimension, index-typed).
  /// Throws UserError naming the tensor when the count is wrong.
  ir::Expr operator()(std::vector<ir::Expr> indices) const;
  template <class... Args>
  ir::Expr operator()(Args... indices) const {
    return (*this)(std::vector<ir::Expr>{ir::Expr(indices)...});
  }

  bool same_as(const Tensor& other) const { return op_ == other.op_; }

 private:
  OperationRef op_;
};

}  // namespace tensortune::te

// SPDX-License-Identifier: Apache-2.0
// A workload: the inputs and outputs of a compute DAG, its canonical text and its stable key.
#pragma once

#include "tensortune/te/tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::te {

class Workload {
 public:
  /// Checks the DAG: every placeholder reached from `outputs` is in `inputs`, operation names are
  /// unique, no input is also an output. Throws UserError otherwise.
  Workload(std::string name, std::vector<Tensor> inputs, std::vector<Tensor> outputs);

  /// Readable name, e.g. "matmul_1024x1024x1024_float32".
  const std::string& name() const { return name_; }
  const std::vector<Tensor>& inputs() const { return inputs_; }
  const std::vector<Tensor>& outputs() const { return outputs_; }
  /// Every operation reachable from the outputs, producers before consumers (placeholders
  /// included), in a deterministic order (depth-first over inputs in first-read order).
  const std::vector<OperationRef>& ops() const { return ops_; }
  /// The operation named `name`, or nullptr.
  OperationRef find_op(const std::string& name) const;
  /// The compute operations that read `op`'s output.
  std::vector<OperationRef> consumers(const OperationRef& op) const;

  /// Canonical text: one line per operation in ops() order; tensors renamed T0, T1, ... and
  /// axis variables by position, so the text does not depend on user names or pointers.
  std::string canonical_text() const;
  /// name() + "_" + 16 hex digits of the hash of canonical_text().
  std::string key() const;
  /// Floating-point operations of one run (multiply-add = 2; intrinsics count 1).
  double flop_count() const;
  /// The longest reduction (product of the reduction extents) of any operation; 1 when none.
  /// Result-check tolerances scale with it.
  int64_t max_reduction_length() const;

 private:
  std::string name_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> outputs_;
  std::vector<OperationRef> ops_;
};

}  // namespace tensortune::te

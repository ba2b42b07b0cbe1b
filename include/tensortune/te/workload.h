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
  /// As above, and `constants` (a subset of `inputs`) are declared constant: weights, fixed when
  /// a model is compiled. A stage computed at the root from constants alone (a weight copied
  /// into a blocked layout) is then lowered into the kernel's prepare function, run once, not
  /// per call. Throws UserError when a constant is not an input.
  Workload(std::string name,
           std::vector<Tensor> inputs,
           std::vector<Tensor> outputs,
           const std::vector<Tensor>& constants);

  /// Readable name, e.g. "matmul_1024x1024x1024_float32".
  const std::string& name() const { return name_; }
  const std::vector<Tensor>& inputs() const { return inputs_; }
  const std::vector<Tensor>& outputs() const { return outputs_; }
  /// Per input: declared constant (see the constructor).
  const std::vector<bool>& constant_inputs() const { return constant_; }
  /// True when the placeholder named `name` is a constant input.
  bool is_constant(const std::string& name) const;
  /// Every operation reachable from the outputs, producers before consumers (placeholders
  /// included), in a deterministic order (depth-first over inputs in first-read order).
  const std::vector<OperationRef>& ops() const { return ops_; }
  /// The operation named `name`, or nullptr.
  OperationRef find_op(const std::string& name) const;
  /// The compute operations that read `op`'s output.
  std::vector<OperationRef> consumers(const OperationRef& op) const;

  /// Canonical text: one line per operation in ops() order; tensors renamed T0, T1, ... and
  /// axis variables by position, so the text does not depend on user names or pointers. The
  /// constant inputs, when there are any, have a line of their own.
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
  std::vector<bool> constant_;
  std::vector<OperationRef> ops_;
};

/// A workload's name and key, for distinct_names.
struct NamedKey {
  std::string name, key;
};

/// Names that tell workloads apart where they are listed together: each name, with "_" and the
/// last six characters of its key appended where another entry of a different key has the same
/// name (a 3->8 and an 8->8 convolution are both "conv_relu_1x8x16x16_float32": a name shows the
/// output only). Entries of one key keep one name.
std::vector<std::string> distinct_names(const std::vector<NamedKey>& workloads);

}  // namespace tensortune::te

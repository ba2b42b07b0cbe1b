// SPDX-License-Identifier: Apache-2.0
// Host memory for a kernel's parameters: random non-zero inputs, and the check of one kernel's
// outputs against another's.
#pragma once

#include "tensortune/ir/stmt.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace tensortune::cli {

/// One 64-byte aligned, dense row-major array per parameter of a lowered function.
class KernelBuffers {
 public:
  /// Allocates every parameter; UserError for a dtype the tools cannot fill (float16, ...).
  explicit KernelBuffers(const ir::LoweredFunc& func);

  /// Fills the inputs with random non-zero values in [-1, -0.1] u [0.1, 1] (integers: -4..4
  /// without 0), deterministically from `seed`.
  void fill_inputs(uint64_t seed);
  /// Fills the outputs with random values, so elements a kernel leaves unwritten are caught.
  void fill_outputs(uint64_t seed);
  /// Copies the inputs of `other`, which must have the same parameters.
  void copy_inputs_from(const KernelBuffers& other);

  /// The argument array of the kernel ABI (inputs, then outputs).
  void* const* pointers() const { return pointers_.data(); }
  const std::vector<ir::Buffer>& params() const { return params_; }
  size_t num_inputs() const { return num_inputs_; }
  void* data(size_t index) const { return pointers_[index]; }

 private:
  void fill(size_t begin, size_t end, uint64_t seed);

  std::vector<ir::Buffer> params_;
  size_t num_inputs_ = 0;
  std::vector<std::shared_ptr<void>> storage_;
  std::vector<void*> pointers_;
};

/// Compares every output of `got` with `expected`: floats within rtol * (|expected| +
/// sqrt(reduction_length) * 0.1) (inputs are at most 1 in magnitude, so rounding grows with the
/// square root of the reduction length), integers exactly. Throws UserError "the schedule computes
/// wrong results: first mismatch at C[3, 17]: ..." with the count of differing elements.
void check_outputs(const KernelBuffers& got,
                   const KernelBuffers& expected,
                   int64_t reduction_length,
                   double rtol = 1e-3);

}  // namespace tensortune::cli

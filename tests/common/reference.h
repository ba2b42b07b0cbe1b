// SPDX-License-Identifier: Apache-2.0
// Shared test helpers: a naive reference interpreter of a te::Workload (every operation evaluated
// element by element straight from its te body), random inputs that are never zero, and
// per-dtype closeness checks. This is the oracle that property and end-to-end tests compare
// kernels against; it shares no code with lowering or ir::eval.
#pragma once

#include "tensortune/ir/type.h"
#include "tensortune/te/workload.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::testing {

/// Runs `workload` naively. `args` are dense row-major buffers, inputs in declaration order then
/// outputs (the kernel ABI); element types: float32 as float, float64 as double, int32 as int32_t,
/// int64 as int64_t. Float32 results are rounded to float after every operation and reductions
/// accumulate in order, as a serial float32 kernel would. Integer division and modulo are floor
/// operations. Throws InternalError on an out-of-bounds read, an integer division by zero or an
/// unsupported construct.
void reference_run(const te::Workload& workload, const std::vector<void*>& args);

/// Fills `n` elements of type `dtype` with values that are never zero: floats uniform in
/// [-1, -0.1] u [0.1, 1], ints uniform in [-9, 9] \ {0}. Same seed, same values, everywhere.
void fill_random(void* data, ir::DataType dtype, size_t n, uint64_t seed);

/// |actual - expected| <= atol + rtol * |expected|, elementwise.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

/// Exact for integer outputs. For floats rtol 1e-4 and atol 1e-4 * max(1, sqrt(R)), R being the
/// total reduction length of the workload's operations (summation order may differ in kernels).
Tolerance tolerance_for(const te::Workload& workload, ir::DataType dtype);

/// True when the `n` elements agree within `tol`; otherwise, when `mismatch` is given, describes
/// the first mismatching element and how many mismatch.
bool all_close(const void* actual,
               const void* expected,
               ir::DataType dtype,
               size_t n,
               const Tolerance& tol,
               std::string* mismatch = nullptr);

/// all_close() as a gtest assertion: EXPECT_TRUE(close(...)).
::testing::AssertionResult close(
    const void* actual, const void* expected, ir::DataType dtype, size_t n, const Tolerance& tol);

/// Dense host storage for every input and output of a workload, in kernel-argument order.
class HostBuffers {
 public:
  /// Zero-filled storage for the workload's inputs, then its outputs.
  explicit HostBuffers(const te::Workload& workload);
  /// Fills input `k` with fill_random(seed + k); outputs stay as they are.
  void fill_inputs(uint64_t seed);
  /// Pointers to each buffer, the `args` of reference_run() and of a compiled kernel.
  std::vector<void*> args();
  size_t size() const { return storage_.size(); }
  size_t num_inputs() const { return num_inputs_; }
  void* data(size_t i) { return storage_[i].data(); }
  const void* data(size_t i) const { return storage_[i].data(); }
  size_t num_elements(size_t i) const { return counts_[i]; }
  ir::DataType dtype(size_t i) const { return dtypes_[i]; }

 private:
  std::vector<std::vector<uint64_t>> storage_;  // 8-byte words keep every element type aligned
  std::vector<ir::DataType> dtypes_;
  std::vector<size_t> counts_;
  size_t num_inputs_ = 0;
};

/// Runs the reference on `buffers` and checks every output of `actual` (same workload, same
/// inputs) against it with tolerance_for(); the message names the first bad output.
::testing::AssertionResult outputs_match_reference(const te::Workload& workload,
                                                   const HostBuffers& actual);

}  // namespace tensortune::testing

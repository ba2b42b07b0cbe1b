// SPDX-License-Identifier: Apache-2.0
// What the measurer needs to know about a candidate besides its code: the kernel's name and
// parameters (KernelSignature), and how closely its outputs must match the reference (Tolerance).
#pragma once

#include "tensortune/ir/stmt.h"
#include "tensortune/ir/type.h"
#include "tensortune/support/json.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::measure {

/// One dense, row-major kernel parameter.
struct BufferSpec {
  std::string name;
  ir::DataType dtype;
  std::vector<int64_t> shape;

  int64_t num_elements() const;
  int64_t num_bytes() const { return num_elements() * dtype.bytes(); }
  bool operator==(const BufferSpec& o) const {
    return name == o.name && dtype == o.dtype && shape == o.shape;
  }
};

/// The ABI of a compiled kernel: `int32_t NAME(void* const* buffers)` with `params` in order,
/// the first `num_inputs` of them read, the rest written. Plain data, so it crosses processes.
struct KernelSignature {
  std::string name;
  std::vector<BufferSpec> params;
  size_t num_inputs = 0;
  /// Buffers the kernel's prepare function fills from its constant inputs (passed after params).
  std::vector<BufferSpec> prepacked;

  /// The signature of a lowered function.
  static KernelSignature of(const ir::LoweredFunc& func);
  /// True when both kernels take the same buffers (names aside) and may share inputs and outputs.
  bool compatible_with(const KernelSignature& other) const;
  support::Json to_json() const;
  /// Throws UserError naming the field for a malformed document.
  static KernelSignature from_json(const support::Json& json);
};

/// How far a candidate's float output may be from the reference's: |got - expected| <=
/// rtol * (|expected| + slack). Integers and booleans must match exactly; NaN matches only NaN.
/// The caller knows the compute: with inputs in [-1, 1], rounding grows with the square root of
/// the reduction length, so `slack` = 0.1 * sqrt(longest reduction) is a good choice.
struct Tolerance {
  double rtol = 1e-3;
  double slack = 0.1;

  /// The tolerance for a compute whose longest reduction has `length` elements.
  static Tolerance for_reduction(int64_t length, double rtol = 1e-3);
  support::Json to_json() const;
  static Tolerance from_json(const support::Json& json);
};

}  // namespace tensortune::measure

// SPDX-License-Identifier: Apache-2.0
// Private to te: records which operations' tensors are read while a compute body is being built,
// so compute() can map the buffers of the body's Loads back to their producing operations.
#pragma once

#include "tensortune/te/tensor.h"

#include <vector>

namespace tensortune::te::detail {

/// A scope active during one call of a compute's body function. Scopes nest (a body function may
/// itself build another compute); Tensor::operator() reports to the innermost one on its thread.
/// An ir::Load carries only a Buffer, so this is the one place where the Buffer -> Operation link
/// is available without a global registry.
class ReadTracker {
 public:
  ReadTracker();
  ~ReadTracker();
  ReadTracker(const ReadTracker&) = delete;
  ReadTracker& operator=(const ReadTracker&) = delete;

  /// Notes that `op`'s output was read; does nothing when no scope is active.
  static void note(const OperationRef& op);
  /// The operation whose output is `buffer`, or nullptr when it was not read in this scope.
  OperationRef find(const ir::Buffer& buffer) const;

 private:
  ReadTracker* previous_;
  std::vector<OperationRef> ops_;
};

}  // namespace tensortune::te::detail

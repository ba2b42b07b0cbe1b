// SPDX-License-Identifier: Apache-2.0
// Private to src/measure: a built GPU candidate as one blob (BuildResult::object for a CUDA
// target): the kernels with their launch shapes, the buffers (params then scratch) and the cubin.
#pragma once

#include "tensortune/ir/stmt.h"
#include "tensortune/measure/builder.h"
#include "tensortune/measure/measure_input.h"
#include "tensortune/target/target.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::measure::detail {

/// One kernel of a GPU candidate and how to launch it (codegen::CudaKernel as plain data).
struct GpuLaunch {
  std::string name;
  std::array<int64_t, 3> grid{{1, 1, 1}};
  std::array<int64_t, 3> block{{1, 1, 1}};
  int64_t shared_bytes = 0;
  /// Indices into GpuImage::buffers, in parameter order.
  std::vector<int> params;
};

/// What the GPU worker needs to run a candidate: "TTG1", u64 header length, JSON header, cubin.
struct GpuImage {
  /// The kernel's parameters (inputs then outputs) followed by the scratch buffers.
  std::vector<BufferSpec> buffers;
  size_t num_params = 0;
  /// Launched in this order; together they are one call of the candidate.
  std::vector<GpuLaunch> kernels;
  std::string cubin;

  std::string encode() const;
  /// Throws UserError for a blob that is not an encoded GpuImage.
  static GpuImage decode(const std::string& blob);
};

/// Generates CUDA C for `func` and compiles it to a cubin with NVRTC, in this process: a
/// BuildResult whose object is an encoded GpuImage, or CompileError with the reason (NVRTC's log).
BuildResult build_gpu(const ir::LoweredFunc& func, const target::Target& target);

}  // namespace tensortune::measure::detail

// SPDX-License-Identifier: Apache-2.0
// Private to src/measure: a built GPU candidate as one blob (BuildResult::object for a CUDA
// target): the kernels with their launch shapes, the buffers (params then scratch) and the cubin.
// The Builder generates the CUDA C in this process and NVRTC compiles it in a build worker.
#pragma once

#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/ir/stmt.h"
#include "tensortune/measure/measure_input.h"
#include "tensortune/target/target.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::measure::detail {

/// One kernel of a GPU candidate and how to launch it (params index GpuImage::buffers).
using GpuLaunch = codegen::CudaKernel;

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

/// True when `blob` is an encoded GpuImage (a CUDA target's build), not CPU object code.
bool is_gpu_image(const std::string& blob);

/// A GPU candidate before NVRTC: its image without the cubin, and its CUDA C.
struct GpuSource {
  GpuImage image;
  std::string source;
};

/// Generates CUDA C for `func` (codegen::generate_cuda) with the image that will carry its cubin.
/// Throws what code generation throws (a construct CUDA cannot express).
GpuSource generate_gpu(const ir::LoweredFunc& func, const target::Target& target);

/// The build worker's half: the cubin of `source` for `target` (codegen::compile_cuda); throws
/// UserError with NVRTC's log when it does not compile.
std::string compile_gpu(const std::string& source, const target::Target& target);

}  // namespace tensortune::measure::detail

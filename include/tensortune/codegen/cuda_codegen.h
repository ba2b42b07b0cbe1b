// SPDX-License-Identifier: Apache-2.0
// Loop IR -> CUDA C for GPU targets ("cuda -arch=sm_90"), and CUDA C -> PTX / cubin through NVRTC.
// NVRTC is loaded at run time (dlopen), so nothing here needs CUDA to build or to start.
#pragma once

#include "tensortune/ir/expr.h"
#include "tensortune/ir/stmt.h"
#include "tensortune/support/json.h"
#include "tensortune/target/target.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::codegen {

/// One __global__ function of a CUDA module and how to launch it.
struct CudaKernel {
  std::string name;                         ///< "<func>_kernel0", "<func>_kernel1", ...
  std::array<int64_t, 3> grid{{1, 1, 1}};   ///< extents bound to blockIdx.x/y/z
  std::array<int64_t, 3> block{{1, 1, 1}};  ///< extents bound to threadIdx.x/y/z
  int64_t shared_bytes = 0;                 ///< shared memory of the kernel per block
  /// Indices into CudaModule::buffers of the kernel's parameters, in parameter order.
  std::vector<int> params;
  /// Of shared_bytes, what the launch passes as dynamic shared memory: all of it for a kernel
  /// over the 48 KB of static shared memory (its MAX_DYNAMIC_SHARED_SIZE_BYTES raised first),
  /// else 0.
  int64_t dynamic_shared_bytes = 0;
};

/// A LoweredFunc for a GPU target as one CUDA C translation unit.
struct CudaModule {
  std::string source;  ///< complete CUDA C (extern "C" kernels, no #include needed)
  /// The function's params (inputs then outputs) followed by the global scratch buffers that
  /// the host must allocate (top-level `allocate ... global` of intermediate stages).
  std::vector<ir::Buffer> buffers;
  int num_params = 0;               ///< buffers[0, num_params) are the LoweredFunc's params
  std::vector<CudaKernel> kernels;  ///< launched in this order, one per top-level loop nest
};

/// Generates CUDA C for a flattened LoweredFunc lowered for a GPU target: each top-level loop nest
/// becomes one kernel whose loops bound to blockIdx/threadIdx are replaced by those indices
/// (grid and block from their extents), with shared and local allocations, __syncthreads()
/// after each cooperative write of a shared buffer, `#pragma unroll` on unrolled loops, vector
/// loads/stores as float2/float4 when provably aligned (else per lane). The kernels assume every
/// buffer they are passed is 16-byte aligned (cuMemAlloc gives 256). Throws UserError for a
/// CPU target or a construct CUDA code cannot express (naming it).
CudaModule generate_cuda(const ir::LoweredFunc& func, const target::Target& target);

/// One "// kernel NAME: grid (x, y, z), block (x, y, z), shared N bytes, params (A, B)" line per
/// kernel and one "// scratch buffer NAME: float32[N], allocated by the host" line per scratch
/// buffer: how the host launches the module, as a C comment block.
std::string launch_summary(const CudaModule& module);

/// How to launch `kernel`, as JSON {name, grid, block, shared_bytes, params}, with
/// dynamic_shared_bytes when not 0: the GPU candidates
/// the measurer ships to its worker and the manifest `compile` writes share this form.
support::Json kernel_json(const CudaKernel& kernel);
/// Inverse of kernel_json; UserError naming the field for a malformed document.
CudaKernel kernel_from_json(const support::Json& json);

/// What ptxas reports for one kernel of a cubin: per thread, its registers, the bytes it spills
/// to local memory and reads back (-1: unknown, when only the cubin was read), and its stack
/// frame (local arrays that are not registers, and the spills).
struct KernelResources {
  std::string name;
  int64_t registers = 0;
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
  int64_t stack_bytes = 0;
};

/// What NVRTC produced for one source.
struct NvrtcOutput {
  std::string ptx;    ///< PTX text
  std::string cubin;  ///< SASS for target.arch when asked for (empty otherwise)
  std::string log;    ///< NVRTC's program log (warnings, ptxas's report), possibly empty
  /// Per kernel, in the order ptxas compiled them, when a cubin was made.
  std::vector<KernelResources> resources;
};

/// The kernels ptxas reports on in an NVRTC log (`--ptxas-options=-v`): "Compiling entry function
/// 'NAME'", then its stack, spill and register lines. Lines it does not know are skipped.
std::vector<KernelResources> parse_ptxas_report(const std::string& log);

/// Each entry function's registers and stack frame as the cubin's .nv.info section records them,
/// spills -1 (ptxas reports them, the cubin does not); empty for bytes that are no cubin.
std::vector<KernelResources> cubin_resources(const std::string& cubin);

/// True when libnvrtc can be loaded; otherwise false with the reason in `why` (when given).
bool nvrtc_available(std::string* why = nullptr);

/// Compiles CUDA C with NVRTC for target.arch (-arch=compute_XX for PTX, sm_XX for PTX and a
/// cubin), --std=c++17, with the CUDA include folders that exist; NVRTC optimizes fully by default
/// (it rejects -O3). Thread-safe. Throws UserError "nvrtc: malformed arch '...'" for an arch that
/// is not sm_XY[a|f], "nvrtc: not available: ..." when NVRTC cannot be loaded, and
/// "nvrtc: compile failed for sm_XX:\n<log>" when the source does not compile (an arch NVRTC does
/// not support: "nvrtc: compile failed for sm_XX (NVRTC_ERROR_INVALID_OPTION):\n<log>").
NvrtcOutput compile_cuda(const std::string& source, const target::Target& target, bool want_cubin);

}  // namespace tensortune::codegen

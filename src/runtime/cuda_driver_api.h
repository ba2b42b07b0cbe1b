// SPDX-License-Identifier: Apache-2.0
// The slice of the CUDA driver API that CudaDevice uses, resolved from libcuda.so.1 at run time.
// Types, enum values and signatures are copied from cuda.h (CUDA 13), which is never included.
#pragma once

#include <cstddef>
#include <string>

namespace tensortune::runtime::detail {

using CuResult = int;  // CUresult, a C enum
using CuDevice = int;
using CuDeviceptr = unsigned long long;  // CUdeviceptr_v2 on 64-bit hosts
struct CuContextOpaque;
struct CuStreamOpaque;
struct CuModuleOpaque;
struct CuFunctionOpaque;
struct CuEventOpaque;
struct CuGraphOpaque;
struct CuGraphExecOpaque;
using CuContext = CuContextOpaque*;
using CuStream = CuStreamOpaque*;
using CuModule = CuModuleOpaque*;
using CuFunction = CuFunctionOpaque*;
using CuEvent = CuEventOpaque*;
using CuGraph = CuGraphOpaque*;
using CuGraphExec = CuGraphExecOpaque*;

constexpr CuResult kCudaSuccess = 0;

// CUdevice_attribute
constexpr int kAttrMaxThreadsPerBlock = 1;
constexpr int kAttrMaxBlockDimX = 2;  // Y = 3, Z = 4
constexpr int kAttrMaxGridDimX = 5;   // Y = 6, Z = 7
constexpr int kAttrMaxSharedMemoryPerBlock = 8;
constexpr int kAttrWarpSize = 10;
constexpr int kAttrMaxRegistersPerBlock = 12;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;

// CUfunction_attribute
constexpr int kFuncAttrMaxThreadsPerBlock = 0;
constexpr int kFuncAttrSharedSizeBytes = 1;
constexpr int kFuncAttrNumRegs = 4;
constexpr int kFuncAttrMaxDynamicSharedSizeBytes = 8;

// CUstreamCaptureMode: only the capturing thread's unsafe calls are refused during a capture.
constexpr int kCaptureModeThreadLocal = 1;

// CUjit_option
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSizeBytes = 6;

/// Every entry point CudaDevice calls. Loaded once; `reason` is empty when a device is usable.
struct DriverApi {
  std::string reason;
  int device_count = 0;

  CuResult (*init)(unsigned) = nullptr;
  CuResult (*get_error_name)(CuResult, const char**) = nullptr;
  CuResult (*get_error_string)(CuResult, const char**) = nullptr;
  CuResult (*device_get_count)(int*) = nullptr;
  CuResult (*device_get)(CuDevice*, int) = nullptr;
  CuResult (*device_get_name)(char*, int, CuDevice) = nullptr;
  CuResult (*device_total_mem)(size_t*, CuDevice) = nullptr;
  CuResult (*mem_get_info)(size_t*, size_t*) = nullptr;  // free, total
  CuResult (*device_get_attribute)(int*, int, CuDevice) = nullptr;
  CuResult (*primary_ctx_retain)(CuContext*, CuDevice) = nullptr;
  CuResult (*primary_ctx_release)(CuDevice) = nullptr;
  CuResult (*ctx_set_current)(CuContext) = nullptr;
  CuResult (*stream_create)(CuStream*, unsigned) = nullptr;
  CuResult (*stream_destroy)(CuStream) = nullptr;
  CuResult (*stream_synchronize)(CuStream) = nullptr;
  CuResult (*mem_alloc)(CuDeviceptr*, size_t) = nullptr;
  CuResult (*mem_free)(CuDeviceptr) = nullptr;
  CuResult (*memcpy_htod)(CuDeviceptr, const void*, size_t) = nullptr;
  CuResult (*memcpy_dtoh)(void*, CuDeviceptr, size_t) = nullptr;
  CuResult (*module_load_data_ex)(CuModule*, const void*, unsigned, int*, void**) = nullptr;
  CuResult (*module_unload)(CuModule) = nullptr;
  CuResult (*module_get_function)(CuFunction*, CuModule, const char*) = nullptr;
  CuResult (*func_get_attribute)(int*, int, CuFunction) = nullptr;
  CuResult (*func_set_attribute)(CuFunction, int, int) = nullptr;
  CuResult (*launch_kernel)(CuFunction,
                            unsigned,
                            unsigned,
                            unsigned,
                            unsigned,
                            unsigned,
                            unsigned,
                            unsigned,
                            CuStream,
                            void**,
                            void**) = nullptr;
  CuResult (*event_create)(CuEvent*, unsigned) = nullptr;
  CuResult (*event_record)(CuEvent, CuStream) = nullptr;
  CuResult (*event_synchronize)(CuEvent) = nullptr;
  CuResult (*event_elapsed_time)(float*, CuEvent, CuEvent) = nullptr;
  CuResult (*event_destroy)(CuEvent) = nullptr;
  // CUDA graphs (stream capture), optional: null where the driver predates CUDA 11.4.
  CuResult (*stream_begin_capture)(CuStream, int) = nullptr;
  CuResult (*stream_end_capture)(CuStream, CuGraph*) = nullptr;
  CuResult (*graph_instantiate)(CuGraphExec*, CuGraph, unsigned long long) = nullptr;
  CuResult (*graph_launch)(CuGraphExec, CuStream) = nullptr;
  CuResult (*graph_exec_destroy)(CuGraphExec) = nullptr;
  CuResult (*graph_destroy)(CuGraph) = nullptr;

  /// "CUDA_ERROR_ILLEGAL_ADDRESS" for a result (or "CUDA error <n>" when the driver has none).
  std::string error_name(CuResult result) const;
  /// The driver's description of a result.
  std::string error_string(CuResult result) const;
};

/// The process-wide driver API: dlopen("libcuda.so.1"), cuInit(0) and the device count, done on
/// the first call (thread-safe). Never throws; see DriverApi::reason.
const DriverApi& driver_api();

}  // namespace tensortune::runtime::detail

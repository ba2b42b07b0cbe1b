// SPDX-License-Identifier: Apache-2.0
// Loads the CUDA driver with dlopen and resolves the entry points CudaDevice uses. The library is
// never linked: a binary linked to libcuda would not start on a machine without a driver.
#include "runtime/cuda_driver_api.h"

#include <dlfcn.h>
#include <string>

namespace tensortune::runtime::detail {
namespace {

constexpr CuResult kCudaErrorNoDevice = 100;

template <class Fn>
void resolve(void* handle, const char* symbol, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (fn == nullptr) {
    missing += missing.empty() ? symbol : std::string(", ") + symbol;
  }
}

/// The 64-bit and versioned names are the ones cuda.h's #defines select (cuMemAlloc ->
/// cuMemAlloc_v2, ...); cuEventElapsedTime_v2 is CUDA 12.8+, the older name serves otherwise.
std::string resolve_all(void* handle, DriverApi& api) {
  std::string missing;
  resolve(handle, "cuInit", api.init, missing);
  resolve(handle, "cuGetErrorName", api.get_error_name, missing);
  resolve(handle, "cuGetErrorString", api.get_error_string, missing);
  resolve(handle, "cuDeviceGetCount", api.device_get_count, missing);
  resolve(handle, "cuDeviceGet", api.device_get, missing);
  resolve(handle, "cuDeviceGetName", api.device_get_name, missing);
  resolve(handle, "cuDeviceTotalMem_v2", api.device_total_mem, missing);
  resolve(handle, "cuDeviceGetAttribute", api.device_get_attribute, missing);
  resolve(handle, "cuDevicePrimaryCtxRetain", api.primary_ctx_retain, missing);
  resolve(handle, "cuDevicePrimaryCtxRelease_v2", api.primary_ctx_release, missing);
  resolve(handle, "cuCtxSetCurrent", api.ctx_set_current, missing);
  resolve(handle, "cuStreamCreate", api.stream_create, missing);
  resolve(handle, "cuStreamDestroy_v2", api.stream_destroy, missing);
  resolve(handle, "cuStreamSynchronize", api.stream_synchronize, missing);
  resolve(handle, "cuMemAlloc_v2", api.mem_alloc, missing);
  resolve(handle, "cuMemGetInfo_v2", api.mem_get_info, missing);
  resolve(handle, "cuMemFree_v2", api.mem_free, missing);
  resolve(handle, "cuMemcpyHtoD_v2", api.memcpy_htod, missing);
  resolve(handle, "cuMemcpyDtoH_v2", api.memcpy_dtoh, missing);
  resolve(handle, "cuModuleLoadDataEx", api.module_load_data_ex, missing);
  resolve(handle, "cuModuleUnload", api.module_unload, missing);
  resolve(handle, "cuModuleGetFunction", api.module_get_function, missing);
  resolve(handle, "cuFuncGetAttribute", api.func_get_attribute, missing);
  resolve(handle, "cuFuncSetAttribute", api.func_set_attribute, missing);
  resolve(handle, "cuLaunchKernel", api.launch_kernel, missing);
  resolve(handle, "cuEventCreate", api.event_create, missing);
  resolve(handle, "cuEventRecord", api.event_record, missing);
  resolve(handle, "cuEventSynchronize", api.event_synchronize, missing);
  resolve(handle, "cuEventDestroy_v2", api.event_destroy, missing);
  // Graphs are optional: a driver without them runs every launch one by one.
  std::string no_graphs;
  resolve(handle, "cuStreamBeginCapture_v2", api.stream_begin_capture, no_graphs);
  resolve(handle, "cuStreamEndCapture", api.stream_end_capture, no_graphs);
  resolve(handle, "cuGraphInstantiateWithFlags", api.graph_instantiate, no_graphs);
  resolve(handle, "cuGraphLaunch", api.graph_launch, no_graphs);
  resolve(handle, "cuGraphExecDestroy", api.graph_exec_destroy, no_graphs);
  resolve(handle, "cuGraphDestroy", api.graph_destroy, no_graphs);
  if (!no_graphs.empty()) {
    api.stream_begin_capture = nullptr;
  }
  std::string no_v2;
  resolve(handle, "cuEventElapsedTime_v2", api.event_elapsed_time, no_v2);
  if (api.event_elapsed_time == nullptr) {
    resolve(handle, "cuEventElapsedTime", api.event_elapsed_time, missing);
  }
  return missing;
}

DriverApi load_driver_api() {
  DriverApi api;
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    api.reason = std::string("no CUDA driver (") + (why != nullptr ? why : "libcuda.so.1") + ")";
    return api;
  }
  std::string missing = resolve_all(handle, api);
  if (!missing.empty()) {
    api.reason = "CUDA driver too old (libcuda.so.1 lacks " + missing + ")";
    return api;
  }
  CuResult result = api.init(0);
  if (result == kCudaErrorNoDevice) {
    api.reason = "no CUDA device (cuInit: " + api.error_name(result) + ")";
    return api;
  }
  if (result != kCudaSuccess) {
    api.reason = "cuInit failed: " + api.error_name(result) + ": " + api.error_string(result);
    return api;
  }
  result = api.device_get_count(&api.device_count);
  if (result != kCudaSuccess) {
    api.reason =
        "cuDeviceGetCount failed: " + api.error_name(result) + ": " + api.error_string(result);
  } else if (api.device_count <= 0) {
    api.reason = "no CUDA device";
  }
  return api;
}

}  // namespace

std::string DriverApi::error_name(CuResult result) const {
  const char* text = nullptr;
  if (get_error_name != nullptr && get_error_name(result, &text) == kCudaSuccess &&
      text != nullptr) {
    return text;
  }
  return "CUDA error " + std::to_string(result);
}

std::string DriverApi::error_string(CuResult result) const {
  const char* text = nullptr;
  if (get_error_string != nullptr && get_error_string(result, &text) == kCudaSuccess &&
      text != nullptr) {
    return text;
  }
  return "unknown error";
}

const DriverApi& driver_api() {
  static const DriverApi api = load_driver_api();
  return api;
}

}  // namespace tensortune::runtime::detail

// SPDX-License-Identifier: Apache-2.0
// CudaDevice: one device's primary context, a stream, loaded modules, device memory, launches
// (checked against the device's limits first, so that an impossible launch is a clear error) and
// event timing, over the driver API that runtime/cuda_driver_api.cpp loads at run time.
#include "tensortune/runtime/cuda_driver.h"

#include "runtime/cuda_driver_api.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tensortune::runtime {

using detail::CuContext;
using detail::CuDevice;
using detail::CuDeviceptr;
using detail::CuEvent;
using detail::CuFunction;
using detail::CuGraph;
using detail::CuGraphExec;
using detail::CuModule;
using detail::CuResult;
using detail::CuStream;
using detail::DriverApi;

namespace {

/// Throws CudaError for a failed driver call.
void check(const DriverApi& api, CuResult result, const char* call) {
  if (result != detail::kCudaSuccess) {
    throw CudaError(call, api.error_name(result), api.error_string(result));
  }
}

[[noreturn]] void launch_error(const std::string& name, const std::string& message) {
  throw CudaError("launch", name, message);
}

std::string dims_text(const std::array<int64_t, 3>& dims) {
  return std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" + std::to_string(dims[2]);
}

}  // namespace

struct CudaDevice::Impl {
  /// A kernel found by function() and what the launch checks need to know about it.
  struct Function {
    CuFunction handle = nullptr;  ///< null once its module is unloaded
    int module = -1;
    int registers = 0;    ///< per thread
    int max_threads = 0;  ///< per block, given its registers and shared memory
    int static_shared = 0;
  };

  const DriverApi& api = detail::driver_api();
  CuDevice device = 0;
  CuContext context = nullptr;
  CuStream stream = nullptr;
  std::vector<CuModule> modules;    ///< load_module() handles index this; null once unloaded
  std::vector<Function> functions;  ///< function() handles index this
  /// capture_graph() handles index this; null once destroyed.
  std::vector<std::pair<CuGraph, CuGraphExec>> graphs;
  CudaDeviceInfo info;

  /// Makes the context current on the calling thread (the measurer may call from any thread).
  void bind() const { check(api, api.ctx_set_current(context), "cuCtxSetCurrent"); }

  int attribute(int which) const {
    int value = 0;
    check(api, api.device_get_attribute(&value, which, device), "cuDeviceGetAttribute");
    return value;
  }

  void read_info() {
    std::array<char, 256> name{};
    check(api, api.device_get_name(name.data(), static_cast<int>(name.size()), device),
          "cuDeviceGetName");
    info.name = name.data();
    size_t bytes = 0;
    check(api, api.device_total_mem(&bytes, device), "cuDeviceTotalMem");
    info.total_memory = static_cast<int64_t>(bytes);
    info.major = attribute(detail::kAttrComputeCapabilityMajor);
    info.minor = attribute(detail::kAttrComputeCapabilityMinor);
    info.multiprocessors = attribute(detail::kAttrMultiprocessorCount);
    info.max_threads_per_block = attribute(detail::kAttrMaxThreadsPerBlock);
    info.max_shared_memory_per_block = attribute(detail::kAttrMaxSharedMemoryPerBlock);
    info.max_shared_memory_per_block_optin = std::max(
        info.max_shared_memory_per_block, attribute(detail::kAttrMaxSharedMemoryPerBlockOptin));
    info.max_registers_per_block = attribute(detail::kAttrMaxRegistersPerBlock);
    info.warp_size = attribute(detail::kAttrWarpSize);
    for (int axis = 0; axis < 3; ++axis) {
      info.max_block_dims[axis] = attribute(detail::kAttrMaxBlockDimX + axis);
      info.max_grid_dims[axis] = attribute(detail::kAttrMaxGridDimX + axis);
    }
  }

  /// Looks `name` up in `module` and reads its limits; returns its index in `functions`.
  size_t add_function(CuModule module, const std::string& name) {
    Function fn;
    CuResult result = api.module_get_function(&fn.handle, module, name.c_str());
    if (result != detail::kCudaSuccess) {
      throw CudaError("cuModuleGetFunction", api.error_name(result),
                      api.error_string(result) + " (kernel '" + name + "')");
    }
    auto read = [&](int attribute, int& value) {
      check(api, api.func_get_attribute(&value, attribute, fn.handle), "cuFuncGetAttribute");
    };
    read(detail::kFuncAttrNumRegs, fn.registers);
    read(detail::kFuncAttrMaxThreadsPerBlock, fn.max_threads);
    read(detail::kFuncAttrSharedSizeBytes, fn.static_shared);
    // Dynamic shared memory past the static 48 KB needs the kernel's own limit raised first.
    const int dynamic = info.max_shared_memory_per_block_optin - fn.static_shared;
    if (dynamic > info.max_shared_memory_per_block) {
      check(api,
            api.func_set_attribute(fn.handle, detail::kFuncAttrMaxDynamicSharedSizeBytes, dynamic),
            "cuFuncSetAttribute");
    }
    functions.push_back(fn);
    return functions.size() - 1;
  }

  /// Throws CudaError("launch", ...) for a launch the device or the kernel cannot run.
  void check_launch(const Function& fn,
                    const std::array<int64_t, 3>& grid,
                    const std::array<int64_t, 3>& block,
                    int64_t shared_bytes) const;
};

void CudaDevice::Impl::check_launch(const Function& fn,
                                    const std::array<int64_t, 3>& grid,
                                    const std::array<int64_t, 3>& block,
                                    int64_t shared_bytes) const {
  const char* const invalid = "CUDA_ERROR_INVALID_VALUE";
  const char* const resources = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
  for (int axis = 0; axis < 3; ++axis) {
    if (grid[axis] < 1 || block[axis] < 1) {
      launch_error(invalid, "grid " + dims_text(grid) + " and block " + dims_text(block) +
                                " must have positive extents");
    }
  }
  int64_t threads = 1;  // each factor clamped so that absurd extents cannot overflow
  for (int64_t extent : block) {
    threads *= std::min<int64_t>(extent, int64_t{1} << 20);
  }
  if (threads > info.max_threads_per_block) {
    launch_error(invalid, "block " + dims_text(block) + " has " + std::to_string(threads) +
                              " threads; the device allows at most " +
                              std::to_string(info.max_threads_per_block) + " per block");
  }
  for (int axis = 0; axis < 3; ++axis) {
    if (block[axis] > info.max_block_dims[axis] || grid[axis] > info.max_grid_dims[axis]) {
      std::array<int64_t, 3> max_grid{};
      std::array<int64_t, 3> max_block{};
      for (int a = 0; a < 3; ++a) {
        max_grid[a] = info.max_grid_dims[a];
        max_block[a] = info.max_block_dims[a];
      }
      launch_error(invalid, "grid " + dims_text(grid) + " or block " + dims_text(block) +
                                " exceeds the device's limits (grid " + dims_text(max_grid) +
                                ", block " + dims_text(max_block) + ")");
    }
  }
  int64_t shared = std::max<int64_t>(shared_bytes, fn.static_shared);
  if (shared > info.max_shared_memory_per_block_optin) {
    launch_error(invalid, "the kernel needs " + std::to_string(shared) +
                              " bytes of shared memory per block; the device allows at most " +
                              std::to_string(info.max_shared_memory_per_block_optin));
  }
  if (int64_t{fn.registers} * threads > info.max_registers_per_block) {
    launch_error(resources, std::to_string(threads) + " threads x " + std::to_string(fn.registers) +
                                " registers per thread exceed the device's " +
                                std::to_string(info.max_registers_per_block) +
                                " registers per block");
  }
  if (threads > fn.max_threads) {
    launch_error(resources, "block " + dims_text(block) + " has " + std::to_string(threads) +
                                " threads; this kernel (" + std::to_string(fn.registers) +
                                " registers per thread) can run at most " +
                                std::to_string(fn.max_threads) + " per block");
  }
}

std::string cuda_unavailable_reason() {
  try {
    return detail::driver_api().reason;
  } catch (...) {
    return "the CUDA driver could not be queried";
  }
}

CudaDevice::CudaDevice(int ordinal) : impl_(std::make_unique<Impl>()) {
  const DriverApi& api = impl_->api;
  if (!api.reason.empty()) {
    throw CudaError("device", "unavailable", api.reason);
  }
  if (ordinal < 0 || ordinal >= api.device_count) {
    throw CudaError("cuDeviceGet", "CUDA_ERROR_INVALID_DEVICE",
                    "no device " + std::to_string(ordinal) + " (there are " +
                        std::to_string(api.device_count) + ")");
  }
  check(api, api.device_get(&impl_->device, ordinal), "cuDeviceGet");
  check(api, api.primary_ctx_retain(&impl_->context, impl_->device), "cuDevicePrimaryCtxRetain");
  try {
    impl_->bind();
    impl_->read_info();
    check(api, api.stream_create(&impl_->stream, 0), "cuStreamCreate");
  } catch (...) {
    api.primary_ctx_release(impl_->device);
    throw;
  }
}

CudaDevice::~CudaDevice() {
  const DriverApi& api = impl_->api;
  // Errors are ignored: after a sticky kernel fault every call fails, and releasing the primary
  // context is what recovers the device for the next CudaDevice.
  api.ctx_set_current(impl_->context);
  for (const auto& [graph, exec] : impl_->graphs) {
    if (exec != nullptr) {
      api.graph_exec_destroy(exec);
      api.graph_destroy(graph);
    }
  }
  for (CuModule module : impl_->modules) {
    if (module != nullptr) {
      api.module_unload(module);
    }
  }
  if (impl_->stream != nullptr) {
    api.stream_destroy(impl_->stream);
  }
  api.ctx_set_current(nullptr);
  api.primary_ctx_release(impl_->device);
}

int64_t CudaDevice::memory_in_use() const {
  impl_->bind();
  size_t free_bytes = 0, total_bytes = 0;
  check(impl_->api, impl_->api.mem_get_info(&free_bytes, &total_bytes), "cuMemGetInfo");
  return static_cast<int64_t>(total_bytes - free_bytes);
}

const CudaDeviceInfo& CudaDevice::info() const {
  return impl_->info;
}

uint64_t CudaDevice::alloc(size_t bytes) {
  impl_->bind();
  CuDeviceptr ptr = 0;
  check(impl_->api, impl_->api.mem_alloc(&ptr, bytes), "cuMemAlloc");
  return ptr;
}

void CudaDevice::free(uint64_t ptr) {
  if (ptr == 0) {
    return;
  }
  impl_->bind();
  check(impl_->api, impl_->api.mem_free(ptr), "cuMemFree");
}

void CudaDevice::copy_to_device(uint64_t dst, const void* src, size_t bytes) {
  impl_->bind();
  check(impl_->api, impl_->api.memcpy_htod(dst, src, bytes), "cuMemcpyHtoD");
}

void CudaDevice::copy_to_host(void* dst, uint64_t src, size_t bytes) {
  impl_->bind();
  check(impl_->api, impl_->api.memcpy_dtoh(dst, src, bytes), "cuMemcpyDtoH");
}

int CudaDevice::load_module(const std::string& image) {
  impl_->bind();
  // The JIT's error log says why PTX did not load (an unsupported .target, a syntax error).
  std::string log(8192, '\0');
  std::array<int, 2> options = {detail::kJitErrorLogBuffer, detail::kJitErrorLogBufferSizeBytes};
  // The driver takes the buffer size as an integer stored in the pointer-sized option value.
  std::array<void*, 2> values = {log.data(),
                                 reinterpret_cast<void*>(  // NOLINT(performance-no-int-to-ptr)
                                     static_cast<uintptr_t>(log.size()))};
  CuModule module = nullptr;
  CuResult result =
      impl_->api.module_load_data_ex(&module, image.c_str(), 2, options.data(), values.data());
  if (result != detail::kCudaSuccess) {
    log.resize(std::min(log.size(), log.find('\0')));
    throw CudaError("cuModuleLoadData", impl_->api.error_name(result),
                    impl_->api.error_string(result) + (log.empty() ? "" : "\n" + log));
  }
  impl_->modules.push_back(module);
  return static_cast<int>(impl_->modules.size()) - 1;
}

void CudaDevice::unload_module(int module) {
  if (module < 0 || module >= static_cast<int>(impl_->modules.size()) ||
      impl_->modules[module] == nullptr) {
    throw CudaError("cuModuleUnload", "CUDA_ERROR_INVALID_HANDLE",
                    "module " + std::to_string(module) + " is not loaded");
  }
  impl_->bind();
  CuModule handle = impl_->modules[module];
  impl_->modules[module] = nullptr;
  for (Impl::Function& fn : impl_->functions) {
    if (fn.module == module) {
      fn.handle = nullptr;
    }
  }
  check(impl_->api, impl_->api.module_unload(handle), "cuModuleUnload");
}

int CudaDevice::loaded_modules() const {
  return static_cast<int>(std::count_if(impl_->modules.begin(), impl_->modules.end(),
                                        [](CuModule m) { return m != nullptr; }));
}

uint64_t CudaDevice::function(int module, const std::string& name, int* registers_per_thread) {
  if (module < 0 || module >= static_cast<int>(impl_->modules.size()) ||
      impl_->modules[module] == nullptr) {
    throw CudaError("cuModuleGetFunction", "CUDA_ERROR_INVALID_HANDLE",
                    "module " + std::to_string(module) + " is not loaded");
  }
  impl_->bind();
  size_t index = impl_->add_function(impl_->modules[module], name);
  impl_->functions[index].module = module;
  if (registers_per_thread != nullptr) {
    *registers_per_thread = impl_->functions[index].registers;
  }
  return index;
}

void CudaDevice::launch(uint64_t fn,
                        const std::array<int64_t, 3>& grid,
                        const std::array<int64_t, 3>& block,
                        int64_t shared_bytes,
                        const std::vector<uint64_t>& args) {
  if (fn >= impl_->functions.size()) {
    throw CudaError("launch", "CUDA_ERROR_INVALID_HANDLE",
                    "no kernel " + std::to_string(fn) + " was returned by function()");
  }
  const Impl::Function& kernel = impl_->functions[fn];
  if (kernel.handle == nullptr) {
    throw CudaError("launch", "CUDA_ERROR_INVALID_HANDLE",
                    "kernel " + std::to_string(fn) + " belongs to an unloaded module");
  }
  impl_->bind();
  impl_->check_launch(kernel, grid, block, shared_bytes);
  std::vector<CuDeviceptr> values(args.begin(), args.end());
  std::vector<void*> params;
  params.reserve(values.size());
  for (CuDeviceptr& value : values) {
    params.push_back(&value);
  }
  // The static __shared__ arrays are part of the kernel; only the rest is dynamic.
  auto dynamic_shared =
      static_cast<unsigned>(std::max<int64_t>(0, shared_bytes - kernel.static_shared));
  auto u = [](int64_t extent) {
    return static_cast<unsigned>(extent);
  };
  check(impl_->api,
        impl_->api.launch_kernel(kernel.handle, u(grid[0]), u(grid[1]), u(grid[2]), u(block[0]),
                                 u(block[1]), u(block[2]), dynamic_shared, impl_->stream,
                                 params.empty() ? nullptr : params.data(), nullptr),
        "cuLaunchKernel");
}

void CudaDevice::synchronize() {
  impl_->bind();
  check(impl_->api, impl_->api.stream_synchronize(impl_->stream), "cuStreamSynchronize");
}

double CudaDevice::time_events(int calls, const std::function<void()>& body) {
  if (calls < 1) {
    throw CudaError("time_events", "CUDA_ERROR_INVALID_VALUE",
                    "calls must be positive, not " + std::to_string(calls));
  }
  impl_->bind();
  const DriverApi& api = impl_->api;
  std::array<CuEvent, 2> events = {nullptr, nullptr};
  struct EventGuard {
    const DriverApi& api;
    std::array<CuEvent, 2>& events;
    EventGuard(const EventGuard&) = delete;
    EventGuard& operator=(const EventGuard&) = delete;
    ~EventGuard() {
      for (CuEvent event : events) {
        if (event != nullptr) {
          api.event_destroy(event);
        }
      }
    }
  } guard{api, events};
  for (CuEvent& event : events) {
    check(api, api.event_create(&event, 0), "cuEventCreate");
  }
  check(api, api.event_record(events[0], impl_->stream), "cuEventRecord");
  for (int i = 0; i < calls; ++i) {
    body();
  }
  check(api, api.event_record(events[1], impl_->stream), "cuEventRecord");
  check(api, api.event_synchronize(events[1]), "cuEventSynchronize");
  float milliseconds = 0.0F;
  check(api, api.event_elapsed_time(&milliseconds, events[0], events[1]), "cuEventElapsedTime");
  return static_cast<double>(milliseconds) * 1e-3 / calls;
}

bool CudaDevice::supports_graphs() const {
  return impl_->api.stream_begin_capture != nullptr;
}

uint64_t CudaDevice::capture_graph(const std::function<void()>& body) {
  const DriverApi& api = impl_->api;
  if (!supports_graphs()) {
    throw CudaError("cuStreamBeginCapture", "CUDA_ERROR_NOT_SUPPORTED",
                    "this CUDA driver has no graphs (CUDA 11.4 or later needed)");
  }
  impl_->bind();
  check(api, api.stream_begin_capture(impl_->stream, detail::kCaptureModeThreadLocal),
        "cuStreamBeginCapture");
  CuGraph graph = nullptr;
  try {
    body();
  } catch (...) {
    // Ends the capture, so the stream runs launches again.
    if (api.stream_end_capture(impl_->stream, &graph) == detail::kCudaSuccess && graph != nullptr) {
      api.graph_destroy(graph);
    }
    throw;
  }
  check(api, api.stream_end_capture(impl_->stream, &graph), "cuStreamEndCapture");
  CuGraphExec exec = nullptr;
  const CuResult result = api.graph_instantiate(&exec, graph, 0);
  if (result != detail::kCudaSuccess) {
    api.graph_destroy(graph);
    check(api, result, "cuGraphInstantiate");
  }
  impl_->graphs.emplace_back(graph, exec);
  return impl_->graphs.size();  // 0 is no graph
}

void CudaDevice::launch_graph(uint64_t graph) {
  impl_->bind();
  if (graph == 0 || graph > impl_->graphs.size() || impl_->graphs[graph - 1].second == nullptr) {
    throw CudaError("cuGraphLaunch", "CUDA_ERROR_INVALID_HANDLE",
                    "no graph " + std::to_string(graph));
  }
  check(impl_->api, impl_->api.graph_launch(impl_->graphs[graph - 1].second, impl_->stream),
        "cuGraphLaunch");
}

void CudaDevice::destroy_graph(uint64_t graph) {
  if (graph == 0 || graph > impl_->graphs.size() || impl_->graphs[graph - 1].second == nullptr) {
    throw CudaError("cuGraphExecDestroy", "CUDA_ERROR_INVALID_HANDLE",
                    "no graph " + std::to_string(graph));
  }
  impl_->bind();
  auto& [g, exec] = impl_->graphs[graph - 1];
  impl_->api.graph_exec_destroy(exec);
  impl_->api.graph_destroy(g);
  g = nullptr;
  exec = nullptr;
}

void* CudaDevice::native_stream() const {
  return impl_->stream;
}

}  // namespace tensortune::runtime

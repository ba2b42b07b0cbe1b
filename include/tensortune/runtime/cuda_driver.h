// SPDX-License-Identifier: Apache-2.0
// The CUDA driver API, loaded at run time (dlopen "libcuda.so.1"): never linked, so every binary
// starts on a machine without a GPU or a driver and reports that cleanly when asked for one.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tensortune::runtime {

/// What the device can do; checked before a launch.
struct CudaDeviceInfo {
  std::string name;          ///< "NVIDIA H100 80GB HBM3"
  int major = 0, minor = 0;  ///< compute capability
  int multiprocessors = 0;
  int max_threads_per_block = 0;
  int max_shared_memory_per_block = 0;  ///< bytes (static limit, 48 KiB on most)
  /// Bytes a kernel may use with dynamic shared memory past the static limit (227 KiB on sm_90).
  int max_shared_memory_per_block_optin = 0;
  int max_registers_per_block = 0;
  int warp_size = 0;
  int64_t total_memory = 0;                      ///< bytes
  std::array<int, 3> max_block_dims{{0, 0, 0}};  ///< largest blockDim.x/y/z
  std::array<int, 3> max_grid_dims{{0, 0, 0}};   ///< largest gridDim.x/y/z
  std::string arch() const { return "sm_" + std::to_string(major * 10 + minor); }
};

/// Why there is no usable device, or empty when there is one: "no CUDA driver (libcuda.so.1:
/// ...)", "cuInit failed: ...", "no CUDA device". Never throws.
std::string cuda_unavailable_reason();

/// A device with a primary context, a loaded module per call to load(), device memory and
/// event timing. Errors throw runtime::CudaError with the driver's error name and string.
class CudaDevice {
 public:
  /// Opens device `ordinal`; CudaError carrying cuda_unavailable_reason() when there is none.
  explicit CudaDevice(int ordinal = 0);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  const CudaDeviceInfo& info() const;

  /// Device memory: allocate, free, copy.
  uint64_t alloc(size_t bytes);
  void free(uint64_t ptr);
  void copy_to_device(uint64_t dst, const void* src, size_t bytes);
  void copy_to_host(void* dst, uint64_t src, size_t bytes);
  /// Bytes in use on the whole device (cuMemGetInfo: total - free), what nvidia-smi calls used:
  /// every context on it (this process's included, with its code and reserves) and their
  /// allocations. The way to compare a process's footprint with another framework's.
  int64_t memory_in_use() const;

  /// Loads a module from PTX or cubin bytes; returns a handle for function().
  int load_module(const std::string& image);
  /// Unloads a module load_module() returned (its code leaves the device); the handles function()
  /// returned for its kernels are invalid afterwards (launch() throws CudaError for them).
  /// CudaError for a handle that is not a loaded module. The destructor unloads what is left.
  void unload_module(int module);
  /// How many modules are loaded now.
  int loaded_modules() const;
  /// The kernel `name` of a loaded module, as a handle for launch() on this CudaDevice; also
  /// reports its register count per thread. CudaError when the module or the kernel is unknown.
  uint64_t function(int module, const std::string& name, int* registers_per_thread = nullptr);
  /// Launches `fn` (from function()) with device pointers as its parameters, on the device's
  /// stream; does not wait. `shared_bytes` is the kernel's shared memory per block, its static
  /// __shared__ arrays included (CudaKernel::shared_bytes); what exceeds the static size is passed
  /// as dynamic shared memory. Before launching, checks the block and grid extents, the threads
  /// per block, the shared memory and the registers (per thread x threads) against the device's
  /// and the kernel's limits: a launch that cannot run throws CudaError with call() "launch" and
  /// name() CUDA_ERROR_INVALID_VALUE or CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES.
  void launch(uint64_t fn,
              const std::array<int64_t, 3>& grid,
              const std::array<int64_t, 3>& block,
              int64_t shared_bytes,
              const std::vector<uint64_t>& args);
  /// Waits for the stream; a failed kernel (illegal address, launch failure, ...) throws here.
  /// Such errors are sticky: the context is unusable until every CudaDevice of that device is
  /// destroyed (the primary context is then released and a new CudaDevice gets a fresh one).
  void synchronize();
  /// Records an event before and after `calls` runs of `body` and returns the elapsed seconds
  /// per call as the events measured.
  double time_events(int calls, const std::function<void()>& body);
  /// Whether the driver offers CUDA graphs (stream capture, CUDA 11.4 and later).
  bool supports_graphs() const;
  /// Records the launches `body` queues on the stream into a CUDA graph instead of running them,
  /// and instantiates it: a handle for launch_graph(), valid until destroy_graph() or the
  /// destructor. The launches keep the arguments they were queued with. CudaError when the driver
  /// has no graphs or the capture fails; the stream is usable again either way.
  uint64_t capture_graph(const std::function<void()>& body);
  /// Queues every launch of a captured graph on the stream, as one; does not wait.
  void launch_graph(uint64_t graph);
  void destroy_graph(uint64_t graph);
  /// The driver handle (CUstream) of the stream launch() and time_events() use, for libraries
  /// that take a cudaStream_t (the same handle): work they queue on it is timed by time_events().
  void* native_stream() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A CUDA driver failure: the API call, the error name (CUDA_ERROR_ILLEGAL_ADDRESS) and text.
class CudaError : public std::runtime_error {
 public:
  CudaError(std::string call, std::string name, const std::string& message)
      : std::runtime_error(call + ": " + name + ": " + message),
        call_(std::move(call)),
        name_(std::move(name)) {}
  const std::string& call() const { return call_; }
  const std::string& name() const { return name_; }
  /// True for the errors after which the context still works: the checks before a launch, a
  /// module the device cannot load, a kernel name it does not hold. Any other error may be
  /// sticky (an illegal address): the context is then lost until every CudaDevice is destroyed.
  bool leaves_context_usable() const {
    return call_ == "launch" || call_ == "cuModuleLoadData" || call_ == "cuModuleGetFunction";
  }

 private:
  std::string call_, name_;
};

}  // namespace tensortune::runtime

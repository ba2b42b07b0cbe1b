// SPDX-License-Identifier: Apache-2.0
// A whole model on a CUDA device: the image a GPU model library embeds (its kernels as PTX, the
// device arena's size, and every kernel launch with its buffers as data) and the runtime that
// loads it through the driver API, uploads the weights once and runs the launches on one stream.
// Std only, like the rest of the runtime: exported model libraries link it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tensortune::runtime {

/// What a GPU model library embeds. Text, so a model folder can be read and diffed; see
/// CudaModelImage::serialize for the grammar.
struct CudaModelImage {
  /// One CUDA module: PTX, or CUDA C where the compiling machine had no NVRTC (such a model
  /// is checked and emulated, but a device cannot load it).
  struct Module {
    std::string name;  ///< the kernel function it implements ("kernel_3")
    bool is_ptx = true;
    std::string text;
    /// SASS for `cubin_arch` ("sm_90"), loaded instead of the PTX on a device of that
    /// architecture (no JIT at load); empty when NVRTC made none.
    std::string cubin, cubin_arch;
  };
  /// One buffer of a launch: an input or output of the model (index), or bytes of the device
  /// arena or weights (offset); `bytes` is what the kernel may touch from there.
  struct Arg {
    enum class Kind : uint8_t { Input, Output, Arena, Weight };
    Kind kind = Kind::Arena;
    int64_t index = 0;
    int64_t bytes = 0;
  };
  /// One kernel launch, in plan order; `call` is the model call (plan entry) it belongs to.
  struct Launch {
    int32_t call = 0;
    int32_t module = 0;
    std::string kernel;
    std::array<int64_t, 3> grid{{1, 1, 1}};
    std::array<int64_t, 3> block{{1, 1, 1}};
    int64_t shared_bytes = 0;
    std::vector<Arg> args;
  };

  int64_t arena_bytes = 0;   ///< activations and kernel scratch, one device allocation
  int64_t weight_bytes = 0;  ///< the constants, uploaded once
  std::vector<int64_t> input_bytes, output_bytes;
  int32_t num_calls = 0;
  std::vector<Module> modules;
  std::vector<Launch> launches;

  /// The text form:
  ///   tensortune-cuda-model 1
  ///   arena BYTES / weights BYTES / inputs N B... / outputs N B... / calls N
  ///   module ptx|cuda BYTES NAME, a newline, then BYTES of text and a newline
  ///   cubin BYTES ARCH, a newline, BYTES of the previous module's cubin and a newline
  ///   launch CALL MODULE KERNEL GX GY GZ BX BY BZ SHARED NARGS (i|o|a|w)INDEX:BYTES...
  ///   end
  std::string serialize() const;
  /// Inverse of serialize() followed by validate(); std::runtime_error ("cuda model image: ...")
  /// naming what is malformed.
  static CudaModelImage parse(const std::string& text);
  /// std::runtime_error unless every launch names a module, positive extents, and buffers that
  /// lie inside the model's inputs, outputs, arena or weights.
  void validate() const;
};

/// A loaded model: modules on the device, the arena and weights allocated (the weights
/// uploaded), device buffers for host-to-host runs. Errors throw runtime::CudaError (the driver)
/// or std::runtime_error (the image). Not thread-safe: runs share the arena.
class CudaModel {
 public:
  /// `weights` has image.weight_bytes bytes (may be null when that is 0).
  CudaModel(CudaModelImage image, const void* weights, int device);
  ~CudaModel();
  CudaModel(const CudaModel&) = delete;
  CudaModel& operator=(const CudaModel&) = delete;

  const CudaModelImage& image() const;
  /// Host buffers in and out: inputs copied to the device, the launches, outputs copied back.
  void run_host(const void* const* inputs, void* const* outputs);
  /// Device pointers (CUdeviceptr values) in and out; waits for the launches to finish.
  void run_device(const uint64_t* inputs, const uint64_t* outputs);
  /// Median seconds over `runs` rounds after one warm-up: host to host (wall clock, copies
  /// included) and device resident (CUDA events around the launches on the model's own device
  /// buffers), and, when call_seconds is not null, each call's own launches by events (it gets
  /// image.num_calls entries). The outputs of the last run stay in the model's device buffers.
  void time(int runs, double* host_to_host, double* device_resident, double* call_seconds);
  /// Device memory this model allocated: arena, weights, input and output buffers.
  int64_t device_bytes() const;

  /// How a whole run on the model's own buffers (run_host, time) queues its launches: one by
  /// one, or as one CUDA graph captured once (launch overhead paid once per run). Runs on the
  /// caller's device pointers (run_device) and single calls always go one by one.
  enum class LaunchMode : uint8_t { Each, Graph, Auto };
  struct LaunchChoice {
    bool graph = false;
    /// Auto: median device-resident seconds per run of each way, timed at the choice.
    double each_seconds = 0, graph_seconds = 0;
    std::string note;  ///< why: "the graph ran faster", "the CUDA driver has no graphs", ...
  };
  /// Made when the model opens, from TT_CUDA_GRAPH ("0"/"off": Each, "1"/"on": Graph, else
  /// Auto: the faster of the two); Graph falls back to Each where the driver cannot capture.
  /// CudaError when the device fails.
  void choose_launches(LaunchMode mode);
  LaunchChoice launch_choice() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tensortune::runtime

/// The C entry points a GPU model library forwards to (tt_model_cuda_* in model.h). Each returns
/// 0 or a null handle on failure; the message is then in `error` (open) or tt_cuda_model_error.
extern "C" {
void* tt_cuda_model_open(const char* image,
                         int64_t image_bytes,
                         const void* weights,
                         int32_t device,
                         char* error,
                         int64_t error_bytes);
int32_t tt_cuda_model_run(void* model, const void* const* inputs, void* const* outputs);
int32_t tt_cuda_model_run_device(void* model, const uint64_t* inputs, const uint64_t* outputs);
int32_t tt_cuda_model_time(
    void* model, int32_t runs, double* host_to_host, double* device_resident, double* call_seconds);
int64_t tt_cuda_model_device_bytes(void* model);
/// Chooses how runs queue their launches again (0 one by one, 1 a CUDA graph, 2 the faster), then
/// reports the choice: 1 graph, 0 one by one, -1 on failure; `each_seconds` and `graph_seconds`
/// (either may be null) get the timed comparison of mode 2, else 0. A `mode` < 0 only reports.
int32_t tt_cuda_model_launches(void* model,
                               int32_t mode,
                               double* each_seconds,
                               double* graph_seconds);
const char* tt_cuda_model_error(void* model);
void tt_cuda_model_close(void* model);
}

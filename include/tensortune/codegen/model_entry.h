// SPDX-License-Identifier: Apache-2.0
// A whole model's C entry point, generated into an exported kernel library: the calls it makes
// (which kernel with which buffers) as plain data, and the symbols it defines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::codegen {

/// The symbols of a model entry point:
///   int32_t tt_model_run(void* const* inputs, void* const* outputs, void* arena,
///                        const void* weights);
///   int64_t tt_model_arena_bytes(void);      int64_t tt_model_weight_bytes(void);
///   int32_t tt_model_num_inputs(void);       int32_t tt_model_num_outputs(void);
///   int64_t tt_model_input_bytes(int32_t i); int64_t tt_model_output_bytes(int32_t i);
///   int64_t tt_model_calls_hash(void);       (calls_hash of the calls tt_model_run makes)
/// (the input and output sizes return -1 for an index out of range).
inline constexpr const char* kModelRun = "tt_model_run";
inline constexpr const char* kModelArenaBytes = "tt_model_arena_bytes";
inline constexpr const char* kModelWeightBytes = "tt_model_weight_bytes";
inline constexpr const char* kModelNumInputs = "tt_model_num_inputs";
inline constexpr const char* kModelNumOutputs = "tt_model_num_outputs";
inline constexpr const char* kModelInputBytes = "tt_model_input_bytes";
inline constexpr const char* kModelOutputBytes = "tt_model_output_bytes";
inline constexpr const char* kModelCallsHash = "tt_model_calls_hash";

/// The entry points of a model built for a CUDA device (graph::export_model for a GPU target),
/// besides the size queries above (tt_model_arena_bytes ... tt_model_output_bytes):
///   void* tt_model_cuda_open(const void* weights, int32_t device, char* error, int64_t bytes);
///   int32_t tt_model_cuda_run(void* model, const void* const* inputs, void* const* outputs);
///   int32_t tt_model_cuda_run_device(void* model, const uint64_t* inputs,
///                                    const uint64_t* outputs);
///   int32_t tt_model_cuda_time(void* model, int32_t runs, double* host_to_host,
///                              double* device_resident, double* call_seconds);
///   int64_t tt_model_cuda_device_bytes(void* model);
///   int32_t tt_model_cuda_launches(void* model, int32_t mode, double* each, double* graph);
///   const char* tt_model_cuda_error(void* model);   void tt_model_cuda_close(void* model);
///   const char* tt_model_cuda_image(int64_t* bytes);  (the embedded runtime::CudaModelImage)
/// each forwarding to the runtime's tt_cuda_model_* (runtime/cuda_model.h).
inline constexpr const char* kModelCudaOpen = "tt_model_cuda_open";
inline constexpr const char* kModelCudaRun = "tt_model_cuda_run";
inline constexpr const char* kModelCudaRunDevice = "tt_model_cuda_run_device";
inline constexpr const char* kModelCudaTime = "tt_model_cuda_time";
inline constexpr const char* kModelCudaDeviceBytes = "tt_model_cuda_device_bytes";
inline constexpr const char* kModelCudaLaunches = "tt_model_cuda_launches";
inline constexpr const char* kModelCudaError = "tt_model_cuda_error";
inline constexpr const char* kModelCudaClose = "tt_model_cuda_close";
inline constexpr const char* kModelCudaImage = "tt_model_cuda_image";

/// One buffer passed to a kernel by the entry point.
struct EntryArg {
  enum class Kind : uint8_t {
    Input,   ///< inputs[index]
    Output,  ///< outputs[index]
    Arena,   ///< (char*)arena + index
    Weight,  ///< (const char*)weights + index
  };
  Kind kind = Kind::Arena;
  int64_t index = 0;
};

/// One kernel call: `function` (a kernel of the same library) with its buffer array `args`.
struct EntryCall {
  std::string function;
  std::vector<EntryArg> args;
};

/// What tt_model_run does and what the query functions return. tt_model_run makes `calls` in
/// order and returns the first non-zero kernel status (0 when every kernel succeeded).
struct ModelEntry {
  std::vector<EntryCall> calls;
  std::vector<int64_t> input_bytes;   ///< one per model input: its size in bytes
  std::vector<int64_t> output_bytes;  ///< one per model output
  int64_t arena_bytes = 0;            ///< the scratch the caller passes as `arena`
  int64_t weight_bytes = 0;           ///< the size of the constants passed as `weights`
};

/// A hash of `calls` (functions, argument kinds and indices, in order): what a library's
/// tt_model_calls_hash returns, so a plan read back from disk can be checked against the calls
/// compiled into the library before anything runs them.
int64_t calls_hash(const std::vector<EntryCall>& calls);

}  // namespace tensortune::codegen

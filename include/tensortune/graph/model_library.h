// SPDX-License-Identifier: Apache-2.0
// A compiled model on disk (what `tensortune compile-model` writes and `run-model` loads):
// DIR/model.so (every unique kernel, built with the database's best records, and the C entry
// point tt_model_run that makes the plan's calls), DIR/model.h (their C prototypes and how to
// call the model), DIR/model.json (the run plan) and DIR/weights.bin (the packed constants).
#pragma once

#include "tensortune/driver/compile.h"
#include "tensortune/graph/executor.h"
#include "tensortune/graph/graph.h"
#include "tensortune/graph/passes.h"
#include "tensortune/graph/run_plan.h"
#include "tensortune/runtime/cuda_model.h"

#include <memory>
#include <string>
#include <vector>

namespace tensortune::graph {

/// Reads an ONNX model (a regular file under support::kMaxModelFileBytes) and runs the standard
/// graph passes (optimize); `report`, when given, receives what they did. UserError naming the
/// file as import_onnx's. What compile-model, tune-model and the Python package start from.
Graph load_model(const std::string& path, PassReport* report = nullptr);

/// What export_model wrote.
struct ExportedModel {
  std::string dir;
  std::string library_path, header_path, plan_path, weights_path;
  RunPlan plan;
  MemoryPlan memory;
  /// One per unique kernel, with the schedule each got (record, adapted or default).
  std::vector<driver::Compiled> functions;
  /// For a CUDA target: the image libmodel.so embeds (its arena holds the activations, then the
  /// kernels' scratch), and why its kernels are CUDA C instead of PTX ("" when they are PTX).
  bool gpu = false;
  runtime::CudaModelImage image;
  std::string no_ptx_reason;

  /// Each function's name with where its schedule came from (Lookup::to_json): model.json's
  /// "kernels" and compile-model --json's "functions", which must agree.
  support::Json functions_json() const;
};

/// Partitions `graph` (optimized), builds each unique kernel through `compiler` as function
/// `kernel_<i>` of DIR/model.so, with the model's entry point (driver::ModelDecl) in the same
/// library, and writes the header, the plan and the weights. Creates DIR; UserError when a file
/// cannot be written. `runtime_archive`: libtt_runtime.a to link (see
/// codegen::find_runtime_archive; "" = where it finds one).
ExportedModel export_model(const Graph& graph,
                           driver::Compiler& compiler,
                           const std::string& dir,
                           const std::string& runtime_archive = "");

/// export_model for a CUDA target (export_model calls it for one): each unique kernel as CUDA C
/// (DIR/kernels/kernel_<i>.cu) and PTX (DIR/kernels/kernel_<i>.ptx, where NVRTC is available),
/// the launches of every call with their buffers resolved (model inputs and outputs, arena
/// offsets, weight offsets; each function's scratch buffers after the activations) embedded in
/// DIR/libmodel.so with the tt_model_cuda_* entry points (codegen/model_entry.h), and model.h,
/// model.json (the run plan, "device": "cuda") and weights.bin as for a CPU model.
ExportedModel export_gpu_model(const Graph& graph,
                               driver::Compiler& compiler,
                               const std::string& dir,
                               const std::string& runtime_archive = "");

/// A model folder loaded for running: the library opened with dlopen, its entry point resolved,
/// the weights read.
class LoadedModel {
 public:
  /// UserError naming the file for a missing folder or file, a malformed plan, weights of
  /// another size than the plan says, or a library without the entry point or whose entry
  /// point's sizes differ from the plan's.
  static LoadedModel load(const std::string& dir);

  const RunPlan& plan() const { return *plan_; }
  /// Runs the model through the library's C entry point (tt_model_run, which makes the plan's
  /// calls). UserError when the buffer counts differ from the plan's inputs and outputs;
  /// InternalError when a kernel fails. Not thread-safe: calls share one arena.
  void run(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) const;
  /// Runs the model's calls one by one from the host `runs` times (after one untimed run) and
  /// returns each call's median seconds, in plan order: where a model's time goes, with each
  /// kernel seeing the caches the previous ones left, unlike the tuner's isolated measurements.
  /// The outputs are those of run(). UserError as run(), or when `runs` < 1.
  std::vector<double> profile(const std::vector<const void*>& inputs,
                              const std::vector<void*>& outputs,
                              int runs) const;

  /// True for a model compiled for a CUDA target (run and profile then use the device).
  bool is_gpu() const { return gpu_ != nullptr; }
  /// A GPU model's times by the runtime: medians over `runs` after a warm-up, host to host
  /// (copies included) and device resident (CUDA events), each call's, the device memory the
  /// model allocated and the device's memory in use. UserError for a CPU model or `runs` < 1;
  /// InternalError (the driver's message) when the device fails.
  struct GpuTimes {
    double host_to_host = 0, device_resident = 0;
    std::vector<double> calls;
    int64_t device_bytes = 0;
    /// The device's memory in use with the model open (runtime::CudaDevice::memory_in_use):
    /// the process's whole footprint, context and code included, as nvidia-smi shows it.
    int64_t device_in_use = 0;
    /// Whether whole runs go as one CUDA graph (1) or launch by launch (0); -1 for a library
    /// built before graphs. With the automatic choice, each way's seconds per run as timed then.
    int cuda_graph = -1;
    double each_seconds = 0, graph_seconds = 0;
  };
  GpuTimes gpu_times(int runs) const;
  /// How a GPU model's runs queue their launches: 0 one by one, 1 one CUDA graph, 2 the faster
  /// of the two (what opening the model chose, unless TT_CUDA_GRAPH said). UserError for a CPU
  /// model or a library built before graphs.
  void set_gpu_launches(int mode) const;

 private:
  /// load() for a folder whose model.json says "device": "cuda", with weights.bin's contents;
  /// UserError naming the reason when no device can run it here.
  static LoadedModel load_gpu(const std::string& dir, RunPlan plan, const std::string& weights);
  struct CudaEntry;
  void run_gpu(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) const;
  using EntryFunction = int32_t (*)(void* const* inputs,
                                    void* const* outputs,
                                    void* arena,
                                    const void* weights);
  std::shared_ptr<void> library_;  // dlclose on the last copy
  std::shared_ptr<RunPlan> plan_;
  EntryFunction entry_ = nullptr;
  std::vector<KernelFunction> functions_;  ///< calls[i]'s kernel, for profile()
  std::shared_ptr<void> arena_;
  std::shared_ptr<CudaEntry> cuda_;  ///< a GPU model's entry points
  std::shared_ptr<void> gpu_;        ///< its tt_model_cuda_open handle (closed by the last copy)
};

}  // namespace tensortune::graph

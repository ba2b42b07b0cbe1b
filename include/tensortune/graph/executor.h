// SPDX-License-Identifier: Apache-2.0
// A model built for one target: its kernels compiled with the best records the database holds
// (driver::Compiler), a static memory plan that reuses activation buffers, and a run method.
#pragma once

#include "tensortune/driver/compile.h"
#include "tensortune/graph/graph.h"
#include "tensortune/graph/partition.h"
#include "tensortune/graph/run_plan.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tensortune::graph {

/// Where every intermediate value lives in one arena. A value's bytes are reused by later
/// values once its last reader has run; a kernel's output never overlaps its inputs.
struct MemoryPlan {
  int64_t arena_bytes = 0;       ///< the peak: the arena's size
  int64_t activation_bytes = 0;  ///< the sum of every intermediate value's size
  /// Storage value name -> byte offset in the arena (64-byte aligned).
  std::map<std::string, int64_t> offsets;
};

/// Plans the intermediates of `partition` (kernel outputs that are neither graph outputs nor
/// read by a graph output's view) in kernel order, first fit.
MemoryPlan plan_memory(const Graph& graph, const Partition& partition);

/// One kernel call of a built model.
struct BuiltKernel {
  Kernel kernel;
  te::Workload workload;
  /// The schedule chosen (record, adapted, default) and the compiled function.
  driver::Compiled compiled;
};

/// The prepacked buffers of a kernel function (empty when it has none) and its prepare function
/// (null until the kernel is built: the buffers then get their place, but not their contents).
struct KernelPrepack {
  std::vector<int64_t> bytes;
  KernelFunction prepare = nullptr;
};

/// The prepack of a lowered kernel; `prepare` may be null (see KernelPrepack).
KernelPrepack prepack_of(const ir::LoweredFunc& func, KernelFunction prepare);

/// The run plan of a partitioned model: one call per kernel, calling `function_names[i]` for
/// kernel i (built from the workload named `workload_names[i]`, the form of it that was built,
/// which profiles and errors show), intermediates placed by `memory`, and the constants the kernels
/// read packed into RunPlan::weights. A kernel with prepacked buffers (`prepacks[i]`, when given)
/// gets them in the weights too, once per distinct set of weights (appended to its call's
/// arguments), filled here by prepack_weights when the prepare functions are given (else zero until
/// it is called): a model's layout rewrites happen when it is compiled, never when it runs.
RunPlan make_run_plan(const Graph& graph,
                      const Partition& partition,
                      const MemoryPlan& memory,
                      const std::vector<std::string>& function_names,
                      const std::vector<std::string>& workload_names,
                      const std::vector<KernelPrepack>& prepacks = {});

/// The form zero-shot builds of a task no record covers: the F(4x4, 3x3) Winograd alternative of
/// a 3x3 conv with at least 196 output pixels (a 14x14 map), else the workload.
const te::Workload& zero_shot_form(const Task& task);

/// extract_tasks() with each task's workload replaced by the form to build: fastest_form() by
/// the stored bests of `compiler`'s database; for a task with no form stored there, by the
/// shipped logs' bests; without either, zero_shot_form() when the compiler builds zero-shot
/// schedules for a CPU, else the workload itself.
std::vector<Task> built_tasks(const Graph& graph,
                              const Partition& partition,
                              const driver::Compiler& compiler);

/// Fills the prepacked buffers of a plan from make_run_plan(..., prepacks) (with or without the
/// prepare functions) by running each kernel's prepare function (`prepacks[i].prepare`, set for
/// every kernel with prepacked buffers) on its call's weights, once per distinct buffer.
void prepack_weights(RunPlan& plan, const std::vector<KernelPrepack>& prepacks);

class Executable {
 public:
  /// Partitions `graph` (already optimized, see passes.h), compiles each unique kernel once
  /// with `compiler` (the database lookup happens there) and plans memory.
  static Executable build(Graph graph, driver::Compiler& compiler);

  const std::vector<TensorInfo>& inputs() const { return plan_.inputs; }
  const std::vector<TensorInfo>& outputs() const { return plan_.outputs; }
  const RunPlan& run_plan() const { return plan_; }
  const std::vector<BuiltKernel>& kernels() const { return kernels_; }
  const MemoryPlan& memory_plan() const { return memory_; }
  const Graph& graph() const { return graph_; }
  const Partition& partition() const { return partition_; }

  /// Runs the model on raw dense row-major buffers (one per input and output, in order).
  /// UserError when the counts differ; InternalError when a kernel reports failure. Not
  /// thread-safe: calls share one arena.
  void run(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) const;
  /// Runs on float32 data; UserError naming the input when its element count is wrong, or the
  /// output when it is not float32 (a bool mask, an int64 index).
  std::vector<std::vector<float>> run(const std::vector<std::vector<float>>& inputs) const;

 private:
  Graph graph_;
  Partition partition_;
  std::vector<BuiltKernel> kernels_;
  MemoryPlan memory_;
  RunPlan plan_;
  std::vector<KernelFunction> functions_;
  mutable AlignedBytes arena_;
};

}  // namespace tensortune::graph

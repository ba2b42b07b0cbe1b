// SPDX-License-Identifier: Apache-2.0
// Fusion and task extraction: a model's nodes grouped into kernels (an anchor such as a Conv
// with its element-wise epilogue: bias, relu, residual add, ...), each a te::Workload that the
// search tunes and the database keys; and the unique workloads of a model with their counts.
#pragma once

#include "tensortune/graph/graph.h"
#include "tensortune/te/workload.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tensortune::graph {

/// One fused kernel of a model.
struct Kernel {
  /// Indices into Graph::nodes, in execution order; the first is the anchor (or the first
  /// element-wise node of a purely element-wise kernel).
  std::vector<size_t> nodes;
  /// The values the kernel reads as buffers, in workload input order (activations and
  /// weights; one-element constants and parameters are folded into the code).
  std::vector<std::string> inputs;
  /// The value it writes.
  std::string output;
  /// "conv_add_relu": the op types of its nodes, lower-case, joined.
  std::string label;
};

/// A partitioned model: kernels in execution order, and the values that are views (Reshape,
/// Flatten, ... of another value: the same bytes, no kernel) with the value they alias.
struct Partition {
  std::vector<Kernel> kernels;
  std::map<std::string, std::string> views;
  /// The value whose bytes `value` uses (itself when not a view).
  std::string storage_of(const std::string& value) const;
};

/// Groups the nodes of an optimized graph (no Shape node or all-constant node left). An
/// element-wise node joins the kernel that produces one of its inputs when that input is read
/// by nobody else and is not a graph output (the latest such kernel, so its other inputs exist
/// already); otherwise it starts a kernel of its own. Views produce no kernel unless a graph
/// output is a view of a graph input or constant (then a copy kernel).
Partition partition(const Graph& graph);

/// The kernel as a workload: placeholders for its inputs (in Kernel::inputs order), the
/// nodes' tensor expressions, one output. Named "LABEL_SHAPE_DTYPE", e.g.
/// "conv_add_relu_1x8x16x16_float32", so equal layers share a key. Inputs that are graph
/// constants (weights) are the workload's constants, so their layout rewrites run once. With
/// `winograd` (only for a kernel with a Winograd form, kernel_winograd_tile() > 0) its anchor
/// conv is computed by Winograd's minimal filtering, named "LABEL_winogradM_SHAPE_DTYPE".
te::Workload kernel_workload(const Graph& graph, const Kernel& kernel, bool winograd = false);

/// The name kernel_workload gives the kernel ("LABEL_SHAPE_DTYPE"), without building it.
std::string kernel_name(const Graph& graph, const Kernel& kernel, bool winograd = false);

/// The tile m of the Winograd form F(m x m, 3 x 3) of the kernel's anchor, or 0 when it has none
/// (only float32 3x3 convolutions of stride 1 have one).
int64_t kernel_winograd_tile(const Graph& graph, const Kernel& kernel);

/// A unique workload of a model and how often it occurs: the unit of tuning.
struct Task {
  te::Workload workload;
  /// The kernels (indices into Partition::kernels) with this workload key, in order.
  std::vector<size_t> kernels;
  /// Other workloads computing the same kernels (the Winograd form of a 3x3 stride-1 conv):
  /// tuned beside `workload`, and compile-model builds whichever has the faster stored best.
  std::vector<te::Workload> alternatives;
  /// The output tile of the Winograd alternative (4 for F(4x4, 3x3), 2 for F(2x2, 3x3)); 0 when
  /// there is none.
  int64_t winograd_tile = 0;
  /// How often the workload runs in the model: the task scheduler's weight.
  int weight() const { return static_cast<int>(kernels.size()); }
};

/// The form of `task` to build: the alternative whose stored best (`best_seconds`, 0 = none) is
/// the fastest, when it beats the workload's (a stored best beats none), else the workload.
/// `seconds`, when given, receives the chosen form's best (0 = none).
const te::Workload& fastest_form(const Task& task,
                                 const std::function<double(const te::Workload&)>& best_seconds,
                                 double* seconds = nullptr);

/// The unique workloads among `partition`'s kernels, in first-occurrence order. Everything that
/// builds one function per unique kernel (Executable, export_model) goes through it, by way of
/// built_tasks (executor.h), which picks each task's form.
std::vector<Task> extract_tasks(const Graph& graph, const Partition& partition);

}  // namespace tensortune::graph

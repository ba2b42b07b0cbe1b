// SPDX-License-Identifier: Apache-2.0
// Fusion of element-wise chains into their producers, the kernels as te workloads, and task
// extraction (unique workload keys with occurrence counts).
#include "tensortune/graph/partition.h"

#include "graph/op_lowering.h"
#include "graph/op_util.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace tensortune::graph {

std::string Partition::storage_of(const std::string& value) const {
  std::string v = value;
  for (auto it = views.find(v); it != views.end(); it = views.find(v))
    v = it->second;
  return v;
}

namespace {

std::string lower_case(const std::string& op) {
  std::string r;
  for (char c : op)
    r += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (r == "globalaveragepool")
    return "gap";
  if (r == "averagepool")
    return "avgpool";
  if (r == "batchnormalization")
    return "bn";
  if (r == "layernormalization")
    return "layernorm";
  return r;
}

bool is_graph_output(const Graph& g, const std::string& v) {
  return std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end();
}

/// Value -> the kernel (index) that writes it.
using Writers = std::map<std::string, size_t>;

/// The kernel an element-wise node may join: the latest kernel producing one of its inputs
/// that nobody else reads; -1 when none.
int fusion_target(const Graph& g,
                  const Node& node,
                  const Partition& p,
                  const Writers& writers,
                  const Writers& made_by) {
  int best = -1;
  for (const std::string& in : node.inputs) {
    if (in.empty())
      continue;
    auto w = writers.find(in);
    if (w == writers.end())
      continue;
    const Kernel& k = p.kernels[w->second];
    if (k.output != in || g.use_count(in) != 1 || is_graph_output(g, in))
      continue;
    best = std::max(best, static_cast<int>(w->second));
  }
  // Every other input must exist before that kernel runs.
  for (const std::string& in : node.inputs) {
    auto m = made_by.find(in.empty() ? in : p.storage_of(in));
    if (m != made_by.end() && static_cast<int>(m->second) > best)
      return -1;
  }
  return best;
}

}  // namespace

Partition partition(const Graph& graph) {
  Partition p;
  Writers writers;  // kernel outputs
  Writers made_by;  // every value computed by a kernel
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    detail::OpClass c = detail::op_class(node.op);
    TT_CHECK(c != detail::OpClass::ShapeOf) << node.describe() << " survived constant folding";
    if (c == detail::OpClass::View) {
      p.views[node.outputs[0]] = node.inputs[0];
      continue;
    }
    int target =
        c == detail::OpClass::Elementwise ? fusion_target(graph, node, p, writers, made_by) : -1;
    if (target >= 0) {
      Kernel& k = p.kernels[static_cast<size_t>(target)];
      k.nodes.push_back(i);
      writers.erase(k.output);
      k.output = node.outputs[0];
      k.label += "_" + lower_case(node.op);
      writers[k.output] = static_cast<size_t>(target);
      made_by[k.output] = static_cast<size_t>(target);
      continue;
    }
    Kernel k;
    k.nodes = {i};
    k.output = node.outputs[0];
    k.label = lower_case(node.op);
    writers[k.output] = p.kernels.size();
    made_by[k.output] = p.kernels.size();
    p.kernels.push_back(k);
  }
  // A graph output that is a view of an input or a constant needs a kernel that copies it.
  for (const std::string& out : graph.outputs) {
    if (!p.views.count(out))
      continue;
    std::string root = p.storage_of(out);
    if (graph.producer(root) >= 0)
      continue;
    Kernel k;
    k.nodes = {static_cast<size_t>(graph.producer(out))};
    k.output = out;
    k.label = "copy";
    p.views.erase(out);
    p.kernels.push_back(k);
  }
  // Inputs: every value read by a kernel's nodes that it does not compute itself.
  for (Kernel& k : p.kernels) {
    std::vector<std::string> produced;
    for (size_t n : k.nodes) {
      const Node& node = graph.nodes[n];
      for (size_t j = 0; j < node.inputs.size(); ++j) {
        const std::string& in = node.inputs[j];
        if (detail::input_is_parameter(graph, node, j))
          continue;
        if (std::find(produced.begin(), produced.end(), in) != produced.end())
          continue;
        if (std::find(k.inputs.begin(), k.inputs.end(), in) == k.inputs.end()) {
          k.inputs.push_back(in);
        }
      }
      produced.push_back(node.outputs[0]);
    }
  }
  return p;
}

int64_t kernel_winograd_tile(const Graph& graph, const Kernel& kernel) {
  return kernel.nodes.empty() ? 0 : detail::winograd_tile(graph, graph.nodes[kernel.nodes[0]]);
}

te::Workload kernel_workload(const Graph& graph, const Kernel& kernel, bool winograd) {
  const int64_t tile = winograd ? kernel_winograd_tile(graph, kernel) : 0;
  TT_CHECK(!winograd || tile > 0) << "kernel " << kernel.label << " has no Winograd form";
  std::map<std::string, te::Tensor> tensors;
  std::vector<te::Tensor> inputs;
  std::vector<te::Tensor> constants;  // weights: their layout rewrites run at compile time
  for (size_t i = 0; i < kernel.inputs.size(); ++i) {
    const Value& v = graph.value(kernel.inputs[i]);
    te::Tensor t = te::placeholder(v.shape, v.dtype, "in" + std::to_string(i));
    tensors[v.name] = t;
    inputs.push_back(t);
    if (v.is_constant())
      constants.push_back(t);
  }
  te::Tensor last;
  for (size_t j = 0; j < kernel.nodes.size(); ++j) {
    const Node& node = graph.nodes[kernel.nodes[j]];
    auto input = [&](size_t i) -> te::Tensor {
      auto it = tensors.find(node.inputs.at(i));
      TT_CHECK(it != tensors.end()) << node.describe() << ": input '" << node.inputs.at(i)
                                    << "' is not available to kernel " << kernel.label;
      return it->second;
    };
    last = detail::lower_node(graph, node, input, "t" + std::to_string(j), j == 0 ? tile : 0);
    tensors[node.outputs[0]] = last;
  }
  return te::Workload(kernel_name(graph, kernel, winograd), inputs, {last}, constants);
}

std::string kernel_name(const Graph& graph, const Kernel& kernel, bool winograd) {
  const Value& out = graph.value(kernel.output);
  std::string name = kernel.label + "_";
  if (winograd) {
    name += "winograd" + std::to_string(kernel_winograd_tile(graph, kernel)) + "_";
  }
  for (size_t d = 0; d < out.shape.size(); ++d) {
    name += (d ? "x" : "") + std::to_string(out.shape[d]);
  }
  return name + "_" + out.dtype.to_string();
}

std::vector<Task> extract_tasks(const Graph& graph, const Partition& partition) {
  std::vector<Task> tasks;
  std::map<std::string, size_t> by_key;
  // Every kernel is tried before any error is raised, so that a model's unsupported node
  // configurations (a cubic Resize, a Softmax over an inner axis, ...) come in one message.
  std::vector<std::string> problems;
  for (size_t i = 0; i < partition.kernels.size(); ++i) {
    std::optional<te::Workload> form;
    try {
      form.emplace(kernel_workload(graph, partition.kernels[i]));
    } catch (const UserError& e) {
      problems.push_back(e.what());
      continue;
    }
    const te::Workload& w = *form;
    auto it = by_key.find(w.key());
    if (it != by_key.end()) {
      tasks[it->second].kernels.push_back(i);
      continue;
    }
    by_key[w.key()] = tasks.size();
    tasks.push_back(Task{w, {i}, {}});
    if (const int64_t tile = kernel_winograd_tile(graph, partition.kernels[i]); tile > 0) {
      tasks.back().alternatives.push_back(kernel_workload(graph, partition.kernels[i], true));
      tasks.back().winograd_tile = tile;
    }
  }
  if (problems.size() == 1)
    throw UserError(problems[0]);
  std::string all;
  for (const std::string& p : problems)
    all += "\n  " + p;
  TT_USER_CHECK(problems.empty()) << "model '" << graph.name << "': " << problems.size()
                                  << " node(s) cannot be compiled:" << all;
  return tasks;
}

const te::Workload& fastest_form(const Task& task,
                                 const std::function<double(const te::Workload&)>& best_seconds,
                                 double* seconds) {
  const te::Workload* chosen = &task.workload;
  double fastest = best_seconds(task.workload);
  for (const te::Workload& w : task.alternatives) {
    const double s = best_seconds(w);
    if (s > 0 && (fastest <= 0 || s < fastest)) {
      chosen = &w;
      fastest = s;
    }
  }
  if (seconds != nullptr)
    *seconds = fastest;
  return *chosen;
}

}  // namespace tensortune::graph

// SPDX-License-Identifier: Apache-2.0
// Building a model (one compiled kernel per unique workload), the first-fit memory plan, and
// running the kernels in order over the arena, the weights and the caller's buffers.
#include "tensortune/graph/executor.h"

#include "graph/op_util.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace tensortune::graph {

namespace {

constexpr int64_t kAlign = 64;

int64_t round_up(int64_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

int64_t bytes_of(const Value& v) {
  return round_up(v.numel() * v.dtype.bytes());
}

/// Appends `bytes` (zeros) to the plan's weights at a cache-line offset and returns the offset.
int64_t append_weight(RunPlan& plan, int64_t bytes) {
  int64_t offset = static_cast<int64_t>(plan.weights.size());
  plan.weights.resize(static_cast<size_t>(round_up(offset + bytes)));
  return offset;
}

/// Storage values bound to the caller's output buffers: each graph output's storage.
std::set<std::string> output_storage(const Graph& g, const Partition& p) {
  std::set<std::string> r;
  for (const std::string& o : g.outputs)
    r.insert(p.storage_of(o));
  return r;
}

}  // namespace

MemoryPlan plan_memory(const Graph& graph, const Partition& partition) {
  MemoryPlan plan;
  std::set<std::string> bound = output_storage(graph, partition);
  // Last kernel reading each storage value.
  std::map<std::string, size_t> last_use;
  for (size_t t = 0; t < partition.kernels.size(); ++t) {
    for (const std::string& in : partition.kernels[t].inputs) {
      last_use[partition.storage_of(in)] = t;
    }
  }
  struct Live {
    int64_t offset, size;
    size_t end;
  };
  std::vector<Live> live;  // sorted by offset
  for (size_t t = 0; t < partition.kernels.size(); ++t) {
    const std::string& out = partition.kernels[t].output;
    if (bound.count(out))
      continue;
    live.erase(std::remove_if(live.begin(), live.end(), [&](const Live& l) { return l.end < t; }),
               live.end());
    int64_t size = bytes_of(graph.value(out));
    plan.activation_bytes += size;
    int64_t offset = 0;
    for (const Live& l : live) {
      if (l.offset - offset >= size)
        break;
      offset = std::max(offset, l.offset + l.size);
    }
    auto it = last_use.find(out);
    size_t end = it == last_use.end() ? t : it->second;
    live.push_back(Live{offset, size, end});
    std::sort(live.begin(), live.end(),
              [](const Live& a, const Live& b) { return a.offset < b.offset; });
    plan.offsets[out] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
  }
  return plan;
}

KernelPrepack prepack_of(const ir::LoweredFunc& func, KernelFunction prepare) {
  KernelPrepack p;
  for (const ir::Buffer& b : func.prepacked)
    p.bytes.push_back(b.num_elements() * b.dtype().bytes());
  p.prepare = p.bytes.empty() ? nullptr : prepare;
  return p;
}

namespace {

using PrepackKey = std::pair<std::string, std::vector<int64_t>>;

/// Appends `call`'s prepacked buffers to the plan's weights (zero until filled), reusing the
/// buffers of an earlier call of the same function on the same weights.
void add_prepacked(RunPlan& plan,
                   PlanCall& call,
                   const KernelPrepack& prepack,
                   std::map<PrepackKey, std::vector<int64_t>>& done) {
  std::vector<int64_t> weight_args;
  for (const PlanArg& a : call.args) {
    weight_args.push_back(a.kind == PlanArg::Kind::Weight ? a.index : -1);
  }
  auto key = std::make_pair(call.function, weight_args);
  auto it = done.find(key);
  if (it == done.end()) {
    std::vector<int64_t> offsets;
    for (int64_t bytes : prepack.bytes)
      offsets.push_back(append_weight(plan, bytes));
    it = done.emplace(key, offsets).first;
  }
  for (int64_t o : it->second)
    call.args.push_back(PlanArg{PlanArg::Kind::Weight, o});
}

/// Runs `prepack.prepare` for `call` (its last prepack.bytes.size() arguments are the prepacked
/// buffers), unless buffers at the same place were filled already: the call's constant
/// arguments are passed, its activations are not (null).
void fill_prepacked(RunPlan& plan,
                    const PlanCall& call,
                    const KernelPrepack& prepack,
                    std::set<int64_t>& filled) {
  size_t first = call.args.size() - prepack.bytes.size();
  if (!filled.insert(call.args.at(first).index).second)
    return;
  std::vector<void*> args;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const PlanArg& a = call.args[i];
    bool constant = a.kind == PlanArg::Kind::Weight;
    TT_CHECK(i < first || constant) << call.function << ": a prepacked buffer is not a weight";
    args.push_back(constant ? plan.weights.data() + a.index : nullptr);
  }
  int32_t rc = prepack.prepare(args.data());
  TT_CHECK(rc == 0) << "prepare of " << call.function << " (" << call.workload << ") returned "
                    << rc;
}

}  // namespace

void prepack_weights(RunPlan& plan, const std::vector<KernelPrepack>& prepacks) {
  TT_CHECK(prepacks.size() == plan.calls.size()) << "one prepack per call";
  std::set<int64_t> filled;
  for (size_t k = 0; k < prepacks.size(); ++k) {
    if (prepacks[k].bytes.empty())
      continue;
    TT_CHECK(prepacks[k].prepare != nullptr) << plan.calls[k].function << ": no prepare function";
    fill_prepacked(plan, plan.calls[k], prepacks[k], filled);
  }
}

RunPlan make_run_plan(const Graph& graph,
                      const Partition& partition,
                      const MemoryPlan& memory,
                      const std::vector<std::string>& function_names,
                      const std::vector<std::string>& workload_names,
                      const std::vector<KernelPrepack>& prepacks) {
  TT_CHECK(function_names.size() == partition.kernels.size() &&
           workload_names.size() == partition.kernels.size())
      << "one function and workload name per kernel";
  TT_CHECK(prepacks.empty() || prepacks.size() == partition.kernels.size())
      << "one prepack per kernel";
  RunPlan plan;
  plan.arena_bytes = memory.arena_bytes;
  plan.activation_bytes = memory.activation_bytes;
  std::map<std::string, PlanArg> where;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const Value& v = graph.value(graph.inputs[i]);
    plan.inputs.push_back(TensorInfo{v.name, v.dtype, v.shape});
    where[v.name] = PlanArg{PlanArg::Kind::Input, static_cast<int64_t>(i)};
  }
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    const Value& v = graph.value(graph.outputs[i]);
    plan.outputs.push_back(TensorInfo{v.name, v.dtype, v.shape});
    std::string s = partition.storage_of(v.name);
    TT_USER_CHECK(!where.count(s) || where[s].kind != PlanArg::Kind::Output)
        << "model '" << graph.name << "': outputs '" << v.name
        << "' and another output share their storage (not supported)";
    where[s] = PlanArg{PlanArg::Kind::Output, static_cast<int64_t>(i)};
  }
  for (const auto& [name, offset] : memory.offsets) {
    where[name] = PlanArg{PlanArg::Kind::Arena, offset};
  }
  auto arg_of = [&](const std::string& value) {
    std::string s = partition.storage_of(value);
    auto it = where.find(s);
    if (it != where.end())
      return it->second;
    const Value& v = graph.value(s);
    TT_CHECK(v.is_constant()) << "value '" << s << "' has no storage";
    TT_USER_CHECK(detail::constant_bytes_supported(v.dtype))
        << "constant '" << s << "' of type " << v.dtype.to_string() << " cannot be a kernel buffer";
    std::vector<uint8_t> data = detail::constant_bytes(v);
    int64_t offset = append_weight(plan, static_cast<int64_t>(data.size()));
    std::memcpy(plan.weights.data() + offset, data.data(), data.size());
    PlanArg a{PlanArg::Kind::Weight, offset};
    where[s] = a;
    return a;
  };
  for (size_t k = 0; k < partition.kernels.size(); ++k) {
    const Kernel& kernel = partition.kernels[k];
    PlanCall call;
    call.function = function_names[k];
    call.workload = workload_names[k];
    for (const std::string& in : kernel.inputs)
      call.args.push_back(arg_of(in));
    call.args.push_back(arg_of(kernel.output));
    plan.calls.push_back(std::move(call));
  }
  std::map<PrepackKey, std::vector<int64_t>> prepacked;
  bool prepare = false;
  for (size_t k = 0; k < prepacks.size(); ++k) {
    if (!prepacks[k].bytes.empty()) {
      add_prepacked(plan, plan.calls[k], prepacks[k], prepacked);
      prepare = prepare || prepacks[k].prepare != nullptr;
    }
  }
  if (prepare)
    prepack_weights(plan, prepacks);
  return plan;
}

std::vector<Task> built_tasks(const Graph& graph,
                              const Partition& partition,
                              const driver::Compiler& compiler) {
  std::vector<Task> tasks = extract_tasks(graph, partition);
  const auto stored = [&](const te::Workload& w) {
    return compiler.stored_best_seconds(w);
  };
  const auto shipped = [&](const te::Workload& w) {
    return compiler.shipped_best_seconds(w);
  };
  // The user's records choose a kernel's form; without any, the shipped logs do (their records
  // are what the kernel will be built from), so a shipped Winograd record is used too; without
  // those, zero-shot's rule (zero_shot_form).
  for (Task& t : tasks) {
    double own_seconds = 0;
    const te::Workload& own = fastest_form(t, stored, &own_seconds);
    if (own_seconds > 0) {
      t.workload = own;
      continue;
    }
    double shipped_seconds = 0;
    const te::Workload& from_shipped = fastest_form(t, shipped, &shipped_seconds);
    if (shipped_seconds > 0) {
      t.workload = from_shipped;
    } else if (compiler.zero_shot_enabled() && !compiler.target().is_gpu()) {
      t.workload = zero_shot_form(t);
    }
  }
  return tasks;
}

const te::Workload& zero_shot_form(const Task& task) {
  // The Winograd form's transformed product is a batch of GEMMs with one row per output tile: with
  // few tiles its rows fill no register tile, and the transforms cost more than the multiplications
  // saved. Zero-shot picks inside ResNet-18 on a Zen 5, against each layer's tuned best: F(4x4,
  // 3x3) 1.0-1.1x on 56x56 maps, 1.3-1.5x on 28x28 and 1.4-1.6x on 14x14, where the direct picks
  // run 1.6-2.2x; F(2x2, 3x3) on 7x7 maps 1.3-2.1x, direct 1.1-1.6x.
  constexpr int64_t kMinPixels = 14 * 14;
  if (task.alternatives.empty() || task.winograd_tile != 4)
    return task.workload;
  const std::vector<int64_t>& shape = task.workload.outputs().at(0).shape();
  if (shape.size() != 4)
    return task.workload;
  return shape[0] * shape[2] * shape[3] >= kMinPixels ? task.alternatives.front() : task.workload;
}

Executable Executable::build(Graph graph, driver::Compiler& compiler) {
  graph.validate();
  Executable e;
  e.graph_ = std::move(graph);
  e.partition_ = graph::partition(e.graph_);
  const std::vector<Kernel>& kernels = e.partition_.kernels;
  std::vector<Task> tasks = built_tasks(e.graph_, e.partition_, compiler);
  std::vector<driver::Compiled> compiled;  // one per task
  std::vector<size_t> task_of(kernels.size());
  for (size_t t = 0; t < tasks.size(); ++t) {
    compiled.push_back(compiler.compile(tasks[t].workload));
    for (size_t k : tasks[t].kernels)
      task_of[k] = t;
  }
  std::vector<std::string> names, workloads;
  std::vector<KernelPrepack> prepacks;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const driver::Compiled& c = compiled[task_of[k]];
    e.kernels_.push_back(BuiltKernel{kernels[k], tasks[task_of[k]].workload, c});
    e.functions_.push_back(c.artifact.function());
    names.push_back(c.func.name);
    workloads.push_back(tasks[task_of[k]].workload.name());
    prepacks.push_back(prepack_of(c.func, c.artifact.prepare_function()));
  }
  e.memory_ = plan_memory(e.graph_, e.partition_);
  e.plan_ = make_run_plan(e.graph_, e.partition_, e.memory_, names, workloads, prepacks);
  e.arena_.resize(static_cast<size_t>(e.memory_.arena_bytes));
  return e;
}

void Executable::run(const std::vector<const void*>& inputs,
                     const std::vector<void*>& outputs) const {
  plan_.execute(functions_, inputs, outputs, arena_.data());
}

std::vector<std::vector<float>> Executable::run(
    const std::vector<std::vector<float>>& inputs) const {
  const std::vector<TensorInfo>& infos = plan_.inputs;
  TT_USER_CHECK(inputs.size() == infos.size())
      << "model '" << graph_.name << "' takes " << infos.size() << " input(s), got "
      << inputs.size();
  std::vector<const void*> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    TT_USER_CHECK(static_cast<int64_t>(inputs[i].size()) == infos[i].numel() &&
                  infos[i].dtype == ir::DataType::float32())
        << "input '" << infos[i].name << "' needs " << infos[i].numel() << " "
        << infos[i].dtype.to_string() << " elements (shape " << detail::shape_text(infos[i].shape)
        << "), got " << inputs[i].size() << " float32";
    in.push_back(inputs[i].data());
  }
  std::vector<std::vector<float>> out;
  std::vector<void*> out_ptrs;
  for (const TensorInfo& o : plan_.outputs) {
    // Float buffers: an int64 output would overflow its buffer.
    TT_USER_CHECK(o.dtype == ir::DataType::float32())
        << "output '" << o.name << "' is " << o.dtype.to_string() << " (float32 only here)";
    out.emplace_back(static_cast<size_t>(o.numel()));
  }
  for (auto& o : out)
    out_ptrs.push_back(o.data());
  run(in, out_ptrs);
  return out;
}

}  // namespace tensortune::graph

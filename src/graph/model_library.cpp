// SPDX-License-Identifier: Apache-2.0
// Writing a compiled model folder (library, header, plan, weights) and loading it back.
#include "tensortune/graph/model_library.h"

#include "graph/model_folder.h"
#include "tensortune/graph/onnx_import.h"
#include "tensortune/support/error.h"
#include "tensortune/support/file.h"
#include "tensortune/support/stats.h"

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace tensortune::graph {

Graph load_model(const std::string& path, PassReport* report) {
  // Checked here, before the importer reads it: a device or FIFO never ends, and protobuf
  // refuses messages over 2 GiB anyway.
  support::check_regular_file(path, support::kMaxModelFileBytes, "model");
  Graph g = import_onnx(path);
  PassReport r = optimize(g);
  if (report != nullptr) {
    *report = r;
  }
  return g;
}
namespace {

void write_file(const std::string& path, const void* data, size_t bytes) {
  support::write_file_atomically(path, std::string_view(static_cast<const char*>(data), bytes),
                                 "compile-model");
}

std::string read_file(const std::string& path, int64_t max_bytes) {
  return support::read_regular_file(path, max_bytes, "model file");
}

/// The function `name` of the library at `path`; UserError naming both when it is missing.
template <class F = KernelFunction>
F symbol(void* library, const std::string& path, const std::string& name) {
  void* sym = ::dlsym(library, name.c_str());
  TT_USER_CHECK(sym != nullptr) << "'" << path << "' has no function '" << name << "'";
  return reinterpret_cast<F>(sym);
}

/// UserError unless the entry point of the library at `path` has the sizes of `plan` (read from
/// `plan_path`): the library and the plan must come from one compile-model run.

void check_entry_point(void* library,
                       const std::string& path,
                       const RunPlan& plan,
                       int64_t weight_bytes,
                       const std::string& plan_path) {
  using Size = int64_t (*)();
  using Count = int32_t (*)();
  using SizeOf = int64_t (*)(int32_t);
  bool match = symbol<Size>(library, path, codegen::kModelWeightBytes)() == weight_bytes &&
               symbol<Size>(library, path, codegen::kModelArenaBytes)() == plan.arena_bytes &&
               symbol<Count>(library, path, codegen::kModelNumInputs)() ==
                   static_cast<int32_t>(plan.inputs.size()) &&
               symbol<Count>(library, path, codegen::kModelNumOutputs)() ==
                   static_cast<int32_t>(plan.outputs.size());
  auto input_bytes = symbol<SizeOf>(library, path, codegen::kModelInputBytes);
  auto output_bytes = symbol<SizeOf>(library, path, codegen::kModelOutputBytes);
  for (size_t i = 0; i < plan.inputs.size(); ++i)
    match = match && input_bytes(static_cast<int32_t>(i)) == plan.inputs[i].bytes();
  for (size_t i = 0; i < plan.outputs.size(); ++i)
    match = match && output_bytes(static_cast<int32_t>(i)) == plan.outputs[i].bytes();
  TT_USER_CHECK(match) << "'" << path << "' and '" << plan_path
                       << "' do not belong together (their sizes differ): compile the model again";
  // The calls too: the plan's are the ones --profile makes one by one, so a plan that is not the
  // library's (edited, or from another build of the model) would call kernels with wrong buffers.
  void* hash = dlsym(library, codegen::kModelCallsHash);
  TT_USER_CHECK(hash != nullptr) << "'" << path << "' predates the check of its calls against '"
                                 << plan_path << "': compile the model again";
  TT_USER_CHECK(reinterpret_cast<Size>(hash)() ==
                codegen::calls_hash(detail::model_decl(plan).entry.calls))
      << "'" << path << "' and '" << plan_path
      << "' do not belong together (their kernel calls differ): compile the model again";
}

}  // namespace

namespace detail {

Partition model_partition(const Graph& graph) {
  graph.validate();
  // run-model and the callers of model.h exchange float32 arrays: a float64 model used to
  // compile and then fail when run. Refused here, before anything is written.
  for (const auto* names : {&graph.inputs, &graph.outputs}) {
    for (const std::string& name : *names) {
      const Value& v = graph.value(name);
      TT_USER_CHECK(v.dtype == ir::DataType::float32())
          << "model " << (names == &graph.inputs ? "input" : "output") << " '" << name << "' is "
          << v.dtype.to_string()
          << "; compiled models take and return float32 tensors only (convert the model to "
             "float32)";
    }
  }
  Partition partition = graph::partition(graph);
  TT_USER_CHECK(!partition.kernels.empty())
      << "model: no kernel to build: every output is a constant or one of the model's inputs";
  return partition;
}

std::vector<driver::ExportItem> model_items(const Graph& graph,
                                            const Partition& partition,
                                            const driver::Compiler& compiler,
                                            std::vector<size_t>& item_of) {
  std::vector<driver::ExportItem> items;
  item_of.assign(partition.kernels.size(), 0);
  for (const Task& task : built_tasks(graph, partition, compiler)) {
    for (size_t k : task.kernels)
      item_of[k] = items.size();
    items.push_back(
        driver::ExportItem{task.workload, "", "kernel_" + std::to_string(items.size())});
  }
  return items;
}

/// The entry point of `plan` and what model.h documents of it.
driver::ModelDecl model_decl(const RunPlan& plan) {
  driver::ModelDecl decl;
  codegen::ModelEntry& e = decl.entry;
  for (const TensorInfo& t : plan.inputs) {
    decl.inputs.push_back(driver::TensorDecl{t.name, t.dtype, t.shape});
    e.input_bytes.push_back(t.bytes());
  }
  for (const TensorInfo& t : plan.outputs) {
    decl.outputs.push_back(driver::TensorDecl{t.name, t.dtype, t.shape});
    e.output_bytes.push_back(t.bytes());
  }
  e.arena_bytes = plan.arena_bytes;
  e.weight_bytes = static_cast<int64_t>(plan.weights.size());
  for (const PlanCall& c : plan.calls) {
    codegen::EntryCall call{c.function, {}};
    for (const PlanArg& a : c.args) {
      codegen::EntryArg::Kind kind = codegen::EntryArg::Kind::Arena;
      switch (a.kind) {
        case PlanArg::Kind::Input:
          kind = codegen::EntryArg::Kind::Input;
          break;
        case PlanArg::Kind::Output:
          kind = codegen::EntryArg::Kind::Output;
          break;
        case PlanArg::Kind::Arena:
          kind = codegen::EntryArg::Kind::Arena;
          break;
        case PlanArg::Kind::Weight:
          kind = codegen::EntryArg::Kind::Weight;
          break;
      }
      call.args.push_back(codegen::EntryArg{kind, a.index});
    }
    e.calls.push_back(std::move(call));
  }
  decl.weights_file = "weights.bin";
  return decl;
}

std::vector<std::string> distinct_names(const std::vector<driver::ExportItem>& items) {
  std::vector<te::NamedKey> named;
  for (const driver::ExportItem& item : items)
    named.push_back({item.workload.name(), item.workload.key()});
  return te::distinct_names(named);
}

std::shared_ptr<void> open_library(const std::string& path) {
  const std::string absolute = std::filesystem::absolute(path).string();
  void* handle = ::dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  TT_USER_CHECK(handle != nullptr) << "cannot load '" << absolute << "': " << ::dlerror();
  return std::shared_ptr<void>(handle, [](void* h) { ::dlclose(h); });
}

void write_model_file(const std::string& path, const void* data, size_t bytes) {
  write_file(path, data, bytes);
}

void write_plan(const ExportedModel& m, support::Json plan_json) {
  plan_json["kernels"] = m.functions_json();
  const std::string text = plan_json.dump(1) + "\n";
  write_file(m.plan_path, text.data(), text.size());
}

}  // namespace detail

support::Json ExportedModel::functions_json() const {
  support::Json list = support::Json::array();
  for (const driver::Compiled& c : functions) {
    support::Json f = c.lookup.to_json();
    f["name"] = c.func.name;
    list.push_back(std::move(f));
  }
  return list;
}

ExportedModel export_model(const Graph& graph,
                           driver::Compiler& compiler,
                           const std::string& dir,
                           const std::string& runtime_archive) {
  if (compiler.target().is_gpu())
    return export_gpu_model(graph, compiler, dir, runtime_archive);
  Partition partition = detail::model_partition(graph);
  std::vector<size_t> item_of;  // the function each kernel calls
  std::vector<driver::ExportItem> items = detail::model_items(graph, partition, compiler, item_of);
  ExportedModel m;
  m.dir = dir;
  m.memory = plan_memory(graph, partition);
  // The library's entry point makes the plan's calls, so the plan is made from the lowered
  // kernels before the library is written: the prepacked weights get their places then, and
  // their contents once the library's prepare functions can run.
  std::vector<driver::Compiled> lowered = compiler.lower_items(items);
  std::vector<std::string> names, workloads;
  std::vector<KernelPrepack> prepacks;
  const std::vector<std::string> shown = detail::distinct_names(items);
  for (size_t k = 0; k < partition.kernels.size(); ++k) {
    names.push_back(items[item_of[k]].name);
    workloads.push_back(shown[item_of[k]]);
    prepacks.push_back(prepack_of(lowered[item_of[k]].func, nullptr));
  }
  m.plan = make_run_plan(graph, partition, m.memory, names, workloads, prepacks);
  for (size_t k = 0; k < partition.kernels.size(); ++k) {
    m.plan.calls[k].flop = items[item_of[k]].workload.flop_count();
    m.plan.calls[k].schedule = lowered[item_of[k]].lookup.describe();
  }
  driver::ModelDecl decl = detail::model_decl(m.plan);
  driver::ExportedLibrary lib =
      compiler.write_library(items, std::move(lowered), dir, "model", runtime_archive, &decl);
  m.library_path = lib.library_path;
  m.header_path = lib.header_path;
  m.functions = lib.functions;
  std::shared_ptr<void> library;
  for (size_t k = 0; k < prepacks.size(); ++k) {
    if (prepacks[k].bytes.empty())
      continue;
    if (!library)
      library = detail::open_library(lib.library_path);
    prepacks[k].prepare =
        symbol(library.get(), lib.library_path, codegen::prepare_function_name(names[k]));
  }
  if (library)
    prepack_weights(m.plan, prepacks);
  m.plan_path = dir + "/model.json";
  m.weights_path = dir + "/" + decl.weights_file;
  // Where each kernel's schedule came from travels with the model, so a user of the exported
  // folder sees which kernels still run untuned; load() ignores the key.
  detail::write_plan(m, m.plan.to_json());
  write_file(m.weights_path, m.plan.weights.data(), m.plan.weights.size());
  return m;
}

LoadedModel LoadedModel::load(const std::string& dir) {
  TT_USER_CHECK(std::filesystem::is_directory(dir))
      << "'" << dir << "' is not a compiled model folder (run tensortune compile-model first)";
  LoadedModel m;
  const std::string plan_path = dir + "/model.json";
  RunPlan plan;
  int64_t expected = 0;
  bool gpu = false;
  try {
    // A plan lists tensors and calls, megabytes for the largest models: 256 MiB is far beyond.
    support::Json json = support::Json::parse(read_file(plan_path, int64_t{256} << 20));
    plan = RunPlan::from_json(json);
    expected = json.at("weight_bytes").as_int("weight_bytes");
    gpu = json.contains("device") && json.at("device").as_string("device") == "cuda";
  } catch (const UserError& e) {
    TT_USER_CHECK(false) << "'" << plan_path << "': " << e.what();
  }
  const std::string weights_path = dir + "/weights.bin";
  const int64_t size = support::check_regular_file(weights_path, INT64_MAX, "model file");
  TT_USER_CHECK(size == expected) << "'" << weights_path << "' has " << size
                                  << " bytes, the plan expects " << expected;
  std::string weights = read_file(weights_path, expected);
  if (gpu)
    return load_gpu(dir, std::move(plan), weights);
  plan.weights.assign(weights.begin(), weights.end());
  // libmodel.so; a folder written before libraries took the lib prefix has only model.so.
  std::string lib_path = dir + "/libmodel.so";
  if (std::error_code ec; !std::filesystem::exists(lib_path, ec)) {
    lib_path = dir + "/model.so";
  }
  m.library_ = detail::open_library(lib_path);
  m.entry_ = symbol<EntryFunction>(m.library_.get(), lib_path, codegen::kModelRun);
  check_entry_point(m.library_.get(), lib_path, plan, expected, plan_path);
  for (const PlanCall& c : plan.calls)
    m.functions_.push_back(symbol<KernelFunction>(m.library_.get(), lib_path, c.function));
  // 64-byte aligned, as model.h advises (the kernels need only element alignment).
  size_t arena = static_cast<size_t>((plan.arena_bytes + 63) / 64 * 64);
  m.arena_ = std::shared_ptr<void>(std::aligned_alloc(64, std::max<size_t>(arena, 64)), std::free);
  TT_USER_CHECK(m.arena_ != nullptr) << "cannot allocate the " << arena << "-byte arena";
  m.plan_ = std::make_shared<RunPlan>(std::move(plan));
  return m;
}

void LoadedModel::run(const std::vector<const void*>& inputs,
                      const std::vector<void*>& outputs) const {
  TT_USER_CHECK(inputs.size() == plan_->inputs.size() && outputs.size() == plan_->outputs.size())
      << "the model takes " << plan_->inputs.size() << " input(s) and " << plan_->outputs.size()
      << " output(s), got " << inputs.size() << " and " << outputs.size();
  if (gpu_) {
    run_gpu(inputs, outputs);
    return;
  }
  // Kernels never write their inputs.
  int32_t rc = entry_(const_cast<void* const*>(inputs.data()), outputs.data(), arena_.get(),
                      plan_->weights.data());
  TT_CHECK(rc == 0) << codegen::kModelRun << " returned " << rc;
}

std::vector<double> LoadedModel::profile(const std::vector<const void*>& inputs,
                                         const std::vector<void*>& outputs,
                                         int runs) const {
  TT_USER_CHECK(runs >= 1) << "profile: runs must be >= 1 (got " << runs << ")";
  if (gpu_) {
    run_gpu(inputs, outputs);
    return gpu_times(runs).calls;
  }
  auto* arena = static_cast<uint8_t*>(arena_.get());
  plan_->execute(functions_, inputs, outputs, arena);  // warm-up
  std::vector<std::vector<double>> samples(plan_->calls.size());
  std::vector<double> once(plan_->calls.size());
  for (int r = 0; r < runs; ++r) {
    std::fill(once.begin(), once.end(), 0.0);
    plan_->execute(functions_, inputs, outputs, arena, &once);
    for (size_t c = 0; c < once.size(); ++c)
      samples[c].push_back(once[c]);
  }
  std::vector<double> medians;
  for (std::vector<double>& s : samples)
    medians.push_back(support::median(std::move(s)));
  return medians;
}

}  // namespace tensortune::graph

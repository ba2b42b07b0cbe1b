// SPDX-License-Identifier: Apache-2.0
// Writing a compiled model folder (library, header, plan, weights) and loading it back.
#include "tensortune/graph/model_library.h"

#include "tensortune/support/error.h"

#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tensortune::graph {
namespace {

void write_file(const std::string& path, const void* data, size_t bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  out.close();
  TT_USER_CHECK(out.good()) << "cannot write '" << path << "'";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  TT_USER_CHECK(in.good()) << "cannot read '" << path << "'";
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// dlopen of the library at `path` (closed when the last owner goes).
std::shared_ptr<void> open_library(const std::string& path) {
  const std::string absolute = std::filesystem::absolute(path).string();
  void* handle = ::dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  TT_USER_CHECK(handle != nullptr) << "cannot load '" << absolute << "': " << ::dlerror();
  return std::shared_ptr<void>(handle, [](void* h) { ::dlclose(h); });
}

KernelFunction symbol(void* library, const std::string& path, const std::string& name) {
  void* sym = ::dlsym(library, name.c_str());
  TT_USER_CHECK(sym != nullptr) << "'" << path << "' has no function '" << name << "'";
  return reinterpret_cast<KernelFunction>(sym);
}

}  // namespace

ExportedModel export_model(const Graph& graph, driver::Compiler& compiler, const std::string& dir) {
  graph.validate();
  Partition partition = graph::partition(graph);
  std::vector<driver::ExportItem> items;
  std::vector<std::string> names(partition.kernels.size());  // the function each kernel calls
  for (const Task& task : extract_tasks(graph, partition)) {
    std::string name = "kernel_" + std::to_string(items.size());
    items.push_back(driver::ExportItem{task.workload, "", name});
    for (size_t k : task.kernels)
      names[k] = name;
  }
  ExportedModel m;
  m.dir = dir;
  driver::ExportedLibrary lib = compiler.export_library(items, dir, "model");
  m.library_path = lib.library_path;
  m.header_path = lib.header_path;
  m.functions = lib.functions;
  m.memory = plan_memory(graph, partition);
  // The layout rewrites of the weights run now, with the prepare functions of the library just
  // written, so the folder holds the weights in the layouts the kernels read.
  std::vector<KernelPrepack> prepacks;
  std::shared_ptr<void> library;
  for (size_t k = 0; k < partition.kernels.size(); ++k) {
    size_t item = static_cast<size_t>(std::stoul(names[k].substr(std::string("kernel_").size())));
    const ir::LoweredFunc& func = lib.functions[item].func;
    KernelFunction prepare = nullptr;
    if (!func.prepacked.empty()) {
      if (!library)
        library = open_library(lib.library_path);
      prepare = symbol(library.get(), lib.library_path, codegen::prepare_function_name(names[k]));
    }
    prepacks.push_back(prepack_of(func, prepare));
  }
  m.plan = make_run_plan(graph, partition, m.memory, names, prepacks);
  m.plan_path = dir + "/model.json";
  m.weights_path = dir + "/weights.bin";
  std::string text = m.plan.to_json().dump(1) + "\n";
  write_file(m.plan_path, text.data(), text.size());
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
  try {
    support::Json json = support::Json::parse(read_file(plan_path));
    plan = RunPlan::from_json(json);
    expected = json.at("weight_bytes").as_int("weight_bytes");
  } catch (const UserError& e) {
    TT_USER_CHECK(false) << "'" << plan_path << "': " << e.what();
  }
  std::string weights = read_file(dir + "/weights.bin");
  TT_USER_CHECK(static_cast<int64_t>(weights.size()) == expected)
      << "'" << dir << "/weights.bin' has " << weights.size() << " bytes, the plan expects "
      << expected;
  plan.weights.assign(weights.begin(), weights.end());
  const std::string lib_path = dir + "/model.so";
  m.library_ = open_library(lib_path);
  for (const PlanCall& c : plan.calls) {
    m.functions_.push_back(symbol(m.library_.get(), lib_path, c.function));
  }
  m.arena_ = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(plan.arena_bytes));
  m.plan_ = std::make_shared<RunPlan>(std::move(plan));
  return m;
}

void LoadedModel::run(const std::vector<const void*>& inputs,
                      const std::vector<void*>& outputs) const {
  plan_->execute(functions_, inputs, outputs, arena_->data());
}

}  // namespace tensortune::graph

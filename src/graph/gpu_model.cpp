// SPDX-License-Identifier: Apache-2.0
// A model folder for a CUDA target: the kernels as CUDA C and PTX, every launch resolved to the
// model's buffers, the device arena planned (activations, then the kernels' scratch), all of it
// embedded in libmodel.so beside model.h, model.json and weights.bin.
#include "graph/model_folder.h"
#include "tensortune/graph/model_library.h"
#include "tensortune/runtime/cuda_driver.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <dlfcn.h>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

namespace tensortune::graph {
namespace {

/// cuMemAlloc's alignment: each function's scratch starts on its own such block.
constexpr int64_t kDeviceAlign = 256;

int64_t round_up(int64_t bytes, int64_t align) {
  return (bytes + align - 1) / align * align;
}

int64_t buffer_bytes(const ir::Buffer& b) {
  return b.num_elements() * b.dtype().bytes();
}

runtime::CudaModelImage::Arg image_arg(const PlanArg& a, int64_t bytes) {
  using Kind = runtime::CudaModelImage::Arg::Kind;
  Kind kind = Kind::Arena;
  switch (a.kind) {
    case PlanArg::Kind::Input:
      kind = Kind::Input;
      break;
    case PlanArg::Kind::Output:
      kind = Kind::Output;
      break;
    case PlanArg::Kind::Arena:
      kind = Kind::Arena;
      break;
    case PlanArg::Kind::Weight:
      kind = Kind::Weight;
      break;
  }
  return runtime::CudaModelImage::Arg{kind, a.index, bytes};
}

/// The image of `plan` whose call c runs module item_of[c] of `kernels` (cubins for `arch`). The
/// plan's arena grows by the largest function's scratch, placed after the activations: calls run
/// one after another on one stream, so every function's scratch can share that region.
runtime::CudaModelImage make_image(RunPlan& plan,
                                   const std::vector<driver::CompiledCuda>& kernels,
                                   const std::vector<size_t>& item_of,
                                   const std::string& arch) {
  runtime::CudaModelImage image;
  const int64_t scratch_base = round_up(plan.arena_bytes, kDeviceAlign);
  int64_t scratch_bytes = 0;
  std::vector<std::map<int, int64_t>> scratch(kernels.size());  // buffer index -> arena offset
  for (size_t f = 0; f < kernels.size(); ++f) {
    const codegen::CudaModule& m = kernels[f].module;
    int64_t used = 0;
    for (size_t b = static_cast<size_t>(m.num_params); b < m.buffers.size(); ++b) {
      scratch[f][static_cast<int>(b)] = scratch_base + used;
      used += round_up(buffer_bytes(m.buffers[b]), kDeviceAlign);
    }
    scratch_bytes = std::max(scratch_bytes, used);
  }
  if (scratch_bytes > 0)
    plan.arena_bytes = scratch_base + scratch_bytes;
  image.arena_bytes = plan.arena_bytes;
  image.weight_bytes = static_cast<int64_t>(plan.weights.size());
  for (const TensorInfo& t : plan.inputs)
    image.input_bytes.push_back(t.bytes());
  for (const TensorInfo& t : plan.outputs)
    image.output_bytes.push_back(t.bytes());
  image.num_calls = static_cast<int32_t>(plan.calls.size());
  for (const driver::CompiledCuda& k : kernels) {
    const bool ptx = !k.ptx.empty();
    image.modules.push_back({k.compiled.func.name, ptx, ptx ? k.ptx : k.module.source, k.cubin,
                             k.cubin.empty() ? "" : arch});
  }
  for (size_t c = 0; c < plan.calls.size(); ++c) {
    const size_t f = item_of[c];
    const codegen::CudaModule& m = kernels[f].module;
    const PlanCall& call = plan.calls[c];
    TT_CHECK(call.args.size() == static_cast<size_t>(m.num_params))
        << call.function << ": the plan passes " << call.args.size()
        << " buffers, the kernel takes " << m.num_params;
    for (const codegen::CudaKernel& kernel : m.kernels) {
      runtime::CudaModelImage::Launch launch;
      launch.call = static_cast<int32_t>(c);
      launch.module = static_cast<int32_t>(f);
      launch.kernel = kernel.name;
      launch.grid = kernel.grid;
      launch.block = kernel.block;
      launch.shared_bytes = kernel.shared_bytes;
      for (int p : kernel.params) {
        const int64_t bytes = buffer_bytes(m.buffers[static_cast<size_t>(p)]);
        launch.args.push_back(p < m.num_params ? image_arg(call.args[static_cast<size_t>(p)], bytes)
                                               : runtime::CudaModelImage::Arg{
                                                     runtime::CudaModelImage::Arg::Kind::Arena,
                                                     scratch[f].at(p), bytes});
      }
      image.launches.push_back(std::move(launch));
    }
  }
  try {
    image.validate();
  } catch (const std::runtime_error& e) {
    TT_CHECK(false) << "the GPU model's launches do not fit its buffers: " << e.what();
  }
  return image;
}

/// model.h of a GPU model: how to open it, run it from host or device buffers, and close it.
std::string cuda_model_header(const RunPlan& plan, const std::string& target) {
  std::ostringstream os;
  auto tensors = [&](const std::vector<TensorInfo>& list, const char* what) {
    for (size_t i = 0; i < list.size(); ++i) {
      os << " *   " << what << "[" << i << "]: " << list[i].name << ", "
         << list[i].dtype.to_string() << "[";
      for (size_t d = 0; d < list[i].shape.size(); ++d)
        os << (d ? "x" : "") << list[i].shape[d];
      os << "], " << list[i].bytes() << " bytes\n";
    }
  };
  os << "/* model.h: a model compiled by tensortune for '" << target << "'.\n"
     << " * libmodel.so loads its kernels through the CUDA driver (libcuda.so.1, opened at run\n"
     << " * time), uploads the weights once and runs every kernel on one stream.\n"
     << " *\n";
  tensors(plan.inputs, "inputs");
  tensors(plan.outputs, "outputs");
  os << " *\n"
     << " * Usage (weights.bin read into memory, tt_model_weight_bytes() bytes):\n"
     << " *   char error[512];\n"
     << " *   void* m = tt_model_cuda_open(weights, 0, error, sizeof error);  // device 0\n"
     << " *   if (!m) { fprintf(stderr, \"%s\\n\", error); ... }\n"
     << " *   tt_model_cuda_run(m, inputs, outputs);   // host pointers, copied in and out\n"
     << " *   tt_model_cuda_run_device(m, d_in, d_out); // CUdeviceptr values, no copies\n"
     << " *   tt_model_cuda_close(m);\n"
     << " * Each call returns 0, or non-zero with tt_model_cuda_error(m) saying why. A model is\n"
     << " * not thread-safe: its runs share one device arena.\n"
     << " */\n"
     << "#ifndef TENSORTUNE_MODEL_H\n#define TENSORTUNE_MODEL_H\n\n#include <stdint.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "void* tt_model_cuda_open(const void* weights, int32_t device, char* error,\n"
     << "                         int64_t error_bytes);\n"
     << "int32_t tt_model_cuda_run(void* model, const void* const* inputs, void* const* outputs);\n"
     << "int32_t tt_model_cuda_run_device(void* model, const uint64_t* inputs,\n"
     << "                                 const uint64_t* outputs);\n"
     << "/* Median seconds over `runs` (host to host, device resident) and per call. */\n"
     << "int32_t tt_model_cuda_time(void* model, int32_t runs, double* host_to_host,\n"
     << "                           double* device_resident, double* call_seconds);\n"
     << "int64_t tt_model_cuda_device_bytes(void* model);\n"
     << "/* How runs queue their launches: mode 0 one by one, 1 one CUDA graph, 2 the faster (the\n"
     << " * default at open; TT_CUDA_GRAPH=0/1 forces one), -1 only reports. Returns 1 for the\n"
     << " * graph, 0 one by one, -1 on failure; each/graph get mode 2's timed seconds per run. */\n"
     << "int32_t tt_model_cuda_launches(void* model, int32_t mode, double* each_seconds,\n"
     << "                               double* graph_seconds);\n"
     << "const char* tt_model_cuda_error(void* model);\n"
     << "void tt_model_cuda_close(void* model);\n"
     << "const char* tt_model_cuda_image(int64_t* bytes);\n"
     << "int64_t tt_model_arena_bytes(void);\nint64_t tt_model_weight_bytes(void);\n"
     << "int32_t tt_model_num_inputs(void);\nint32_t tt_model_num_outputs(void);\n"
     << "int64_t tt_model_input_bytes(int32_t i);\nint64_t tt_model_output_bytes(int32_t i);\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return os.str();
}

/// What ptxas reported on each kernel of each module: per thread, registers, spilled bytes and
/// stack, so that a user can tell a kernel that keeps its tile in registers from one that
/// does not without a device.
support::Json resources_json(const std::vector<driver::CompiledCuda>& kernels) {
  support::Json out = support::Json::array();
  for (const driver::CompiledCuda& k : kernels) {
    for (const codegen::KernelResources& r : k.resources) {
      support::Json one = support::Json::object();
      one["function"] = k.compiled.func.name;
      one["kernel"] = r.name;
      one["registers"] = r.registers;
      if (r.spill_store_bytes >= 0) {  // unknown when only the cubin was read
        one["spill_store_bytes"] = r.spill_store_bytes;
        one["spill_load_bytes"] = r.spill_load_bytes;
      }
      one["stack_bytes"] = r.stack_bytes;
      out.push_back(std::move(one));
    }
  }
  return out;
}

}  // namespace

ExportedModel export_gpu_model(const Graph& graph,
                               driver::Compiler& compiler,
                               const std::string& dir,
                               const std::string& runtime_archive) {
  Partition partition = detail::model_partition(graph);
  std::vector<size_t> item_of;
  std::vector<driver::ExportItem> items = detail::model_items(graph, partition, compiler, item_of);
  ExportedModel m;
  m.dir = dir;
  m.gpu = true;
  // Everything is generated and checked before the first file is written.
  std::vector<driver::CompiledCuda> kernels = compiler.lower_cuda(items, &m.no_ptx_reason);
  m.memory = plan_memory(graph, partition);
  std::vector<std::string> names, workloads;
  const std::vector<std::string> shown = detail::distinct_names(items);
  for (size_t k = 0; k < partition.kernels.size(); ++k) {
    names.push_back(items[item_of[k]].name);
    workloads.push_back(shown[item_of[k]]);
  }
  m.plan = make_run_plan(graph, partition, m.memory, names, workloads);
  for (size_t k = 0; k < partition.kernels.size(); ++k) {
    m.plan.calls[k].flop = items[item_of[k]].workload.flop_count();
    m.plan.calls[k].schedule = kernels[item_of[k]].compiled.lookup.describe();
  }
  m.image = make_image(m.plan, kernels, item_of, compiler.target().arch);
  for (const driver::CompiledCuda& k : kernels)
    m.functions.push_back(k.compiled);

  std::error_code made;
  std::filesystem::create_directories(std::filesystem::path(dir) / "kernels", made);
  TT_USER_CHECK(!made) << "compile-model: cannot create '" << dir
                       << "/kernels': " << made.message();
  for (const driver::CompiledCuda& k : kernels) {
    const std::string base = dir + "/kernels/" + k.compiled.func.name;
    detail::write_model_file(base + ".cu", k.module.source.data(), k.module.source.size());
    if (!k.ptx.empty())
      detail::write_model_file(base + ".ptx", k.ptx.data(), k.ptx.size());
    if (!k.cubin.empty())
      detail::write_model_file(base + ".cubin", k.cubin.data(), k.cubin.size());
  }
  driver::ModelDecl decl = detail::model_decl(m.plan);
  m.library_path = dir + "/libmodel.so";
  compiler.write_cuda_model_library(m.image, decl.entry, m.library_path, runtime_archive);
  const std::filesystem::path link = std::filesystem::path(dir) / "model.so";
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(link, ec))) {
    std::filesystem::create_symlink("libmodel.so", link, ec);
  }
  m.header_path = dir + "/model.h";
  const std::string header = cuda_model_header(m.plan, compiler.target().to_string());
  detail::write_model_file(m.header_path, header.data(), header.size());
  m.plan_path = dir + "/model.json";
  m.weights_path = dir + "/weights.bin";
  support::Json plan_json = m.plan.to_json();
  plan_json["device"] = "cuda";
  plan_json["target"] = compiler.target().to_string();
  plan_json["ptx"] = m.no_ptx_reason.empty();
  plan_json["launches"] = static_cast<int64_t>(m.image.launches.size());
  plan_json["kernel_resources"] = resources_json(kernels);
  detail::write_plan(m, std::move(plan_json));
  detail::write_model_file(m.weights_path, m.plan.weights.data(), m.plan.weights.size());
  return m;
}

}  // namespace tensortune::graph

namespace tensortune::graph {

struct LoadedModel::CudaEntry {
  using Open = void* (*)(const void*, int32_t, char*, int64_t);
  using Run = int32_t (*)(void*, const void* const*, void* const*);
  using Time = int32_t (*)(void*, int32_t, double*, double*, double*);
  using Bytes = int64_t (*)(void*);
  using Launches = int32_t (*)(void*, int32_t, double*, double*);
  using Error = const char* (*)(void*);
  using Close = void (*)(void*);
  Open open = nullptr;
  Run run = nullptr;
  Time time = nullptr;
  Bytes device_bytes = nullptr;
  Launches launches = nullptr;  ///< null in libraries built before CUDA graphs
  Error error = nullptr;
  Close close = nullptr;
};

namespace {

template <class F>
F cuda_symbol(void* library, const std::string& path, const char* name) {
  void* sym = ::dlsym(library, name);
  TT_USER_CHECK(sym != nullptr) << "'" << path << "' has no function '" << name
                                << "' (not a GPU model library: compile the model again)";
  return reinterpret_cast<F>(sym);
}

}  // namespace

LoadedModel LoadedModel::load_gpu(const std::string& dir,
                                  RunPlan plan,
                                  const std::string& weights) {
  const std::string lib_path = dir + "/libmodel.so";
  LoadedModel m;
  m.library_ = detail::open_library(lib_path);
  void* handle = m.library_.get();
  auto e = std::make_shared<CudaEntry>();
  e->open = cuda_symbol<CudaEntry::Open>(handle, lib_path, codegen::kModelCudaOpen);
  e->run = cuda_symbol<CudaEntry::Run>(handle, lib_path, codegen::kModelCudaRun);
  e->time = cuda_symbol<CudaEntry::Time>(handle, lib_path, codegen::kModelCudaTime);
  e->device_bytes = cuda_symbol<CudaEntry::Bytes>(handle, lib_path, codegen::kModelCudaDeviceBytes);
  e->launches = reinterpret_cast<CudaEntry::Launches>(::dlsym(handle, codegen::kModelCudaLaunches));
  e->error = cuda_symbol<CudaEntry::Error>(handle, lib_path, codegen::kModelCudaError);
  e->close = cuda_symbol<CudaEntry::Close>(handle, lib_path, codegen::kModelCudaClose);
  // The image the library embeds must be the plan's: same sizes and the same number of calls.
  using Image = const char* (*)(int64_t*);
  int64_t image_bytes = 0;
  const char* text = cuda_symbol<Image>(handle, lib_path, codegen::kModelCudaImage)(&image_bytes);
  runtime::CudaModelImage image;
  try {
    image = runtime::CudaModelImage::parse(std::string(text, static_cast<size_t>(image_bytes)));
  } catch (const std::runtime_error& err) {
    TT_USER_CHECK(false) << "'" << lib_path << "': " << err.what();
  }
  bool match = image.weight_bytes == static_cast<int64_t>(weights.size()) &&
               image.arena_bytes == plan.arena_bytes &&
               image.num_calls == static_cast<int32_t>(plan.calls.size()) &&
               image.input_bytes.size() == plan.inputs.size() &&
               image.output_bytes.size() == plan.outputs.size();
  for (size_t i = 0; match && i < plan.inputs.size(); ++i)
    match = image.input_bytes[i] == plan.inputs[i].bytes();
  for (size_t i = 0; match && i < plan.outputs.size(); ++i)
    match = image.output_bytes[i] == plan.outputs[i].bytes();
  TT_USER_CHECK(match) << "'" << lib_path << "' and '" << dir
                       << "/model.json' do not belong together: compile the model again";
  std::string error(1024, '\0');
  void* model = e->open(weights.data(), 0, error.data(), static_cast<int64_t>(error.size()));
  TT_USER_CHECK(model != nullptr) << "'" << dir << "' is a model for a CUDA device and cannot run "
                                  << "here: " << error.c_str();
  m.gpu_ = std::shared_ptr<void>(model, [e](void* p) { e->close(p); });
  m.cuda_ = std::move(e);
  m.plan_ = std::make_shared<RunPlan>(std::move(plan));
  return m;
}

void LoadedModel::run_gpu(const std::vector<const void*>& inputs,
                          const std::vector<void*>& outputs) const {
  const int32_t rc = cuda_->run(gpu_.get(), inputs.data(), outputs.data());
  TT_CHECK(rc == 0) << "the GPU model failed: " << cuda_->error(gpu_.get());
}

LoadedModel::GpuTimes LoadedModel::gpu_times(int runs) const {
  TT_USER_CHECK(gpu_ != nullptr) << "gpu_times: the model was compiled for a CPU";
  TT_USER_CHECK(runs >= 1) << "gpu_times: runs must be >= 1 (got " << runs << ")";
  GpuTimes t;
  t.calls.resize(plan_->calls.size());
  const int32_t rc =
      cuda_->time(gpu_.get(), runs, &t.host_to_host, &t.device_resident, t.calls.data());
  TT_CHECK(rc == 0) << "timing the GPU model failed: " << cuda_->error(gpu_.get());
  t.device_bytes = cuda_->device_bytes(gpu_.get());
  // After the runs: the arena, the weights, the loaded kernels and any captured graph all live.
  t.device_in_use = runtime::CudaDevice(0).memory_in_use();
  if (cuda_->launches != nullptr) {
    t.cuda_graph = cuda_->launches(gpu_.get(), -1, &t.each_seconds, &t.graph_seconds);
  }
  return t;
}

void LoadedModel::set_gpu_launches(int mode) const {
  TT_USER_CHECK(gpu_ != nullptr) << "set_gpu_launches: the model was compiled for a CPU";
  TT_USER_CHECK(mode >= 0 && mode <= 2)
      << "set_gpu_launches: mode " << mode << " (0 one by one, 1 a CUDA graph, 2 the faster)";
  TT_USER_CHECK(cuda_->launches != nullptr)
      << "this GPU model library predates CUDA graphs: compile the model again";
  const int32_t rc = cuda_->launches(gpu_.get(), mode, nullptr, nullptr);
  TT_CHECK(rc >= 0) << "choosing the GPU model's launches failed: " << cuda_->error(gpu_.get());
}

}  // namespace tensortune::graph

// SPDX-License-Identifier: Apache-2.0
// Compiler::export_cuda: the looked-up kernels of several workloads for a CUDA target as CUDA C,
// PTX and a JSON manifest of how to launch them.
#include "driver/export_files.h"
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/driver/c_header.h"
#include "tensortune/driver/compile.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"

#include <filesystem>

namespace tensortune::driver {
namespace {

support::Json function_manifest(const ExportItem& item,
                                const Compiled& compiled,
                                const codegen::CudaModule& module,
                                const std::string& source,
                                const std::string& ptx) {
  support::Json f = support::Json::object();
  f["name"] = compiled.func.name;
  f["workload"] = item.workload.name();
  f["workload_key"] = item.workload.key();
  f["schedule"] = compiled.lookup.describe();
  f["source"] = source;
  f["ptx"] = ptx;
  support::Json buffers = support::Json::array();
  for (size_t i = 0; i < module.buffers.size(); ++i) {
    const ir::Buffer& b = module.buffers[i];
    support::Json buffer = support::Json::object();
    buffer["name"] = b.name();
    buffer["dtype"] = b.dtype().to_string();
    support::Json shape = support::Json::array();
    for (int64_t d : b.shape()) {
      shape.push_back(d);
    }
    buffer["shape"] = std::move(shape);
    const size_t inputs = compiled.func.num_inputs;
    buffer["role"] = i < inputs                                   ? "input"
                     : i < static_cast<size_t>(module.num_params) ? "output"
                                                                  : "scratch";
    buffers.push_back(std::move(buffer));
  }
  f["buffers"] = std::move(buffers);
  support::Json kernels = support::Json::array();
  for (const codegen::CudaKernel& k : module.kernels) {
    kernels.push_back(codegen::kernel_json(k));
  }
  f["kernels"] = std::move(kernels);
  return f;
}

}  // namespace

ExportedCuda Compiler::export_cuda(const std::vector<ExportItem>& items,
                                   const std::string& dir,
                                   const std::string& name) {
  TT_USER_CHECK(resolved_.is_gpu()) << "export: target '" << resolved_.to_string()
                                    << "' is not a CUDA target (e.g. 'cuda -arch=sm_90')";
  TT_USER_CHECK(is_c_identifier(name))
      << "export: library name '" << name << "' is not a C identifier";
  std::string why;
  TT_USER_CHECK(codegen::nvrtc_available(&why))
      << "export: CUDA kernels are written as PTX, which needs NVRTC: " << why;
  ExportedCuda out;
  out.functions = lower_items(items);
  // Generate and compile everything before the first file is written.
  std::vector<codegen::CudaModule> modules;
  std::vector<std::string> ptx;
  for (const Compiled& c : out.functions) {
    modules.push_back(codegen::generate_cuda(c.func, resolved_));
    ptx.push_back(codegen::compile_cuda(modules.back().source, resolved_, false).ptx);
  }
  detail::make_directory(dir);
  support::Json manifest = support::Json::object();
  manifest["target"] = resolved_.to_string();
  manifest["fingerprint"] = identity_.fingerprint;
  support::Json functions = support::Json::array();
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& function = out.functions[i].func.name;
    const std::filesystem::path base = std::filesystem::path(dir) / function;
    out.source_paths.push_back(base.string() + ".cu");
    out.ptx_paths.push_back(base.string() + ".ptx");
    detail::write_text(out.source_paths.back(), modules[i].source);
    detail::write_text(out.ptx_paths.back(), ptx[i]);
    functions.push_back(function_manifest(items[i], out.functions[i], modules[i], function + ".cu",
                                          function + ".ptx"));
  }
  manifest["functions"] = std::move(functions);
  out.manifest_path = (std::filesystem::path(dir) / (name + ".json")).string();
  detail::write_text(out.manifest_path, manifest.dump() + "\n");
  return out;
}

std::vector<CompiledCuda> Compiler::lower_cuda(const std::vector<ExportItem>& items,
                                               std::string* why_no_ptx) {
  TT_USER_CHECK(resolved_.is_gpu())
      << "target '" << resolved_.to_string() << "' is not a CUDA target (e.g. 'cuda -arch=sm_90')";
  std::string why;
  const bool ptx = codegen::nvrtc_available(&why);
  if (!ptx && why_no_ptx != nullptr)
    *why_no_ptx = why;
  std::vector<CompiledCuda> out;
  for (Compiled& c : lower_items(items)) {
    CompiledCuda k{std::move(c), {}, "", "", {}};
    k.module = codegen::generate_cuda(k.compiled.func, resolved_);
    if (ptx) {
      // PTX and a cubin in one compile; an arch NVRTC can write PTX for but not SASS still
      // gets its PTX.
      try {
        codegen::NvrtcOutput nvrtc = codegen::compile_cuda(k.module.source, resolved_, true);
        k.ptx = std::move(nvrtc.ptx);
        k.cubin = std::move(nvrtc.cubin);
        k.resources = std::move(nvrtc.resources);
      } catch (const UserError&) {
        k.ptx = codegen::compile_cuda(k.module.source, resolved_, false).ptx;
      }
    }
    out.push_back(std::move(k));
  }
  return out;
}

void Compiler::write_cuda_model_library(const runtime::CudaModelImage& image,
                                        const codegen::ModelEntry& sizes,
                                        const std::string& path,
                                        const std::string& runtime_archive) const {
  codegen::export_cuda_model_library(image, sizes, codegen::resolve_host(), path, runtime_archive);
}

}  // namespace tensortune::driver

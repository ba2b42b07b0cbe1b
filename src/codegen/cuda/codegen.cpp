// SPDX-License-Identifier: Apache-2.0
// Loop IR -> one CUDA C translation unit: the function body's top-level global scratch buffers
// and loop nests (one kernel each), each kernel's launch shape from its bound loops, its
// parameters (only the buffers it touches) and its __shared__ memory.
#include "tensortune/codegen/cuda_codegen.h"

#include "codegen/cuda/internal.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <cstdint>

namespace tensortune::codegen {
namespace {

/// What a kernel may declare as static __shared__ arrays; more must be dynamic shared memory.
constexpr int64_t kStaticSharedBytes = 48 * 1024;

/// The kernels (top-level nests) of a body, and its global scratch buffers (top-level
/// allocations), both in program order; the same walk as lower's GPU binding check.
void collect(const ir::Stmt& s, std::vector<ir::Stmt>* kernels, std::vector<ir::Buffer>* scratch) {
  if (!s.defined() || s.as<ir::Evaluate>() != nullptr) {
    return;  // nothing to launch
  }
  if (const auto* seq = s.as<ir::Seq>()) {
    for (const ir::Stmt& c : seq->stmts) {
      collect(c, kernels, scratch);
    }
    return;
  }
  if (const auto* alloc = s.as<ir::Allocate>();
      alloc != nullptr && alloc->buffer.scope() == ir::MemoryScope::Global) {
    scratch->push_back(alloc->buffer);
    collect(alloc->body, kernels, scratch);
    return;
  }
  kernels->push_back(s);
}

/// The grid and block of a kernel: the extent of the loops bound to each index.
class LaunchShape : public ir::IRVisitor {
 public:
  explicit LaunchShape(std::string kernel) : kernel_(std::move(kernel)) {}
  using ir::IRVisitor::visit;

  std::array<int64_t, 3> grid{{1, 1, 1}};
  std::array<int64_t, 3> block{{1, 1, 1}};

 protected:
  void visit(const ir::For* op) override {
    if (ir::is_gpu_kind(op->for_kind)) {
      const int64_t* extent = ir::as_const_int(op->extent);
      TT_USER_CHECK(extent != nullptr && *extent >= 1)
          << "cuda codegen: loop '" << op->var.name() << "' of kernel '" << kernel_
          << "' is bound to " << ir::for_kind_name(op->for_kind)
          << " but its extent is not a positive constant";
      int64_t& dim = slot(op->for_kind);
      dim = std::max(dim, *extent);
    }
    ir::IRVisitor::visit(op);
  }

 private:
  int64_t& slot(ir::ForKind k) {
    switch (k) {
      case ir::ForKind::BlockX:
        return grid[0];
      case ir::ForKind::BlockY:
        return grid[1];
      case ir::ForKind::BlockZ:
        return grid[2];
      case ir::ForKind::ThreadX:
        return block[0];
      case ir::ForKind::ThreadY:
        return block[1];
      default:
        return block[2];
    }
  }

  std::string kernel_;
};

std::string kernel_source(const CudaKernel& kernel,
                          const CudaModule& module,
                          const cuda::NameTable& names,
                          const cuda::KernelPrinter& printer,
                          bool dynamic_shared) {
  std::string params;
  for (int index : kernel.params) {
    const ir::Buffer& b = module.buffers[static_cast<size_t>(index)];
    params += (params.empty() ? "" : ", ") + cuda::c_type(b.dtype(), "buffer '" + b.name() + "'") +
              "* __restrict__ " + *names.find(b.get());
  }
  int64_t threads = kernel.block[0] * kernel.block[1] * kernel.block[2];
  std::string text = "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(threads) +
                     ") " + kernel.name + "(" + params + ") {\n";
  for (const std::string& decl : printer.shared_declarations(dynamic_shared)) {
    text += "  " + decl + "\n";
  }
  return text + printer.body() + "}\n";
}

}  // namespace

CudaModule generate_cuda(const ir::LoweredFunc& func, const target::Target& target) {
  TT_USER_CHECK(target.is_gpu()) << "cuda codegen: target '" << target.to_string()
                                 << "' is not a CUDA target (e.g. 'cuda -arch=sm_90')";
  CudaModule module;
  module.buffers = func.params;
  module.num_params = static_cast<int>(func.params.size());
  std::vector<ir::Stmt> kernels;
  collect(func.body, &kernels, &module.buffers);

  cuda::NameTable names;
  std::map<const ir::BufferNode*, int> index;
  for (size_t i = 0; i < module.buffers.size(); ++i) {
    const ir::Buffer& b = module.buffers[i];
    cuda::c_type(b.dtype(), "buffer '" + b.name() + "'");
    names.get(b.get(), b.name());
    index.emplace(b.get(), static_cast<int>(i));
  }
  const std::string func_name = cuda::sanitize(func.name);
  cuda::Helpers helpers;
  std::string kernels_text;
  for (size_t k = 0; k < kernels.size(); ++k) {
    // Shared memory the printer adds itself (a cross-thread reduction's) may leave no room for
    // the second halves of double-buffered tiles: then the kernel is printed again without them.
    for (bool pipelined : {true, false}) {
      CudaKernel kernel;
      kernel.name = func_name + "_kernel" + std::to_string(k);
      cuda::Pipelines pipelines;
      ir::Stmt body = cuda::shrink_local_buffers(kernels[k]);
      if (pipelined) {
        body = cuda::pipeline_shared_fetches(body, target, &pipelines);
      }
      const bool doubled = !pipelines.loops.empty();
      const cuda::Helpers helpers_before = helpers;
      LaunchShape shape(kernel.name);
      shape.visit(body);
      kernel.grid = shape.grid;
      kernel.block = shape.block;

      cuda::KernelContext context;
      context.kernel_name = kernel.name;
      context.grid = kernel.grid;
      context.block = kernel.block;
      context.module_buffers = &index;
      context.barriers = cuda::plan_barriers(body, pipelines);
      context.cross_thread = cuda::plan_cross_thread_reductions(kernels[k], kernel.name);
      context.helpers = &helpers;
      context.bindings = cuda::collect_bindings(body);
      context.pipelines = std::move(pipelines);
      cuda::KernelPrinter printer(std::move(context), names);
      printer.print_kernel(body);
      kernel.shared_bytes = printer.shared_bytes();
      const int64_t limit =
          doubled ? cuda::shared_memory_limit(target) : target.max_shared_memory_bytes;
      if (doubled && kernel.shared_bytes > limit) {
        helpers = helpers_before;
        continue;
      }
      TT_USER_CHECK(kernel.shared_bytes <= limit)
          << "cuda codegen: kernel '" << kernel.name << "' uses " << kernel.shared_bytes
          << " bytes of shared memory but the target '" << target.to_string() << "' allows "
          << limit;
      const bool dynamic = kernel.shared_bytes > kStaticSharedBytes;
      kernel.dynamic_shared_bytes = dynamic ? kernel.shared_bytes : 0;
      helpers.dynamic_shared = helpers.dynamic_shared || dynamic;
      kernel.params.assign(printer.used_buffers().begin(), printer.used_buffers().end());
      kernels_text += "\n" + kernel_source(kernel, module, names, printer, dynamic);
      module.kernels.push_back(std::move(kernel));
      break;
    }
  }
  std::string header = "// CUDA C generated by tensortune from '" + func.name + "' for '" +
                       target.to_string() + "': " + std::to_string(kernels.size()) +
                       (kernels.size() == 1 ? " kernel\n" : " kernels\n");
  std::string helper_text = cuda::helper_source(helpers);
  module.source = header + (helper_text.empty() ? "" : "\n" + helper_text) + kernels_text;
  return module;
}

std::string launch_summary(const CudaModule& module) {
  auto dims = [](const std::array<int64_t, 3>& d) {
    return "(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) +
           ")";
  };
  std::string text;
  for (const CudaKernel& k : module.kernels) {
    std::string params;
    for (int p : k.params) {
      params += (params.empty() ? "" : ", ") + module.buffers[static_cast<size_t>(p)].name();
    }
    text += "// kernel " + k.name + ": grid " + dims(k.grid) + ", block " + dims(k.block) +
            ", shared " + std::to_string(k.shared_bytes) + " bytes" +
            (k.dynamic_shared_bytes > 0 ? " (dynamic)" : "") + ", params (" + params + ")\n";
  }
  for (size_t i = static_cast<size_t>(module.num_params); i < module.buffers.size(); ++i) {
    const ir::Buffer& b = module.buffers[i];
    text += "// scratch buffer " + b.name() + ": " + b.dtype().to_string() + "[" +
            std::to_string(b.num_elements()) + "], allocated by the host\n";
  }
  return text;
}

namespace {

support::Json extents_json(const std::array<int64_t, 3>& extents) {
  support::Json out = support::Json::array();
  for (int64_t e : extents) {
    out.push_back(e);
  }
  return out;
}

std::array<int64_t, 3> extents_of(const support::Json& json, const char* what) {
  const support::Json::Array& list = json.as_array(what);
  TT_USER_CHECK(list.size() == 3) << "cuda kernel: " << what << " has " << list.size()
                                  << " extents, not 3";
  std::array<int64_t, 3> out{};
  for (size_t d = 0; d < 3; ++d) {
    out[d] = list[d].as_int(what);
  }
  return out;
}

}  // namespace

support::Json kernel_json(const CudaKernel& kernel) {
  support::Json entry = support::Json::object();
  entry["name"] = kernel.name;
  entry["grid"] = extents_json(kernel.grid);
  entry["block"] = extents_json(kernel.block);
  entry["shared_bytes"] = kernel.shared_bytes;
  if (kernel.dynamic_shared_bytes > 0) {
    entry["dynamic_shared_bytes"] = kernel.dynamic_shared_bytes;
  }
  support::Json params = support::Json::array();
  for (int p : kernel.params) {
    params.push_back(static_cast<int64_t>(p));
  }
  entry["params"] = std::move(params);
  return entry;
}

CudaKernel kernel_from_json(const support::Json& json) {
  CudaKernel k;
  k.name = json.at("name").as_string("kernel field 'name'");
  k.grid = extents_of(json.at("grid"), "kernel field 'grid'");
  k.block = extents_of(json.at("block"), "kernel field 'block'");
  k.shared_bytes = json.at("shared_bytes").as_int("kernel field 'shared_bytes'");
  if (json.contains("dynamic_shared_bytes")) {
    k.dynamic_shared_bytes =
        json.at("dynamic_shared_bytes").as_int("kernel field 'dynamic_shared_bytes'");
    TT_USER_CHECK(k.dynamic_shared_bytes >= 0 && k.dynamic_shared_bytes <= k.shared_bytes)
        << "cuda kernel '" << k.name << "': dynamic_shared_bytes " << k.dynamic_shared_bytes
        << " is not within its shared_bytes " << k.shared_bytes;
  }
  for (const support::Json& p : json.at("params").as_array("kernel field 'params'")) {
    const int64_t index = p.as_int("a kernel parameter");
    TT_USER_CHECK(index >= 0 && index <= INT32_MAX)
        << "cuda kernel '" << k.name << "': parameter buffer " << index << " is out of range";
    k.params.push_back(static_cast<int>(index));
  }
  return k;
}

}  // namespace tensortune::codegen

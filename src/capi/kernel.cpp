// SPDX-License-Identifier: Apache-2.0
// The C API's kernels: compiled in process, called, described; exported libraries; the
// untuned workloads of a compiler (c_api.h).
#include "capi/internal.h"
#include "tensortune/runtime/parallel.h"

#include <memory>
#include <string>
#include <vector>

namespace tensortune::capi {
namespace {

/// The kernel's buffer `i`, or null (with the thread's error set) when out of range.
const ir::Buffer* buffer_at(const tt_kernel* kernel, int32_t i, const char* function) {
  if (kernel == nullptr || i < 0 || static_cast<size_t>(i) >= kernel->func.params.size()) {
    invalid(function, "no kernel, or buffer index " + std::to_string(i) + " out of range");
    return nullptr;
  }
  return &kernel->func.params[static_cast<size_t>(i)];
}

/// Scratch for a kernel's prepacked buffers (weights in a blocked layout), one per call.
class Prepacked {
 public:
  explicit Prepacked(const ir::LoweredFunc& func) {
    for (const ir::Buffer& b : func.prepacked) {
      blocks_.push_back(tt_alloc(b.num_elements() * b.dtype().bytes()));
    }
  }
  Prepacked(const Prepacked&) = delete;
  Prepacked& operator=(const Prepacked&) = delete;
  ~Prepacked() {
    for (void* block : blocks_) {
      tt_free(block);
    }
  }
  const std::vector<void*>& blocks() const { return blocks_; }

 private:
  std::vector<void*> blocks_;
};

}  // namespace
}  // namespace tensortune::capi

using namespace tensortune;  // NOLINT(google-build-using-namespace): the C API's kernel half

extern "C" {

tt_status tt_compile(tt_compiler* compiler, const char* spec, tt_kernel** out) {
  if (compiler == nullptr || spec == nullptr || out == nullptr) {
    return capi::invalid("tt_compile", "compiler, spec and out must not be null");
  }
  *out = nullptr;
  return capi::guarded("tt_compile", [&] {
    const te::Workload& w = capi::workload_of(*compiler, spec);
    driver::Compiled compiled = compiler->compiler.compile(w, spec);
    capi::note_untuned(*compiler);
    auto kernel = std::make_unique<tt_kernel>();
    kernel->artifact = std::move(compiled.artifact);
    kernel->func = std::move(compiled.func);
    kernel->describe = compiled.lookup.describe();
    for (const ir::Buffer& b : kernel->func.params) {
      kernel->dtypes.push_back(b.dtype().to_string());
    }
    *out = kernel.release();
    return TT_OK;
  });
}

void tt_kernel_free(tt_kernel* kernel) {
  delete kernel;
}

tt_status tt_kernel_call(const tt_kernel* kernel, void* const* buffers) {
  if (kernel == nullptr || buffers == nullptr) {
    return capi::invalid("tt_kernel_call", "kernel and buffers must not be null");
  }
  for (size_t i = 0; i < kernel->func.params.size(); ++i) {
    if (buffers[i] == nullptr) {
      return capi::invalid("tt_kernel_call", "buffer " + std::to_string(i) + " (" +
                                                 kernel->func.params[i].name() + ") is null");
    }
  }
  return capi::guarded("tt_kernel_call", [&] {
    int32_t status = 0;
    if (kernel->artifact.has_prepare()) {
      capi::Prepacked prepacked(kernel->func);
      std::vector<void*> all(buffers, buffers + kernel->func.params.size());
      all.insert(all.end(), prepacked.blocks().begin(), prepacked.blocks().end());
      status = kernel->artifact.prepare(all.data());
      status = status != 0 ? status : kernel->artifact(all.data());
    } else {
      status = kernel->artifact(buffers);
    }
    if (status != 0) {
      return capi::fail(TT_ERROR_KERNEL, "tt_kernel_call: kernel '" + kernel->func.name +
                                             "' returned " + std::to_string(status));
    }
    return TT_OK;
  });
}

int32_t tt_kernel_num_buffers(const tt_kernel* kernel) {
  return kernel == nullptr ? 0 : static_cast<int32_t>(kernel->func.params.size());
}

int32_t tt_kernel_num_inputs(const tt_kernel* kernel) {
  return kernel == nullptr ? 0 : static_cast<int32_t>(kernel->func.num_inputs);
}

const char* tt_kernel_buffer_name(const tt_kernel* kernel, int32_t i) {
  const ir::Buffer* b = capi::buffer_at(kernel, i, "tt_kernel_buffer_name");
  return b == nullptr ? "" : b->name().c_str();
}

const char* tt_kernel_buffer_dtype(const tt_kernel* kernel, int32_t i) {
  const ir::Buffer* b = capi::buffer_at(kernel, i, "tt_kernel_buffer_dtype");
  return b == nullptr ? "" : kernel->dtypes[static_cast<size_t>(i)].c_str();
}

int32_t tt_kernel_buffer_ndim(const tt_kernel* kernel, int32_t i) {
  const ir::Buffer* b = capi::buffer_at(kernel, i, "tt_kernel_buffer_ndim");
  return b == nullptr ? 0 : static_cast<int32_t>(b->shape().size());
}

int64_t tt_kernel_buffer_dim(const tt_kernel* kernel, int32_t i, int32_t d) {
  const ir::Buffer* b = capi::buffer_at(kernel, i, "tt_kernel_buffer_dim");
  if (b == nullptr || d < 0 || static_cast<size_t>(d) >= b->shape().size()) {
    return 0;
  }
  return b->shape()[static_cast<size_t>(d)];
}

int64_t tt_kernel_buffer_bytes(const tt_kernel* kernel, int32_t i) {
  const ir::Buffer* b = capi::buffer_at(kernel, i, "tt_kernel_buffer_bytes");
  return b == nullptr ? 0 : b->num_elements() * b->dtype().bytes();
}

const char* tt_kernel_name(const tt_kernel* kernel) {
  return kernel == nullptr ? "" : kernel->func.name.c_str();
}

const char* tt_kernel_describe(const tt_kernel* kernel) {
  return kernel == nullptr ? "" : kernel->describe.c_str();
}

tt_status tt_export_library(tt_compiler* compiler,
                            const char* const* specs,
                            size_t num_specs,
                            const char* dir,
                            const char* name) {
  if (compiler == nullptr || specs == nullptr || dir == nullptr || name == nullptr) {
    return capi::invalid("tt_export_library", "compiler, specs, dir and name must not be null");
  }
  for (size_t i = 0; i < num_specs; ++i) {
    if (specs[i] == nullptr) {
      return capi::invalid("tt_export_library", "spec " + std::to_string(i) + " is null");
    }
  }
  return capi::guarded("tt_export_library", [&] {
    std::vector<driver::ExportItem> items;
    for (size_t i = 0; i < num_specs; ++i) {
      items.push_back(driver::ExportItem{capi::workload_of(*compiler, specs[i]), specs[i], ""});
    }
    compiler->compiler.export_library(items, dir, name);
    capi::note_untuned(*compiler);
    return TT_OK;
  });
}

size_t tt_untuned_count(const tt_compiler* compiler) {
  return compiler == nullptr ? 0 : compiler->untuned.size();
}

const char* tt_untuned_name(const tt_compiler* compiler, size_t i) {
  if (compiler == nullptr || i >= compiler->untuned.size()) {
    return "";
  }
  return compiler->untuned[i].c_str();
}

}  // extern "C"

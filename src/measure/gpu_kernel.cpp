// SPDX-License-Identifier: Apache-2.0
// GpuKernel (see gpu_kernel.h): a GPU build's blob (gpu_image.h) loaded on a CudaDevice, and the
// timing protocol with every batch timed by CUDA events.
#include "tensortune/measure/gpu_kernel.h"

#include "measure/gpu_image.h"
#include "tensortune/runtime/cuda_driver.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <climits>
#include <vector>

namespace tensortune::measure {

struct GpuKernel::Impl {
  runtime::CudaDevice& device;
  detail::GpuImage image;
  std::vector<uint64_t> pointers;  ///< one per image buffer
  int module = -1;
  std::vector<uint64_t> functions;          ///< one per image kernel
  std::vector<std::vector<uint64_t>> args;  ///< the device pointers each kernel takes

  Impl(runtime::CudaDevice& d, detail::GpuImage i) : device(d), image(std::move(i)) {}
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  /// Unloads and frees whatever is loaded and allocated; CUDA errors are ignored (a lost context
  /// has released everything already).
  ~Impl() {
    if (module >= 0) {
      try {
        device.unload_module(module);
      } catch (const runtime::CudaError&) {
      }
    }
    for (uint64_t p : pointers) {
      try {
        device.free(p);
      } catch (const runtime::CudaError&) {
      }
    }
  }
};

GpuKernel::GpuKernel(runtime::CudaDevice& device, const std::string& object) {
  // Impl's destructor releases what a failure below leaves behind.
  auto impl = std::make_unique<Impl>(device, detail::GpuImage::decode(object));
  for (const BufferSpec& b : impl->image.buffers) {
    impl->pointers.push_back(device.alloc(std::max<size_t>(static_cast<size_t>(b.num_bytes()), 1)));
  }
  impl->module = device.load_module(impl->image.cubin);
  for (const detail::GpuLaunch& k : impl->image.kernels) {
    impl->functions.push_back(device.function(impl->module, k.name));
    impl->args.emplace_back();
    for (int p : k.params) {
      impl->args.back().push_back(impl->pointers.at(static_cast<size_t>(p)));
    }
  }
  impl_ = std::move(impl);
}

GpuKernel::~GpuKernel() = default;

size_t GpuKernel::num_params() const {
  return impl_->image.num_params;
}

uint64_t GpuKernel::buffer(size_t index) const {
  TT_USER_CHECK(index < impl_->pointers.size())
      << "gpu kernel: no buffer " << index << " (it has " << impl_->pointers.size() << ")";
  return impl_->pointers[index];
}

void GpuKernel::upload(const KernelBuffers& host) {
  const KernelSignature& sig = host.signature();
  TT_USER_CHECK(sig.params.size() >= num_params())
      << "gpu kernel: the host buffers have " << sig.params.size() << " parameters, the kernel "
      << num_params();
  for (size_t i = 0; i < num_params(); ++i) {
    const BufferSpec& b = impl_->image.buffers[i];
    TT_USER_CHECK(b.num_bytes() == sig.params[i].num_bytes())
        << "gpu kernel: buffer '" << b.name << "' has " << b.num_bytes() << " bytes, the host's '"
        << sig.params[i].name << "' " << sig.params[i].num_bytes();
    impl_->device.copy_to_device(impl_->pointers[i], host.data(i),
                                 static_cast<size_t>(b.num_bytes()));
  }
}

void GpuKernel::download_outputs(const KernelBuffers& host) {
  for (size_t i = host.signature().num_inputs; i < num_params(); ++i) {
    impl_->device.copy_to_host(host.data(i), impl_->pointers[i],
                               static_cast<size_t>(impl_->image.buffers[i].num_bytes()));
  }
}

void GpuKernel::call() {
  for (size_t k = 0; k < impl_->image.kernels.size(); ++k) {
    const detail::GpuLaunch& launch = impl_->image.kernels[k];
    impl_->device.launch(impl_->functions[k], launch.grid, launch.block, launch.shared_bytes,
                         impl_->args[k]);
  }
}

TimingResult time_on_device(runtime::CudaDevice& device,
                            const std::function<void()>& call,
                            double warmup_seconds,
                            const TimingOptions& options) {
  auto batch = [&](int64_t number) {
    int calls = static_cast<int>(std::min<int64_t>(number, INT_MAX));
    return device.time_events(calls, call) * calls;
  };
  return time_batches(batch, warmup_seconds, options);
}

}  // namespace tensortune::measure

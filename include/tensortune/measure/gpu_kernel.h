// SPDX-License-Identifier: Apache-2.0
// A built GPU candidate on a device: its module loaded, its buffers (parameters, then the scratch
// buffers the host allocates) in device memory, and one call = every kernel launched in order.
// The measurer's GPU worker runs candidates with it, and bench/vs_vendor_gpu runs tuned kernels
// with it, next to cuBLAS and cuDNN, under the same timing protocol (time_on_device).
#pragma once

#include "tensortune/measure/kernel_buffers.h"
#include "tensortune/measure/timing.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace tensortune::runtime {
class CudaDevice;
}

namespace tensortune::measure {

class GpuKernel {
 public:
  /// `object` is the BuildResult::object of a CUDA target's build (Builder). Decodes it,
  /// allocates its buffers on `device`, loads its module and looks its kernels up. UserError for
  /// an object that is not a GPU build; runtime::CudaError from the device (nothing stays
  /// allocated or loaded then). `device` must outlive the kernel.
  GpuKernel(runtime::CudaDevice& device, const std::string& object);
  /// Unloads the module and frees the buffers (errors ignored: after a sticky fault the context
  /// is lost, and its memory and modules with it).
  ~GpuKernel();
  GpuKernel(const GpuKernel&) = delete;
  GpuKernel& operator=(const GpuKernel&) = delete;

  /// The kernel's parameters (inputs then outputs), as in its KernelSignature.
  size_t num_params() const;
  /// The device address of parameter or scratch buffer `index` (parameters first).
  uint64_t buffer(size_t index) const;

  /// Copies every parameter of `host` (inputs and poisoned outputs) to the device; `host` must
  /// have this kernel's signature (UserError naming the buffer otherwise).
  void upload(const KernelBuffers& host);
  /// Copies the outputs (parameters from host.signature().num_inputs on) back into `host`.
  void download_outputs(const KernelBuffers& host);

  /// Launches every kernel of the module in order on the device's stream; does not wait.
  void call();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The timing protocol of timing.h (time_batches) for `call`, which queues work on `device`'s
/// stream and has run once already, taking `warmup_seconds` (time it with
/// device.time_events(1, call)). Every batch is timed by CUDA events around its calls.
TimingResult time_on_device(runtime::CudaDevice& device,
                            const std::function<void()>& call,
                            double warmup_seconds,
                            const TimingOptions& options);

}  // namespace tensortune::measure

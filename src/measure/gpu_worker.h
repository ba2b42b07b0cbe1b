// SPDX-License-Identifier: Apache-2.0
// Private to src/measure: the worker's GPU side. It owns the CUDA device of the worker process,
// runs a GPU candidate (see gpu_image.h) on the same inputs as the CPU path, checks its outputs
// and times calls with CUDA events.
#pragma once

#include "measure/protocol.h"
#include "measure/worker_reply.h"
#include "tensortune/measure/measure_input.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tensortune::runtime {
class CudaDevice;
}

namespace tensortune::measure::detail {

class GpuWorker {
 public:
  GpuWorker();
  ~GpuWorker();
  GpuWorker(const GpuWorker&) = delete;
  GpuWorker& operator=(const GpuWorker&) = delete;

  /// The reply to a run request whose header has "gpu": a MeasureResult header (plus the outputs
  /// when asked for). A launch the device cannot run is a RuntimeError; any other CUDA failure is
  /// a RuntimeError with "context_lost" in the reply, after which the process must exit.
  Message run(const Message& request, const std::map<uint64_t, StoredReference>& references);

  /// True after a CUDA error that leaves the context unusable (illegal address, launch failure).
  bool context_lost() const { return context_lost_; }

 private:
  std::unique_ptr<runtime::CudaDevice> device_;
  bool context_lost_ = false;
};

}  // namespace tensortune::measure::detail

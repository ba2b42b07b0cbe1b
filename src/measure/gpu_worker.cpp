// SPDX-License-Identifier: Apache-2.0
// The worker's GPU runs (see gpu_worker.h): device buffers per candidate, the check call, then
// the timing protocol of timing.h with every batch timed by CUDA events on the device's stream.
#include "measure/gpu_worker.h"

#include "measure/gpu_image.h"
#include "measure/worker_reply.h"
#include "tensortune/measure/kernel_buffers.h"
#include "tensortune/measure/measure_result.h"
#include "tensortune/measure/timing.h"
#include "tensortune/runtime/cuda_driver.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <climits>
#include <functional>

namespace tensortune::measure::detail {
namespace {

/// Device memory of one candidate, freed when the run ends (a lost context frees nothing).
struct DeviceBuffers {
  runtime::CudaDevice& device;
  std::vector<uint64_t> pointers;

  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  ~DeviceBuffers() {
    for (uint64_t p : pointers) {
      try {
        device.free(p);
      } catch (const runtime::CudaError&) {  // the context is gone; so is the memory
      }
    }
  }
};

/// CUDA errors after which the context still works: checks before a launch, and a module the
/// device cannot load. Every other error may be sticky, so the worker restarts.
bool leaves_context_usable(const runtime::CudaError& e) {
  return e.call() == "launch" || e.call() == "cuModuleLoadData" ||
         e.call() == "cuModuleGetFunction";
}

/// The timing protocol of timing.h after the check call, each batch timed by CUDA events.
void time_on_device(runtime::CudaDevice& device,
                    const std::function<void()>& call,
                    double warmup_seconds,
                    const TimingOptions& timing,
                    MeasureResult* result) {
  if (timed_by_check_call(warmup_seconds, timing, result)) {
    return;
  }
  double start = now_seconds();
  auto batch = [&](int64_t number) {
    int calls = static_cast<int>(std::min<int64_t>(number, INT_MAX));
    return device.time_events(calls, call) * calls;
  };
  TimingResult timed = time_batches(batch, warmup_seconds, timing);
  result->run_seconds = now_seconds() - start;
  result->repeats = std::move(timed.repeats);
  result->number = timed.number;
  result->median_seconds = timed.median_seconds;
}

/// Runs `image` once on the inputs of `seed`, compares with `reference` (when given), then
/// times it as `request` asks. CudaError escapes to the caller.
Message run_image(runtime::CudaDevice& device,
                  const GpuImage& image,
                  const KernelSignature& signature,
                  const Message& request,
                  const StoredReference* reference) {
  const support::Json& h = request.header;
  double verify_start = now_seconds();
  KernelBuffers host(signature);
  host.fill_inputs(static_cast<uint64_t>(h.at("seed").as_int()));
  host.poison_outputs();
  DeviceBuffers buffers{device, {}};
  for (size_t i = 0; i < image.buffers.size(); ++i) {
    auto bytes = static_cast<size_t>(image.buffers[i].num_bytes());
    buffers.pointers.push_back(device.alloc(std::max<size_t>(bytes, 1)));
    if (i < image.num_params) {
      device.copy_to_device(buffers.pointers.back(), host.data(i), bytes);
    }
  }
  int module = device.load_module(image.cubin);
  std::vector<uint64_t> functions;
  std::vector<std::vector<uint64_t>> args;
  for (const GpuLaunch& k : image.kernels) {
    functions.push_back(device.function(module, k.name));
    args.emplace_back();
    for (int p : k.params) {
      args.back().push_back(buffers.pointers.at(static_cast<size_t>(p)));
    }
  }
  auto call = [&] {
    for (size_t k = 0; k < image.kernels.size(); ++k) {
      const GpuLaunch& launch = image.kernels[k];
      device.launch(functions[k], launch.grid, launch.block, launch.shared_bytes, args[k]);
    }
  };
  double warmup_seconds = device.time_events(1, call);
  device.synchronize();
  for (size_t i = signature.num_inputs; i < image.num_params; ++i) {
    device.copy_to_host(host.data(i), buffers.pointers[i],
                        static_cast<size_t>(image.buffers[i].num_bytes()));
  }
  std::vector<std::string> outputs;
  MeasureResult result = check_outputs(host, reference, h, verify_start, &outputs);
  if (!result.ok() || !h.contains("timing")) {
    return result_reply(result, std::move(outputs));
  }
  time_on_device(device, call, warmup_seconds, TimingOptions::from_json(h.at("timing")), &result);
  return result_reply(result, std::move(outputs));
}

}  // namespace

GpuWorker::GpuWorker() = default;
GpuWorker::~GpuWorker() = default;

Message GpuWorker::run(const Message& request,
                       const std::map<uint64_t, StoredReference>& references) {
  const support::Json& h = request.header;
  KernelSignature signature = KernelSignature::from_json(h.at("signature"));
  const StoredReference* reference = nullptr;
  if (!find_reference(h, references, &reference)) {
    return missing_reference_reply();
  }
  GpuImage image;
  try {
    TT_USER_CHECK(request.blobs.size() == 1) << "run: expected one GPU image blob";
    image = GpuImage::decode(request.blobs[0]);
    TT_USER_CHECK(image.num_params == signature.params.size())
        << "run: the GPU image has " << image.num_params << " parameters, the signature "
        << signature.params.size();
    for (size_t i = 0; i < image.num_params; ++i) {
      TT_USER_CHECK(image.buffers[i].num_bytes() == signature.params[i].num_bytes())
          << "run: GPU buffer '" << image.buffers[i].name << "' differs from the signature's";
    }
  } catch (const std::exception& e) {
    return result_reply(
        failure(MeasureStatus::CompileError, std::string("loading failed: ") + e.what()));
  }
  try {
    if (!device_) {
      device_ = std::make_unique<runtime::CudaDevice>(0);
    }
    return run_image(*device_, image, signature, request, reference);
  } catch (const runtime::CudaError& e) {
    if (leaves_context_usable(e)) {
      std::string what = e.call() == "launch" ? "invalid launch: " : "CUDA error: ";
      return result_reply(failure(MeasureStatus::RuntimeError, what + e.what()));
    }
    context_lost_ = true;
    Message reply =
        result_reply(failure(MeasureStatus::RuntimeError, std::string("CUDA error: ") + e.what() +
                                                              " (the GPU worker restarts)"));
    reply.header["context_lost"] = true;
    return reply;
  }
}

}  // namespace tensortune::measure::detail

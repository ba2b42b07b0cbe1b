// SPDX-License-Identifier: Apache-2.0
// The worker's GPU runs (see gpu_worker.h): each candidate a GpuKernel (its buffers and module,
// released when its run ends), the check call, then the timing protocol with CUDA events.
#include "measure/gpu_worker.h"

#include "measure/gpu_image.h"
#include "measure/worker_reply.h"
#include "tensortune/measure/gpu_kernel.h"
#include "tensortune/measure/kernel_buffers.h"
#include "tensortune/measure/measure_result.h"
#include "tensortune/measure/timing.h"
#include "tensortune/runtime/cuda_driver.h"
#include "tensortune/support/error.h"

namespace tensortune::measure::detail {
namespace {

/// Runs the candidate `object` once on the inputs of `seed`, compares with `reference` (when
/// given), then times it as `request` asks. Its module and device memory are released when it is
/// done, whatever happened. CudaError escapes to the caller.
Message run_image(runtime::CudaDevice& device,
                  const std::string& object,
                  const KernelSignature& signature,
                  const Message& request,
                  const StoredReference* reference) {
  const support::Json& h = request.header;
  double verify_start = now_seconds();
  KernelBuffers host(signature);
  host.fill_inputs(static_cast<uint64_t>(h.at("seed").as_int()));
  host.poison_outputs();
  GpuKernel kernel(device, object);
  kernel.upload(host);
  auto call = [&] {
    kernel.call();
  };
  double warmup_seconds = device.time_events(1, call);
  device.synchronize();
  kernel.download_outputs(host);
  std::vector<std::string> outputs;
  MeasureResult result = check_outputs(host, reference, h, verify_start, &outputs);
  if (!result.ok() || !h.contains("timing")) {
    return result_reply(result, std::move(outputs));
  }
  const TimingOptions timing = TimingOptions::from_json(h.at("timing"));
  if (timed_by_single_call(
          &warmup_seconds, timing, [&] { return device.time_events(1, call); }, &result)) {
    return result_reply(result, std::move(outputs));
  }
  double start = now_seconds();
  TimingResult timed = time_on_device(device, call, warmup_seconds, timing);
  result.run_seconds = now_seconds() - start;
  result.repeats = std::move(timed.repeats);
  result.number = timed.number;
  result.median_seconds = timed.median_seconds;
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
    return run_image(*device_, request.blobs[0], signature, request, reference);
  } catch (const runtime::CudaError& e) {
    if (e.leaves_context_usable()) {  // any other error may be sticky: the worker restarts
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

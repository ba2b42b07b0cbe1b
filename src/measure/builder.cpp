// SPDX-License-Identifier: Apache-2.0
// The Builder (see builder.h): LLVM IR or CUDA C generated here, optimisation and object emission
// (or NVRTC) in worker processes, one thread per worker feeding it candidates from a shared queue.
#include "tensortune/measure/builder.h"

#include "measure/gpu_image.h"
#include "measure/worker_process.h"
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/measure/timing.h"
#include "tensortune/measure/worker.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace tensortune::measure {
support::Json BuildResult::to_json() const {
  support::Json out = support::Json::object();
  out["signature"] = signature.to_json();
  out["status"] = status_name(status);
  out["message"] = message;
  out["build_seconds"] = build_seconds;
  return out;
}

BuildResult BuildResult::from_json(const support::Json& json, std::string object_code) {
  BuildResult r;
  r.signature = KernelSignature::from_json(json.at("signature"));
  r.status = parse_status(json.at("status").as_string("build field 'status'"));
  r.message = json.at("message").as_string("build field 'message'");
  r.build_seconds = json.at("build_seconds").as_double("build field 'build_seconds'");
  r.object = std::move(object_code);
  return r;
}

Builder::Builder(const target::Target& target, BuilderOptions options)
    : target_(target.is_gpu() ? target : codegen::resolve_host(target)),
      host_(target.is_gpu() ? codegen::resolve_host() : target_),
      options_(std::move(options)) {
  if (target_.is_gpu()) {  // NVRTC compiles in the build workers, under the same timeout
    std::string why;
    TT_USER_CHECK(codegen::nvrtc_available(&why))
        << "measure: cannot build for '" << target_.to_string()
        << "': nvrtc: not available: " << why;
  }
  std::string path = find_worker(options_.worker_path);
  int n = options_.workers > 0
              ? options_.workers
              : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  // Build workers compile; their thread count does not matter, their memory does.
  for (int i = 0; i < n; ++i) {
    workers_.push_back(std::make_unique<WorkerProcess>(path, worker_args(0, 1)));
  }
}

Builder::~Builder() = default;

BuildResult Builder::build_one(const ir::LoweredFunc& func,
                               const target::Target& target,
                               WorkerProcess& worker) const {
  double start = now_seconds();
  BuildResult result;
  result.signature = KernelSignature::of(func);
  detail::Message request;
  detail::GpuImage image;  // a GPU build's launch shapes, waiting for the worker's cubin
  try {
    if (target.is_gpu()) {
      detail::GpuSource gpu = detail::generate_gpu(func, target);
      image = std::move(gpu.image);
      request.blobs.push_back(std::move(gpu.source));
    } else {
      request.blobs.push_back(codegen::emit_bitcode(func, target));
    }
  } catch (const std::exception& e) {
    result.status = MeasureStatus::CompileError;
    result.message = std::string("code generation failed: ") + e.what();
    result.build_seconds = now_seconds() - start;
    return result;
  }
  request.header = support::Json::object();
  request.header["op"] = "build";
  request.header["name"] = func.name;
  request.header["target"] = target.to_string();
  if (target.is_gpu()) {
    request.header["cuda"] = true;
  }
  WorkerProcess::Exchange ex = worker.request(request, options_.timeout_s);
  result.build_seconds = now_seconds() - start;
  switch (ex.outcome) {
    case WorkerProcess::Outcome::Reply:
      if (ex.reply.header.at("ok").as_bool() && ex.reply.blobs.size() == 1) {
        if (target.is_gpu()) {
          image.cubin = std::move(ex.reply.blobs[0]);
          result.object = image.encode();
        } else {
          result.object = std::move(ex.reply.blobs[0]);
        }
      } else {
        result.status = MeasureStatus::CompileError;
        result.message = "compilation failed: " + ex.reply.header.at("message").as_string();
      }
      break;
    case WorkerProcess::Outcome::Timeout:
      result.status = MeasureStatus::CompileTimeout;
      result.message = "the build took longer than " + std::to_string(options_.timeout_s) +
                       " s; its worker was killed";
      break;
    case WorkerProcess::Outcome::Died:
      result.status = MeasureStatus::CompileError;
      result.message =
          "the build worker died: " + death_text(ex.signal, ex.exit_status, ex.stderr_tail);
      break;
  }
  return result;
}

BuildResult Builder::build_for_host(const ir::LoweredFunc& func) {
  return build_one(func, host_, *workers_.at(0));
}

std::vector<BuildResult> Builder::build(const std::vector<ir::LoweredFunc>& candidates) {
  std::vector<BuildResult> results(candidates.size());
  std::atomic<size_t> next{0};
  std::vector<std::string> startup_errors(workers_.size());
  auto serve = [&](size_t w) {
    for (size_t i = next++; i < candidates.size(); i = next++) {
      try {
        results[i] = build_one(candidates[i], target_, *workers_[w]);
      } catch (const std::exception& e) {  // a worker that cannot start: the job cannot go on
        startup_errors[w] = e.what();
        return;
      }
    }
  };
  size_t n = std::min(workers_.size(), candidates.size());
  std::vector<std::thread> threads;
  for (size_t w = 1; w < n; ++w) {
    threads.emplace_back(serve, w);
  }
  if (n > 0) {
    serve(0);
  }
  for (std::thread& t : threads) {
    t.join();
  }
  for (const std::string& e : startup_errors) {
    TT_USER_CHECK(e.empty()) << e;
  }
  return results;
}

}  // namespace tensortune::measure

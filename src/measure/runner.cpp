// SPDX-License-Identifier: Apache-2.0
// The Runner (see runner.h): requests to the run worker, and the translation of every way a
// candidate can fail into a MeasureResult.
#include "tensortune/measure/runner.h"

#include "measure/gpu_image.h"
#include "measure/worker_process.h"
#include "tensortune/measure/worker.h"
#include "tensortune/runtime/cuda_driver.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace tensortune::measure {
namespace {

constexpr double kReferenceTimeoutS = 120;
/// outputs() runs a workload's default schedule once: a naive loop nest (a GPU target's on the
/// host CPU), minutes for a GEMM 4096^3, so it gets far longer than a candidate.
constexpr double kOutputsTimeoutS = 1800;

std::string seconds_text(double s) {
  std::ostringstream os;
  os << std::setprecision(3) << s;
  return os.str();
}

/// The worker's result from a run reply, with what only this side knows (the build, and the
/// wall time so far) kept from `so_far`.
MeasureResult read_reply(const support::Json& header, const MeasureResult& so_far) {
  MeasureResult result = MeasureResult::from_json(header);
  result.build_seconds = so_far.build_seconds;
  result.wall_seconds = so_far.wall_seconds;
  return result;
}

/// A run request for a built kernel on the inputs of `seed`; callers add what to do with it.
detail::Message run_request(const BuildResult& build, uint64_t seed, bool gpu) {
  detail::Message request;
  request.header = support::Json::object();
  request.header["op"] = "run";
  if (gpu) {
    request.header["gpu"] = true;
  }
  request.header["signature"] = build.signature.to_json();
  request.header["seed"] = static_cast<int64_t>(seed);
  request.blobs.push_back(build.object);
  return request;
}

/// Sends a run request. A GPU worker that lost its CUDA context replies, then exits: reap it
/// now so the next request starts a fresh one.
WorkerProcess::Exchange exchange(WorkerProcess& worker,
                                 const detail::Message& request,
                                 double timeout_s) {
  WorkerProcess::Exchange ex = worker.request(request, timeout_s);
  if (ex.outcome == WorkerProcess::Outcome::Reply && ex.reply.header.contains("context_lost")) {
    worker.stop();
  }
  return ex;
}

/// The GPU worker's command line: no address-space limit (the CUDA driver reserves far more
/// virtual memory than it uses) and every hardware thread for the host-built reference kernel
/// (parallel_outer_loops; GPU runs leave the host pool idle, and its threads never spin).
std::vector<std::string> gpu_worker_args() {
  return {"--memory-limit-mb", "0", "--threads", "0"};
}

}  // namespace

Runner::Runner(RunnerOptions options) : options_(std::move(options)) {
  if (options_.gpu) {
    std::string why = runtime::cuda_unavailable_reason();
    TT_USER_CHECK(why.empty()) << "measure: no CUDA device: " << why;
  }
  worker_ = std::make_unique<WorkerProcess>(
      find_worker(options_.worker_path),
      options_.gpu ? gpu_worker_args() : worker_args(options_.memory_limit_mb, options_.threads));
}

Runner::~Runner() = default;

int Runner::worker_starts() const {
  return worker_->generation();
}

void Runner::restart_worker() {
  worker_->stop();
}

void Runner::send_reference(const Reference& reference) {
  if (!worker_->running() || worker_->generation() != sent_generation_) {
    sent_references_.clear();
  }
  if (sent_references_.count(reference.id) != 0) {
    return;
  }
  detail::Message request;
  request.header = support::Json::object();
  request.header["op"] = "reference";
  request.header["id"] = static_cast<int64_t>(reference.id);
  request.header["tolerance"] = reference.tolerance.to_json();
  request.blobs = reference.outputs;
  WorkerProcess::Exchange ex = worker_->request(request, kReferenceTimeoutS);
  TT_USER_CHECK(ex.outcome == WorkerProcess::Outcome::Reply)
      << "measure: the worker did not accept the reference outputs: "
      << death_text(ex.signal, ex.exit_status, ex.stderr_tail);
  sent_generation_ = worker_->generation();
  sent_references_.insert(reference.id);
}

MeasureResult Runner::run(const BuildResult& build, const Reference& reference) {
  MeasureResult result;
  result.build_seconds = build.build_seconds;
  result.wall_seconds = build.build_seconds;
  if (!build.ok()) {
    result.status = build.status;
    result.message = build.message;
    return result;
  }
  if (!build.signature.compatible_with(reference.signature)) {
    result.status = MeasureStatus::WrongResult;
    result.message = "the kernel's parameters differ from the reference's";
    return result;
  }
  double start = now_seconds();
  detail::Message request = run_request(build, reference.seed, options_.gpu);
  request.header["reference"] = static_cast<int64_t>(reference.id);
  request.header["timing"] = options_.timing.to_json();
  WorkerProcess::Exchange ex;
  for (int attempt = 0; attempt < 2; ++attempt) {
    send_reference(reference);
    ex = exchange(*worker_, request, options_.timeout_s);
    if (ex.outcome != WorkerProcess::Outcome::Reply ||
        !ex.reply.header.contains("missing_reference")) {
      break;
    }
    sent_generation_ = -1;  // the worker lost it: send it again
  }
  result.wall_seconds += now_seconds() - start;
  switch (ex.outcome) {
    case WorkerProcess::Outcome::Reply:
      result = read_reply(ex.reply.header, result);
      break;
    case WorkerProcess::Outcome::Timeout:
      result.status = MeasureStatus::RunTimeout;
      result.message = "no result within " + seconds_text(options_.timeout_s) +
                       " s (check run and timing); the worker was killed";
      break;
    case WorkerProcess::Outcome::Died:
      result.status = MeasureStatus::RuntimeError;
      result.signal = ex.signal;
      result.message =
          "the kernel killed its worker: " + death_text(ex.signal, ex.exit_status, ex.stderr_tail);
      break;
  }
  return result;
}

std::vector<std::string> Runner::outputs(const BuildResult& build, uint64_t seed) {
  TT_USER_CHECK(build.ok()) << "measure: kernel '" << build.signature.name
                            << "' did not build: " << build.message;
  // A GPU runner also runs host-built kernels (a GPU target's reference) on its CPU side.
  detail::Message request =
      run_request(build, seed, options_.gpu && detail::is_gpu_image(build.object));
  request.header["return_outputs"] = true;
  const double timeout_s = std::max(options_.timeout_s, kOutputsTimeoutS);
  WorkerProcess::Exchange ex = exchange(*worker_, request, timeout_s);
  TT_USER_CHECK(ex.outcome == WorkerProcess::Outcome::Reply)
      << "measure: kernel '" << build.signature.name << "' "
      << (ex.outcome == WorkerProcess::Outcome::Timeout
              ? "ran for more than " + seconds_text(timeout_s) + " s"
              : "killed its worker: " + death_text(ex.signal, ex.exit_status, ex.stderr_tail));
  MeasureResult result = MeasureResult::from_json(ex.reply.header);
  TT_USER_CHECK(result.ok()) << "measure: kernel '" << build.signature.name
                             << "' failed: " << status_name(result.status) << ": "
                             << result.message;
  TT_CHECK(ex.reply.blobs.size() == build.signature.params.size() - build.signature.num_inputs)
      << "measure: the worker returned " << ex.reply.blobs.size() << " outputs";
  return std::move(ex.reply.blobs);
}

}  // namespace tensortune::measure

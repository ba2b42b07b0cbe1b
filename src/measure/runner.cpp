// SPDX-License-Identifier: Apache-2.0
// The Runner (see runner.h): requests to the run worker, and the translation of every way a
// candidate can fail into a MeasureResult.
#include "tensortune/measure/runner.h"

#include "measure/worker_args.h"
#include "measure/worker_process.h"
#include "tensortune/measure/worker.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace tensortune::measure {
namespace {

constexpr double kReferenceTimeoutS = 120;

support::Json timing_json(const TimingOptions& t) {
  support::Json out = support::Json::object();
  out["repeat"] = t.repeat;
  out["min_repeat_ms"] = t.min_repeat_ms;
  out["max_number"] = t.max_number;
  out["cache_flush"] = t.cache_flush;
  return out;
}

std::string seconds_text(double s) {
  std::ostringstream os;
  os << std::setprecision(3) << s;
  return os.str();
}

/// Fills `result` from a run reply's header.
void read_reply(const support::Json& h, MeasureResult* result) {
  result->status = parse_status(h.at("status").as_string());
  result->message = h.at("message").as_string();
  if (h.contains("verify_seconds")) {
    result->verify_seconds = h.at("verify_seconds").as_double();
  }
  if (h.contains("run_seconds")) {
    result->run_seconds = h.at("run_seconds").as_double();
  }
  if (result->status == MeasureStatus::Ok && h.contains("repeats")) {
    for (const support::Json& r : h.at("repeats").as_array()) {
      result->repeats.push_back(r.as_double());
    }
    result->number = h.at("number").as_int();
    result->median_seconds = h.at("median_seconds").as_double();
  }
}

}  // namespace

Runner::Runner(RunnerOptions options) : options_(std::move(options)) {
  worker_ = std::make_unique<WorkerProcess>(
      find_worker(options_.worker_path),
      detail::worker_args(options_.memory_limit_mb, options_.threads));
}

Runner::~Runner() = default;

int Runner::worker_starts() const {
  return worker_->generation();
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
      << detail::death_text(ex.signal, ex.exit_status, ex.stderr_tail);
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
  detail::Message request;
  request.header = support::Json::object();
  request.header["op"] = "run";
  request.header["signature"] = build.signature.to_json();
  request.header["seed"] = static_cast<int64_t>(reference.seed);
  request.header["reference"] = static_cast<int64_t>(reference.id);
  request.header["timing"] = timing_json(options_.timing);
  request.blobs.push_back(build.object);
  WorkerProcess::Exchange ex;
  for (int attempt = 0; attempt < 2; ++attempt) {
    send_reference(reference);
    ex = worker_->request(request, options_.timeout_s);
    if (ex.outcome != WorkerProcess::Outcome::Reply ||
        !ex.reply.header.contains("missing_reference")) {
      break;
    }
    sent_generation_ = -1;  // the worker lost it: send it again
  }
  result.wall_seconds += now_seconds() - start;
  switch (ex.outcome) {
    case WorkerProcess::Outcome::Reply:
      read_reply(ex.reply.header, &result);
      break;
    case WorkerProcess::Outcome::Timeout:
      result.status = MeasureStatus::RunTimeout;
      result.message = "no result within " + seconds_text(options_.timeout_s) +
                       " s (check run and timing); the worker was killed";
      break;
    case WorkerProcess::Outcome::Died:
      result.status = MeasureStatus::RuntimeError;
      result.signal = ex.signal;
      result.message = "the kernel killed its worker: " +
                       detail::death_text(ex.signal, ex.exit_status, ex.stderr_tail);
      break;
  }
  return result;
}

std::vector<std::string> Runner::outputs(const BuildResult& build, uint64_t seed) {
  TT_USER_CHECK(build.ok()) << "measure: kernel '" << build.signature.name
                            << "' did not build: " << build.message;
  detail::Message request;
  request.header = support::Json::object();
  request.header["op"] = "run";
  request.header["signature"] = build.signature.to_json();
  request.header["seed"] = static_cast<int64_t>(seed);
  request.header["return_outputs"] = true;
  request.blobs.push_back(build.object);
  WorkerProcess::Exchange ex = worker_->request(request, std::max(options_.timeout_s, 600.0));
  TT_USER_CHECK(ex.outcome == WorkerProcess::Outcome::Reply)
      << "measure: kernel '" << build.signature.name << "' "
      << (ex.outcome == WorkerProcess::Outcome::Timeout
              ? "ran for more than 600 s"
              : "killed its worker: " +
                    detail::death_text(ex.signal, ex.exit_status, ex.stderr_tail));
  MeasureResult result;
  read_reply(ex.reply.header, &result);
  TT_USER_CHECK(result.ok()) << "measure: kernel '" << build.signature.name
                             << "' failed: " << status_name(result.status) << ": "
                             << result.message;
  TT_CHECK(ex.reply.blobs.size() ==
           build.signature.params.size() - build.signature.num_inputs)
      << "measure: the worker returned " << ex.reply.blobs.size() << " outputs";
  return std::move(ex.reply.blobs);
}

}  // namespace tensortune::measure

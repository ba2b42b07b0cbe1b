// SPDX-License-Identifier: Apache-2.0
// Private to src/measure: what the CPU and GPU sides of the worker share for a run request: the
// stored reference, the check of the outputs, the single-call timing shortcut and the reply.
#pragma once

#include "measure/protocol.h"
#include "tensortune/measure/kernel_buffers.h"
#include "tensortune/measure/measure_input.h"
#include "tensortune/measure/measure_result.h"
#include "tensortune/measure/timing.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tensortune::measure::detail {

/// Reference outputs the worker keeps by id (the "reference" request).
struct StoredReference {
  std::vector<std::string> outputs;
  Tolerance tolerance;
};

/// The reference a run request names: `*found` is nullptr when it names none. False when it names
/// an id the worker does not hold; the caller then answers missing_reference_reply().
inline bool find_reference(const support::Json& header,
                           const std::map<uint64_t, StoredReference>& references,
                           const StoredReference** found) {
  *found = nullptr;
  if (!header.contains("reference")) {
    return true;
  }
  auto it = references.find(static_cast<uint64_t>(header.at("reference").as_int()));
  if (it == references.end()) {
    return false;
  }
  *found = &it->second;
  return true;
}

/// The reply to a run request naming a reference the worker does not hold (it was restarted):
/// the measurer sends the reference again and retries.
inline Message missing_reference_reply() {
  Message reply;
  reply.header = support::Json::object();
  reply.header["missing_reference"] = true;
  return reply;
}

/// The result in MeasureResult's JSON form, then any output bytes.
inline Message result_reply(const MeasureResult& result, std::vector<std::string> outputs = {}) {
  Message reply;
  reply.header = result.to_json();
  reply.blobs = std::move(outputs);
  return reply;
}

/// A failed trial with its status and message.
inline MeasureResult failure(MeasureStatus status, std::string message) {
  MeasureResult result;
  result.status = status;
  result.message = std::move(message);
  return result;
}

/// The check after a candidate's first call: Ok, or WrongResult when its outputs in `buffers`
/// differ from `reference` (none: Ok), with verify_seconds counted from `verify_start`. Puts the
/// output bytes in `outputs` when the request `header` asks for them.
inline MeasureResult check_outputs(const KernelBuffers& buffers,
                                   const StoredReference* reference,
                                   const support::Json& header,
                                   double verify_start,
                                   std::vector<std::string>* outputs) {
  MeasureResult result;
  if (reference != nullptr) {
    std::optional<std::string> diff =
        compare_outputs(buffers, reference->outputs, reference->tolerance);
    if (diff) {
      result = failure(MeasureStatus::WrongResult, "wrong result: " + *diff);
    }
  }
  result.verify_seconds = now_seconds() - verify_start;
  if (header.contains("return_outputs") && header.at("return_outputs").as_bool()) {
    *outputs = buffers.output_bytes();
  }
  return result;
}

/// TimingOptions::single_call_above_s. The check call is the kernel's first: it pays for cold
/// caches and TLBs and for waking the threads, which can make a 9 us kernel take 130 us. So a
/// check call over the limit is followed by one more call (`again`, returning its seconds); only
/// when that one is over the limit too, and lasts a repeat (min_repeat_ms) on its own, is the
/// candidate hopeless, timed by that warm call alone (repeats = {its time}, number = 1). Returns
/// true (and fills `result`) then; otherwise
/// `*warmup_seconds` is the faster of the two calls, the timing loop's first guess.
template <typename Again>
bool timed_by_single_call(double* warmup_seconds,
                          const TimingOptions& timing,
                          Again&& again,
                          MeasureResult* result) {
  if (timing.single_call_above_s <= 0 || *warmup_seconds <= timing.single_call_above_s) {
    return false;
  }
  const double warm = again();
  // A call shorter than a repeat is no measurement on its own: a few ns of kernel read as the
  // timer's 30 ns, a small parallel kernel as the 100 us of waking its threads. The full
  // protocol (bounded by budget_s) times those.
  if (warm <= timing.single_call_above_s || warm * 1e3 < timing.min_repeat_ms) {
    *warmup_seconds = std::min(*warmup_seconds, warm);
    return false;
  }
  result->repeats = {warm};  // hopeless: its one measurement
  result->number = 1;
  result->median_seconds = warm;
  return true;
}

}  // namespace tensortune::measure::detail

// SPDX-License-Identifier: Apache-2.0
// Private to src/measure: the reply a worker (CPU or GPU) sends for a run request.
#pragma once

#include "measure/protocol.h"
#include "tensortune/measure/measure_result.h"

#include <string>
#include <utility>
#include <vector>

namespace tensortune::measure::detail {

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

}  // namespace tensortune::measure::detail

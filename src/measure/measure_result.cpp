// SPDX-License-Identifier: Apache-2.0
// MeasureStatus names and the JSON form of a MeasureResult.
#include "tensortune/measure/measure_result.h"

#include "tensortune/support/error.h"

#include <array>

namespace tensortune::measure {
namespace {

constexpr std::array<const char*, 6> kNames = {"Ok",           "CompileError", "CompileTimeout",
                                               "RuntimeError", "RunTimeout",   "WrongResult"};

}  // namespace

const char* status_name(MeasureStatus status) {
  return kNames.at(static_cast<size_t>(status));
}

MeasureStatus parse_status(const std::string& name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (name == kNames[i]) {
      return static_cast<MeasureStatus>(i);
    }
  }
  throw UserError("unknown measure status '" + name +
                  "' (expected Ok, CompileError, CompileTimeout, RuntimeError, RunTimeout or "
                  "WrongResult)");
}

support::Json MeasureResult::to_json() const {
  support::Json out = support::Json::object();
  out["status"] = status_name(status);
  out["message"] = message;
  out["signal"] = signal;
  support::Json list = support::Json::array();
  for (double r : repeats) {
    list.push_back(r);
  }
  out["repeats"] = std::move(list);
  out["median_seconds"] = median_seconds;
  out["number"] = number;
  out["build_seconds"] = build_seconds;
  out["run_seconds"] = run_seconds;
  out["verify_seconds"] = verify_seconds;
  out["wall_seconds"] = wall_seconds;
  return out;
}

MeasureResult MeasureResult::from_json(const support::Json& json) {
  MeasureResult r;
  r.status = parse_status(json.at("status").as_string("result field 'status'"));
  r.message = json.at("message").as_string("result field 'message'");
  r.signal = static_cast<int>(json.at("signal").as_int("result field 'signal'"));
  for (const support::Json& v : json.at("repeats").as_array("result field 'repeats'")) {
    r.repeats.push_back(v.as_double("a repeat"));
  }
  r.median_seconds = json.at("median_seconds").as_double("result field 'median_seconds'");
  r.number = json.at("number").as_int("result field 'number'");
  r.build_seconds = json.at("build_seconds").as_double("result field 'build_seconds'");
  r.run_seconds = json.at("run_seconds").as_double("result field 'run_seconds'");
  r.verify_seconds = json.at("verify_seconds").as_double("result field 'verify_seconds'");
  r.wall_seconds = json.at("wall_seconds").as_double("result field 'wall_seconds'");
  return r;
}

}  // namespace tensortune::measure

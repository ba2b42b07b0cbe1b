// SPDX-License-Identifier: Apache-2.0
// Schedules from Python: the JSON of tensortune/schedule.py's step objects checked and
// canonicalized by schedule::parse_schedule, and lowered or built to what `tensortune show
// --emit` prints (the loop IR, LLVM IR, assembly, CUDA C, PTX).
#include "bindings.h"
#include "pipeline.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "tensortune/te/workload.h"

namespace tensortune::python {
namespace {

/// The schedule of `json` for `workload`: one without a workload key gets the workload's, and one
/// with another key is a ScheduleError when applied, as every schedule is.
schedule::Schedule schedule_for(const te::Workload& workload, const std::string& json) {
  schedule::Schedule s = schedule::parse_schedule(json);
  if (s.workload_key.empty()) {
    s.workload_key = workload.key();
  }
  return s;
}

}  // namespace

void define_schedule(py::module_& m) {
  m.def(
      "_parse_schedule",
      [](const std::string& json) {
        return schedule::to_json(schedule::parse_schedule(json)).dump();
      },
      "Checks schedule JSON and returns it in canonical form; UserError naming the step and "
      "field.");
  m.def(
      "_schedule_text",
      [](const std::string& json) { return schedule::to_string(schedule::parse_schedule(json)); },
      "One readable line per step.");
  m.def(
      "_emit",
      [](const te::Workload& workload, const std::string& json, const std::string& target,
         const std::string& emit) {
        const schedule::Schedule s = schedule_for(workload, json);
        const target::Target t = cli::resolve_target(target);
        py::gil_scoped_release release;
        return cli::render_kernel(emit, workload, s, t);
      },
      py::arg("workload"), py::arg("schedule"), py::arg("target"), py::arg("emit"),
      "What `tensortune show --emit EMIT` prints: steps, ir, llvm, asm, cuda or ptx.");
}

}  // namespace tensortune::python

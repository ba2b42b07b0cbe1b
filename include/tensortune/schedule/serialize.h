// SPDX-License-Identifier: Apache-2.0
// Schedules to JSON and back. The format is versioned; unknown versions and malformed input are
// UserErrors naming the step index and field.
#pragma once

#include "tensortune/schedule/schedule.h"
#include "tensortune/support/json.h"

#include <string>

namespace tensortune::schedule {

/// The schedule JSON format version written by to_json().
inline constexpr int kScheduleFormatVersion = 1;

/// {"version":1,"workload_key":"...","steps":[{"kind":"split","stage":"C","axis":"i",
///  "factor":8,"nparts":false}, ...]}
support::Json to_json(const Schedule& schedule);
support::Json to_json(const Step& step);
Schedule schedule_from_json(const support::Json& json);
Step step_from_json(const support::Json& json);
/// Parses JSON text; UserError on malformed text or fields. Reading is strict: a missing,
/// mistyped or unknown field is a UserError naming the step index (from 0) and the field, e.g.
/// "schedule step 3 (split): field 'factor' must be an integer". An annotate step is written
/// with its loop kind as "kind": {"kind":"vectorize","stage":"C","axis":"j.i"}.
Schedule parse_schedule(const std::string& text);

}  // namespace tensortune::schedule

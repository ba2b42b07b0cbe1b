// SPDX-License-Identifier: Apache-2.0
// Database fixtures for tests: a workload registered from the object itself, and Ok records
// whose schedules are real step lists serialised with schedule::to_json.
#pragma once

#include "tensortune/database/database.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/te/workload.h"

#include <string>
#include <vector>

namespace tensortune::test {

/// Registers `w` in `db` (name, canonical text, FLOPs, and `op` / `spec` when given).
inline void register_workload(database::Database& db,
                              const te::Workload& w,
                              const std::string& op = "",
                              const std::string& spec = "") {
  database::WorkloadInfo info;
  info.key = w.key();
  info.name = w.name();
  info.canonical_text = w.canonical_text();
  info.flop_count = w.flop_count();
  info.op = op;
  info.spec = spec;
  db.put_workload(info);
}

/// An Ok record of `w` on `target` taking `seconds`, with `schedule_text` as its schedule.
inline database::Record raw_record(const te::Workload& w,
                                   const database::TargetKey& target,
                                   const std::string& schedule_text,
                                   double seconds) {
  database::Record r;
  r.workload_key = w.key();
  r.target = target;
  r.schedule = schedule_text;
  r.knobs = "{}";
  r.repeats = {seconds};
  r.median_seconds = seconds;
  r.timestamp = 1700000000;
  return r;
}

/// An Ok record whose schedule is `steps` for `w`.
inline database::Record record(const te::Workload& w,
                               const database::TargetKey& target,
                               const std::vector<schedule::Step>& steps,
                               double seconds) {
  return raw_record(w, target, schedule::to_json(schedule::Schedule{w.key(), steps}).dump(),
                    seconds);
}

}  // namespace tensortune::test

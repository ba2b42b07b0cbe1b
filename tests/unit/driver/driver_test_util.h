// SPDX-License-Identifier: Apache-2.0
// Helpers for the driver tests: a fresh database file per test, workloads registered from their
// specs, and records whose schedules are real step lists serialised with schedule::to_json.
#pragma once

#include "common/temp_dir.h"
#include "tensortune/database/database.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/te/operators.h"

#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

namespace tensortune::driver::testing {

using test::TempDir;

/// Registers the workload of `spec` in `db` (name, canonical text, FLOPs, operator, spec).
inline te::Workload put_workload(database::Database& db, const std::string& spec) {
  te::Workload w = te::make_workload(spec);
  database::WorkloadInfo info;
  info.key = w.key();
  info.name = w.name();
  info.canonical_text = w.canonical_text();
  info.flop_count = w.flop_count();
  info.op = te::parse_workload_spec(spec).name;
  info.spec = spec;
  db.put_workload(info);
  return w;
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

/// Adds one record and returns its id.
inline int64_t add(database::Database& db, const database::Record& r) {
  return db.add_records({r}).at(0);
}

}  // namespace tensortune::driver::testing

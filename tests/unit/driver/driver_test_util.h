// SPDX-License-Identifier: Apache-2.0
// Helpers for the driver tests: a fresh database file per test, workloads registered from their
// specs, and records whose schedules are real step lists serialised with schedule::to_json.
#pragma once

#include "common/db_records.h"
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

using test::raw_record;
using test::record;

/// Registers the workload of `spec` in `db` (name, canonical text, FLOPs, operator, spec).
inline te::Workload put_workload(database::Database& db, const std::string& spec) {
  te::Workload w = te::make_workload(spec);
  test::register_workload(db, w, te::parse_workload_spec(spec).name, spec);
  return w;
}

/// Adds one record and returns its id.
inline int64_t add(database::Database& db, const database::Record& r) {
  return db.add_records({r}).at(0);
}

}  // namespace tensortune::driver::testing

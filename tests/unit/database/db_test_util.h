// SPDX-License-Identifier: Apache-2.0
// Helpers for the database tests: a fresh file per test, and workloads and records made up of
// plain strings and numbers (the database never interprets them).
#pragma once

#include "common/temp_dir.h"
#include "tensortune/database/database.h"
#include "tensortune/support/hash.h"

#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <unistd.h>

namespace tensortune::database::testing {

using test::TempDir;

inline WorkloadInfo workload(const std::string& op, int n) {
  WorkloadInfo w;
  w.name = op + "_" + std::to_string(n) + "x" + std::to_string(n) + "_float32";
  w.op = op;
  w.spec = op + ":M=" + std::to_string(n);
  w.canonical_text = "compute " + w.name;
  w.key = w.name + "_" + support::hash_hex(w.canonical_text);  // as te::Workload::key makes it
  w.flop_count = 2.0 * n * n * n;
  return w;
}

inline TargetKey cpu(const std::string& fingerprint = "{\"cpu\":\"zen4\",\"cores\":2}") {
  return TargetKey{"llvm -mcpu=znver4 -cores=2", fingerprint};
}

/// An Ok record (status "Ok" when seconds > 0) or a failure with `status`.
inline Record record(const WorkloadInfo& w,
                     const TargetKey& t,
                     int tile,
                     double seconds,
                     const std::string& status = "Ok") {
  Record r;
  r.workload_key = w.key;
  r.target = t;
  r.schedule = "{\"steps\":[{\"kind\":\"split\",\"factor\":" + std::to_string(tile) + "}]}";
  r.knobs = "{\"tile\":" + std::to_string(tile) + "}";
  r.status = status;
  if (status == "Ok") {
    r.repeats = {seconds * 1.01, seconds, seconds * 0.99};
    r.median_seconds = seconds;
  } else {
    r.error = "the kernel killed its worker: signal 11";
  }
  r.build_seconds = 0.125;
  r.run_seconds = 0.25;
  r.wall_seconds = 0.5;
  r.seed = 7;
  r.tool_version = "0.1.0";
  r.git_revision = "abc1234";
  r.timestamp = 1700000000 + tile;
  return r;
}

}  // namespace tensortune::database::testing

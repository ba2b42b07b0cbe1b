// SPDX-License-Identifier: Apache-2.0
// What the lookup benchmarks share (driver_lookup for C++, c_api_lookup for the C API): a
// database of 10^6 records (1000 matmul workloads x 2 target identities x 500 records, one in
// eight a failure) and per-call timing (wall and thread CPU time, median / p99 / max).
#pragma once

#include "tensortune/database/database.h"
#include "tensortune/te/workload.h"

#include <functional>
#include <string>
#include <vector>

namespace tensortune::bench {

constexpr int kWorkloads = 1000;
constexpr int kRecordsPerPair = 500;

/// The spec of workload `w`: distinct matmul shapes.
std::string spec_of(int w);

/// Writes the records of `workloads` (made from spec_of(0..kWorkloads-1)) for each target: a real
/// schedule each (i and j split, reordered, outer loop parallel, j.i vectorized).
void fill(database::Database& db,
          const std::vector<te::Workload>& workloads,
          const std::vector<database::TargetKey>& targets);

/// Seconds on a monotonic clock.
double now();

struct Percentiles {
  double median, p99, max;
};

/// Wall-time percentiles of `n` calls of call(i); with `cpu`, also their thread-CPU-time
/// percentiles (which, unlike wall time, leave out the time the thread waited for a core while
/// other processes ran: on a loaded two-core machine, whole 4 ms scheduler slices).
Percentiles time_calls(int n, const std::function<void(int)>& call, Percentiles* cpu = nullptr);

/// "median 12.3 us, p99 45.6 us, max 78.9 us".
std::string us(const Percentiles& p);

/// A database file path in the temporary folder, named after `stem` and this process; remove()
/// deletes it and its WAL files.
std::string temp_db_path(const std::string& stem);
void remove_db(const std::string& path);

}  // namespace tensortune::bench

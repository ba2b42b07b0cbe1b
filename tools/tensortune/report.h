// SPDX-License-Identifier: Apache-2.0
// The tuning report: per workload and target, the tuning curves, the distribution of measured
// candidates, errors by class, and the best schedule beside the default and a chosen record;
// optionally against a second database. One self-contained HTML file, and a text summary.
#pragma once

#include "tensortune/database/database.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tensortune::cli {

/// GFLOP/s of a record at its one time (database::Record::seconds); 0 unless Ok.
double record_gflops(const database::Record& r, double flop_count);
/// "confirmed" (its time is a side-by-side confirmation) or "unconfirmed" (a single stored
/// measurement); every surface labels a record's time with it.
std::string time_kind(const database::Record& r);

/// The records of one workload on one target in one database.
struct ReportEntry {
  std::string source;  ///< the database path (tells two databases apart)
  database::WorkloadInfo workload;
  database::TargetKey target;
  std::vector<database::Record> history;  ///< insertion order
  /// The best record that may be best and replays onto the workload (0 = none); see best().
  int64_t best_id = 0;
  /// The FMA peak stored with the tuning run of the best record, else with the latest run on
  /// this target that stored one (GFLOP/s, 0 = none stored), its spread, and the run.
  double peak_gflops = 0;
  double peak_spread = 0;
  int64_t peak_run = 0;

  int64_t ok() const;
  std::map<std::string, int64_t> by_status() const;
  const database::Record* best() const;
  /// The `k` records `best` ranks first (by Record::rank_seconds, those that may be best).
  std::vector<const database::Record*> top(size_t k) const;
  /// The total tuning time of the records (their wall seconds), the last x of the time curve.
  double wall_seconds() const;
  /// The record of the default schedule (no steps), when one was measured.
  const database::Record* default_record() const;
  double gflops(const database::Record& r) const;
};

struct ReportOptions {
  /// Workload keys or specs to include (empty = every workload with records).
  std::vector<std::string> workloads;
  /// Keep only targets whose string contains this text (empty = all).
  std::string target_filter;
  /// The filter read as a target ("native", "llvm -cores=2"): its canonical string, which tune
  /// stores, also matches (empty when the filter does not parse as a target).
  std::string target_exact;
  /// A record shown beside the best and the default (0 = none).
  int64_t record_id = 0;
};

/// Collects the entries of `db` (sorted by workload name, then target). UserError when a
/// requested workload has no records.
std::vector<ReportEntry> collect_entries(const database::Database& db,
                                         const ReportOptions& options);

/// The whole HTML document. `compare` holds the entries of a second database (may be empty).
std::string render_html(const std::vector<ReportEntry>& entries,
                        const std::vector<ReportEntry>& compare,
                        const ReportOptions& options,
                        const std::optional<database::Record>& chosen);

/// A few lines per entry for the terminal.
std::string render_text(const std::vector<ReportEntry>& entries,
                        const std::vector<ReportEntry>& compare);

/// The unfinished tuning runs (ended = 0: killed, or still running), a line each; "" when none.
std::string render_unfinished_runs(const database::Database& db);

}  // namespace tensortune::cli

// SPDX-License-Identifier: Apache-2.0
// Export and import of a tuning database as JSON lines: workloads, then records, each line a
// sorted-key JSON object, lines in a stable order, so exports diff cleanly under version control.
#pragma once

#include "tensortune/database/database.h"

#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace tensortune::database {

/// Writes every workload (sorted by key) and every record (Database::all_records order) of `db`;
/// record ids and tuning runs are local to a database and are not written. Returns the lines.
/// A record row that cannot be read throws UserError naming it, unless `unreadable` is given:
/// then it is left out and its message appended there, so the rest can still be rescued.
int64_t export_jsonl(const Database& db,
                     std::ostream& out,
                     std::vector<std::string>* unreadable = nullptr);

struct ImportSummary {
  int64_t workloads = 0;
  int64_t imported = 0;
  /// Records already present (same workload, target, schedule, seed and timestamp).
  int64_t skipped = 0;
};

/// An export read and checked line by line, not written anywhere yet.
struct ImportData {
  std::string name;  ///< the file, for messages
  std::vector<WorkloadInfo> workloads;
  std::vector<int64_t> workload_lines;
  std::vector<Record> records;
  std::vector<int64_t> record_lines;
};

/// Reads a whole export and checks every line without touching a database, so a bad file fails
/// before a database is opened (created, migrated) at all. A malformed line (bad JSON, a missing
/// field, a wrong type, an unknown format version or status, a workload whose key is not its
/// name and the hash of its canonical text, a FLOP count that is not positive) throws UserError
/// "NAME:LINE: ...; nothing was imported".
ImportData read_jsonl(std::istream& in, const std::string& name);

/// Checks `data` against `db` (every record's workload is in the file or the database; a
/// workload the database holds already must have the same name, operator and FLOP count: its
/// stored definition is kept) and writes it in one transaction; on an error nothing is written.
ImportSummary import_jsonl(Database& db, const ImportData& data);

/// read_jsonl, then import_jsonl.
ImportSummary import_jsonl(Database& db, std::istream& in, const std::string& name);

}  // namespace tensortune::database

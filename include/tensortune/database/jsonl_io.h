// SPDX-License-Identifier: Apache-2.0
// Export and import of a tuning database as JSON lines: workloads, then records, each line a
// sorted-key JSON object, lines in a stable order, so exports diff cleanly under version control.
#pragma once

#include "tensortune/database/database.h"

#include <istream>
#include <ostream>
#include <string>

namespace tensortune::database {

/// Writes every workload (sorted by key) and every record (Database::all_records order) of `db`;
/// record ids and tuning runs are local to a database and are not written. Returns the lines.
int64_t export_jsonl(const Database& db, std::ostream& out);

struct ImportSummary {
  int64_t workloads = 0;
  int64_t imported = 0;
  /// Records already present (same workload, target, schedule, seed and timestamp).
  int64_t skipped = 0;
};

/// Reads a whole export, validates every line first, then writes it in one transaction. A
/// malformed line (bad JSON, a missing field, a wrong type, an unknown format version, a record
/// of an unknown workload) throws UserError "NAME:LINE: ..." and nothing is written.
ImportSummary import_jsonl(Database& db, std::istream& in, const std::string& name);

}  // namespace tensortune::database

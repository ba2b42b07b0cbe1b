// SPDX-License-Identifier: Apache-2.0
// Files the command line writes for the user (exports, reports, dumps): never over a database,
// never half-written over what was there before.
#pragma once

#include "tensortune/support/file.h"

#include <memory>
#include <ostream>
#include <string>

namespace tensortune::cli {

/// UserError "WHAT: 'OUT' is the database 'DB'" when `out` names the database file `db` or one
/// of the files SQLite keeps beside it (-wal, -shm, -journal), by the same file (a link, another
/// spelling of the path) or by the same path. Writing there would destroy the records.
void check_not_database(const std::string& out, const std::string& db, const std::string& what);

/// An output file of the command line: support::AtomicOutput (written beside `path`, renamed
/// into place; links, directories, devices, FIFOs and sockets refused), or standard output, written
/// in place, when `path` is "-" and `allow_stdout` is set.
class AtomicFile {
 public:
  /// UserError "WHAT: ..." when `path` is refused or the temporary file cannot be created.
  AtomicFile(const std::string& path, const std::string& what, bool allow_stdout = false);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream();
  /// Flushes, checks that every write succeeded, and renames the file into place.
  void commit();

 private:
  std::unique_ptr<support::AtomicOutput> file_;  // null for standard output
  std::string what_;
};

}  // namespace tensortune::cli

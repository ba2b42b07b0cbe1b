// SPDX-License-Identifier: Apache-2.0
// Files the command line writes for the user (exports, reports, dumps): never over a database,
// never half-written over what was there before.
#pragma once

#include <fstream>
#include <string>

namespace tensortune::cli {

/// UserError "WHAT: 'OUT' is the database 'DB'" when `out` names the database file `db` or one
/// of the files SQLite keeps beside it (-wal, -shm, -journal), by the same file (a link, another
/// spelling of the path) or by the same path. Writing there would destroy the records.
void check_not_database(const std::string& out, const std::string& db, const std::string& what);

/// A file written under a temporary name beside `path` and renamed over `path` by commit(). A
/// failed or interrupted write removes the temporary file and leaves `path` as it was.
class AtomicFile {
 public:
  /// UserError "WHAT: cannot write 'PATH': ..." when the temporary file cannot be created.
  AtomicFile(std::string path, std::string what);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ofstream& stream() { return out_; }
  /// Flushes, checks that every write succeeded, and renames the file into place.
  void commit();

 private:
  std::string path_, temp_, what_;
  std::ofstream out_;
  bool done_ = false;
};

}  // namespace tensortune::cli

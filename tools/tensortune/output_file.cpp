// SPDX-License-Identifier: Apache-2.0
// See output_file.h.
#include "output_file.h"

#include "tensortune/support/error.h"
#include "tensortune/support/file.h"

#include <filesystem>
#include <iostream>
#include <system_error>

namespace tensortune::cli {

namespace fs = std::filesystem;

namespace {

/// The path made absolute and normal, symbolic links of its existing part resolved.
fs::path normal(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? fs::path(path).lexically_normal() : p;
}

}  // namespace

void check_not_database(const std::string& out, const std::string& db, const std::string& what) {
  const fs::path target = normal(out);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    const std::string file = db + suffix;
    std::error_code ec;
    const bool same_file =
        fs::exists(out, ec) && fs::exists(file, ec) && fs::equivalent(out, file, ec) && !ec;
    TT_USER_CHECK(!same_file && target != normal(file))
        << what << ": '" << out << "' is the database '" << db << "'"
        << (*suffix != '\0' ? std::string(" (its ") + suffix + " file)" : std::string())
        << "; writing it would destroy the records";
  }
}

AtomicFile::AtomicFile(const std::string& path, const std::string& what, bool allow_stdout)
    : what_(what) {
  if (!(allow_stdout && path == "-")) {
    file_ = std::make_unique<support::AtomicOutput>(path, what);
  }
}

AtomicFile::~AtomicFile() = default;

std::ostream& AtomicFile::stream() {
  return file_ ? file_->stream() : std::cout;
}

void AtomicFile::commit() {
  if (file_) {
    file_->commit();
    return;
  }
  std::cout.flush();
  TT_USER_CHECK(std::cout.good()) << what_ << ": failed while writing to standard output";
}

}  // namespace tensortune::cli

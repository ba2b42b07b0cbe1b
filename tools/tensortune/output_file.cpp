// SPDX-License-Identifier: Apache-2.0
// See output_file.h.
#include "output_file.h"

#include "tensortune/support/error.h"
#include "tensortune/support/file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
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

AtomicFile::AtomicFile(std::string path, std::string what)
    : path_(std::move(path)), what_(std::move(what)) {
  temp_ = support::temp_path_beside(path_);
  out_.open(temp_, std::ios::binary | std::ios::trunc);
  TT_USER_CHECK(out_.good()) << what_ << ": cannot write '" << path_
                             << "': " << std::strerror(errno);
}

AtomicFile::~AtomicFile() {
  if (!done_) {
    out_.close();
    std::remove(temp_.c_str());
  }
}

void AtomicFile::commit() {
  out_.close();
  TT_USER_CHECK(!out_.fail()) << what_ << ": failed while writing '" << path_ << "'";
  std::error_code ec;
  fs::rename(temp_, path_, ec);
  TT_USER_CHECK(!ec) << what_ << ": cannot write '" << path_ << "': " << ec.message();
  done_ = true;
}

}  // namespace tensortune::cli

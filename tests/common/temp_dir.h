// SPDX-License-Identifier: Apache-2.0
// A fresh per-test directory under the system temp folder, removed when it goes out of scope.
#pragma once

#include <filesystem>
#include <string>
#include <unistd.h>

namespace tensortune::test {

class TempDir {
 public:
  /// The directory is "tensortune_<stem>_<pid>"; one left over from a crashed run is emptied.
  explicit TempDir(const std::string& stem) {
    path_ = std::filesystem::temp_directory_path() /
            ("tensortune_" + stem + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// The path of `name` inside the directory.
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace tensortune::test

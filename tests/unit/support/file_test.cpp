// SPDX-License-Identifier: Apache-2.0
// write_file_atomically: the file is replaced whole (a new file, not the old one rewritten), and a
// failed write leaves the old file and no temporary file behind.
#include "tensortune/support/file.h"

#include "common/temp_dir.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sys/stat.h>

namespace tensortune::support {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// The entries of the folder holding `path` (a temporary file left behind would be one more).
int entries_beside(const std::string& path) {
  const auto it = std::filesystem::directory_iterator(std::filesystem::path(path).parent_path());
  return static_cast<int>(std::distance(begin(it), end(it)));
}

TEST(WriteFileAtomically, ReplacesTheFileWholeAndLeavesNoTemporaryFile) {
  test::TempDir dir("tt_file_atomic");
  const std::string path = dir.file("out.txt");
  write_file_atomically(path, "first", "test");
  EXPECT_EQ(read(path), "first");
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  const std::string bytes("a\0b", 3);
  write_file_atomically(path, bytes, "test");
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino);  // a process that mapped the old file keeps it
  EXPECT_EQ(read(path), bytes);
  EXPECT_EQ(entries_beside(path), 1);
}

TEST(WriteFileAtomically, AFailedWriteIsAUserErrorAndKeepsTheOldFile) {
  test::TempDir dir("tt_file_atomic_fail");
  const std::string path = dir.file("out.txt");
  write_file_atomically(path, "kept", "test");
  // A directory where the file should go: the rename fails.
  const std::string blocked = dir.file("blocked");
  std::filesystem::create_directories(blocked + "/inside");
  EXPECT_THROW(write_file_atomically(blocked, "x", "test"), UserError);
  EXPECT_TRUE(std::filesystem::is_directory(blocked));
  EXPECT_THROW(write_file_atomically(dir.file("missing/out.txt"), "x", "test"), UserError);
  EXPECT_EQ(read(path), "kept");
  EXPECT_EQ(entries_beside(path), 2);  // out.txt and blocked/
}

}  // namespace
}  // namespace tensortune::support

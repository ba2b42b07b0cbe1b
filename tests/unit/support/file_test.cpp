// SPDX-License-Identifier: Apache-2.0
// write_file_atomically: the file is replaced whole (a new file, not the old one rewritten), a
// failed write leaves the old file and no temporary file behind, and links and nodes are refused;
// read_regular_file: only regular files under a cap.
#include "tensortune/support/file.h"

#include "common/temp_dir.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

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

TEST(WriteFileAtomically, NeverFollowsALinkPlantedUnderThePredictableTemporaryName) {
  test::TempDir dir("tt_file_planted");
  const std::string victim = dir.file("victim.txt");
  write_file_atomically(victim, "precious", "test");
  const std::string path = dir.file("out.txt");
  // The name the temporary file used to have: ".NAME.tmp-PID", opened with O_TRUNC.
  const std::string planted = dir.file(".out.txt.tmp-" + std::to_string(::getpid()));
  ASSERT_EQ(::symlink(victim.c_str(), planted.c_str()), 0);
  write_file_atomically(path, "new", "test");
  EXPECT_EQ(read(path), "new");
  EXPECT_EQ(read(victim), "precious");
  EXPECT_TRUE(std::filesystem::is_symlink(planted));
}

/// The UserError message of writing "x" to `path`, or "" when it was written.
std::string refusal(const std::string& path) {
  try {
    write_file_atomically(path, "x", "test");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(WriteFileAtomically, RefusesLinksDirectoriesAndNodesAndLeavesThemAsTheyWere) {
  test::TempDir dir("tt_file_nodes");
  const std::string target = dir.file("target.txt");
  write_file_atomically(target, "kept", "test");
  const std::string link = dir.file("link.txt");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_EQ(refusal(link), "test: '" + link +
                               "' is a symbolic link; only a regular file is replaced (give a "
                               "new path, or the file the link points to)");
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(read(target), "kept");

  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(refusal(fifo).find("is a FIFO; only a regular file is replaced"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));

  const std::string folder = dir.file("folder");
  std::filesystem::create_directory(folder);
  EXPECT_NE(refusal(folder).find("is a directory"), std::string::npos);

  const std::string socket_path = dir.file("sock");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", socket_path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_NE(refusal(socket_path).find("is a socket"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_socket(socket_path));
  ::close(fd);
  // A device node: /dev/null is checked, never replaced (the check comes before any write).
  EXPECT_THROW(check_output_path("/dev/null", "test"), UserError);
  EXPECT_EQ(entries_beside(target), 5);  // no temporary file left behind
}

TEST(ReadRegularFile, RefusesDevicesFifosAndFilesOverTheCap) {
  test::TempDir dir("tt_file_read");
  const std::string path = dir.file("in.json");
  write_file_atomically(path, "0123456789", "test");
  EXPECT_EQ(read_regular_file(path, 10, "schedule"), "0123456789");
  EXPECT_EQ(check_regular_file(path, 10, "schedule"), 10);
  try {
    read_regular_file(path, 9, "schedule");
    FAIL() << "no exception";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "schedule '" + path + "' has 10 bytes, more than the limit of 9");
  }
  EXPECT_THROW(read_regular_file("/dev/zero", kMaxTextFileBytes, "schedule"), UserError);
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(read_regular_file(fifo, kMaxTextFileBytes, "schedule"), UserError);
  EXPECT_THROW(check_regular_file(fifo, kMaxTextFileBytes, "schedule"), UserError);
  EXPECT_THROW(read_regular_file(dir.file("absent"), 10, "schedule"), UserError);
}

}  // namespace
}  // namespace tensortune::support

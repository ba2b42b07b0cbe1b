// SPDX-License-Identifier: Apache-2.0
// Several processes writing one database at once lose nothing, and a writer killed with SIGKILL
// loses at most the batch in flight and never corrupts the file.
#include "db_test_util.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <csignal>
#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>

namespace tensortune::database {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

constexpr int kBatch = 8;

/// Batch `b` of writer `w`: kBatch records with distinct schedules.
std::vector<Record> batch(const WorkloadInfo& wl, int w, int b) {
  std::vector<Record> out;
  for (int i = 0; i < kBatch; ++i) {
    Record r = record(wl, cpu(), (w * 100000) + (b * kBatch) + i, 1e-3 + i * 1e-6);
    out.push_back(r);
  }
  return out;
}

std::string integrity(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr);
  std::string result = sqlite3_step(st) == SQLITE_ROW
                           ? reinterpret_cast<const char*>(sqlite3_column_text(st, 0))
                           : "no result";
  sqlite3_finalize(st);
  sqlite3_close(db);
  return result;
}

TEST(Concurrency, FourWriterProcessesLoseNothing) {
  TestDb dir("writers");
  std::string path = dir.where("shared");
  WorkloadInfo wl = workload("matmul", 64);
  {
    Database db = Database::open(path);
    db.put_workload(wl);
  }
  constexpr int kWriters = 4;
  constexpr int kBatches = 25;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 0;
      try {
        Database db = Database::open(path);
        for (int b = 0; b < kBatches; ++b) {
          db.add_records(batch(wl, w, b));
        }
      } catch (...) {
        status = 1;
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  Database db = Database::open(path);
  EXPECT_EQ(db.count_records(), kWriters * kBatches * kBatch);
  EXPECT_EQ(db.measured_schedules(wl.key, cpu()).size(), size_t{kWriters * kBatches * kBatch});
  if (!is_server_url(path)) {
    EXPECT_EQ(integrity(path), "ok");
  }
}

TEST(Concurrency, WritersThatCreateTheFileTogetherAllStart) {
  // Two tuning jobs started at once on a new database path: the one that reads the empty file
  // before the other switches it to WAL must not fail ("database is locked").
  TestDb dir("create");
  WorkloadInfo wl = workload("matmul", 64);
  constexpr int kRounds = 12;
  constexpr int kWriters = 3;
  for (int round = 0; round < kRounds; ++round) {
    std::string path = dir.where("new" + std::to_string(round));
    int gate[2];
    ASSERT_EQ(::pipe(gate), 0);
    std::vector<pid_t> children;
    for (int w = 0; w < kWriters; ++w) {
      pid_t pid = ::fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        ::close(gate[1]);
        char c = 0;
        (void)!::read(gate[0], &c, 1);  // EOF when the parent opens the gate: all start at once
        int status = 0;
        try {
          Database db = Database::open(path);
          db.put_workload(wl);
          db.add_records(batch(wl, w, 0));
          ::usleep(20000);  // stay connected while the others open
        } catch (const std::exception& e) {
          std::fprintf(stderr, "writer %d: %s\n", w, e.what());
          status = 1;
        }
        ::_exit(status);
      }
      children.push_back(pid);
    }
    ::close(gate[0]);
    ::close(gate[1]);
    for (pid_t pid : children) {
      int status = 0;
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round;
    }
    Database db = Database::open(path);
    EXPECT_EQ(db.count_records(), kWriters * kBatch) << "round " << round;
  }
}

TEST(Concurrency, AWriterKilledMidRunLosesAtMostTheBatchInFlight) {
  TestDb dir("kill");
  std::string path = dir.where("killed");
  WorkloadInfo wl = workload("matmul", 64);
  {
    Database db = Database::open(path);
    db.put_workload(wl);
  }
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    Database db = Database::open(path);
    for (int b = 0;; ++b) {
      db.add_records(batch(wl, 0, b));
      if (::write(fds[1], &b, sizeof(b)) != sizeof(b)) {
        ::_exit(1);
      }
    }
  }
  ::close(fds[1]);
  int committed = -1;
  int b = 0;
  while (committed < 30 && ::read(fds[0], &b, sizeof(b)) == sizeof(b)) {
    committed = b;
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(fds[0]);
  EXPECT_TRUE(WIFSIGNALED(status));
  if (!is_server_url(path)) {
    EXPECT_EQ(integrity(path), "ok");
  }
  Database db = Database::open(path);
  int64_t count = db.count_records();
  EXPECT_EQ(count % kBatch, 0) << "a partial batch was stored";
  EXPECT_GE(count, int64_t{committed + 1} * kBatch);
  for (int done = 0; done <= committed; ++done) {
    for (const Record& r : batch(wl, 0, done)) {
      ASSERT_TRUE(db.contains(wl.key, cpu(), r.schedule)) << "batch " << done;
    }
  }
  // The file takes new writes after the crash.
  db.add_records(batch(wl, 1, 0));
  EXPECT_EQ(db.count_records(), count + kBatch);
}

}  // namespace
}  // namespace tensortune::database

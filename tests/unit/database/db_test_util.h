// SPDX-License-Identifier: Apache-2.0
// Helpers for the database tests: a fresh database per test on the backend under test, and
// workloads and records made up of plain strings and numbers (the database never interprets
// them). The suite runs twice: on SQLite files, and with TT_TEST_POSTGRES set to a server's base
// URL (postgresql://USER@HOST:PORT, see scripts/pg_server.sh) on fresh PostgreSQL databases.
#pragma once

#include "common/postgres.h"
#include "common/temp_dir.h"
#include "tensortune/database/database.h"
#include "tensortune/support/hash.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace tensortune::database::testing {

using test::TempDir;

using test::postgres_server;

/// Skips a test of what only an SQLite file has (its pages, its folder, PRAGMAs).
#define TT_SQLITE_ONLY()                                                           \
  do {                                                                             \
    if (!::tensortune::database::testing::postgres_server().empty())               \
      GTEST_SKIP() << "checks an SQLite file; the PostgreSQL variant has its own"; \
  } while (0)

/// Runs `sql` (statements without results) on a database the way another program would.
inline void exec_sql(const std::string& where, const std::string& sql) {
  if (is_server_url(where)) {
    test::exec_postgres(where, sql);
    return;
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(where.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error != nullptr ? error : "") << " in " << sql;
  sqlite3_free(error);
  sqlite3_close(db);
}

/// Sets the schema version a database says it has, as a tool that edits it by hand would.
inline void set_stored_version(const std::string& where, int version) {
  exec_sql(where, is_server_url(where)
                      ? "UPDATE tensortune_schema SET version = " + std::to_string(version)
                      : "PRAGMA user_version = " + std::to_string(version));
}

/// Fresh databases for one test: files in a temporary folder, or new databases on the server
/// (named after the test's stem, the process and `name`), dropped when it ends.
class TestDb {
 public:
  explicit TestDb(const std::string& stem) : stem_(stem), dir_(stem) {}
  ~TestDb() {
    for (const std::string& name : created_)
      admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
  }
  TestDb(const TestDb&) = delete;
  TestDb& operator=(const TestDb&) = delete;

  /// A database that does not exist yet ("t" -> dir/t.db, or postgresql://.../tt_STEM_PID_t).
  std::string where(const std::string& name = "t") {
    const std::string server = postgres_server();
    if (server.empty())
      return dir_.file(name + ".db");
    std::string db = "tt_" + stem_ + "_" + std::to_string(::getpid()) + "_" + name;
    std::transform(db.begin(), db.end(), db.begin(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0
                 ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                 : '_';
    });
    db = db.substr(0, 63);
    if (std::find(created_.begin(), created_.end(), db) == created_.end()) {
      admin("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");  // left by a crashed run
      admin("CREATE DATABASE " + db);
      created_.push_back(db);
    }
    return server + "/" + db;
  }
  /// A file in the test's temporary folder (for exports, foreign files).
  std::string file(const std::string& name) const { return dir_.file(name); }

 private:
  static void admin(const std::string& sql) { exec_sql(postgres_server() + "/postgres", sql); }

  std::string stem_;
  TempDir dir_;
  std::vector<std::string> created_;
};

inline WorkloadInfo workload(const std::string& op, int n) {
  WorkloadInfo w;
  w.name = op + "_" + std::to_string(n) + "x" + std::to_string(n) + "_float32";
  w.op = op;
  w.spec = op + ":M=" + std::to_string(n);
  w.canonical_text = "compute " + w.name;
  w.key = w.name + "_" + support::hash_hex(w.canonical_text);  // as te::Workload::key makes it
  w.flop_count = 2.0 * n * n * n;
  return w;
}

inline TargetKey cpu(const std::string& fingerprint = "{\"cpu\":\"zen4\",\"cores\":2}") {
  return TargetKey{"llvm -mcpu=znver4 -cores=2", fingerprint};
}

/// An Ok record (status "Ok" when seconds > 0) or a failure with `status`.
inline Record record(const WorkloadInfo& w,
                     const TargetKey& t,
                     int tile,
                     double seconds,
                     const std::string& status = "Ok") {
  Record r;
  r.workload_key = w.key;
  r.target = t;
  r.schedule = "{\"steps\":[{\"kind\":\"split\",\"factor\":" + std::to_string(tile) + "}]}";
  r.knobs = "{\"tile\":" + std::to_string(tile) + "}";
  r.status = status;
  if (status == "Ok") {
    r.repeats = {seconds * 1.01, seconds, seconds * 0.99};
    r.median_seconds = seconds;
  } else {
    r.error = "the kernel killed its worker: signal 11";
  }
  r.build_seconds = 0.125;
  r.run_seconds = 0.25;
  r.wall_seconds = 0.5;
  r.seed = 7;
  r.tool_version = "0.1.0";
  r.git_revision = "abc1234";
  r.timestamp = 1700000000 + tile;
  return r;
}

}  // namespace tensortune::database::testing

// SPDX-License-Identifier: Apache-2.0
// A damaged database file, or one whose schema lost a column, is refused before anything writes
// to it: opened writable it is a UserError naming the damage, and the file stays byte for byte.
#include "db_test_util.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <iterator>

namespace tensortune::database {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// A database with enough records for its tables to span several pages.
void fill(const std::string& path) {
  Database db = Database::open(path);
  const WorkloadInfo mm = workload("matmul", 64);
  db.put_workload(mm);
  std::vector<Record> records;
  for (int i = 1; i <= 300; ++i)
    records.push_back(record(mm, cpu(), i, 1e-3 * i));
  db.add_records(records);
}  // the last connection checkpoints the WAL into the file

int64_t root_page(const std::string& path, const std::string& name) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_master WHERE name = ?", -1, &st, nullptr);
  sqlite3_bind_text(st, 1, name.c_str(), -1, SQLITE_TRANSIENT);
  const int64_t page = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return page;
}

TEST(Checks, ADamagedFileIsRefusedForWritingAndLeftAsItIs) {
  TT_SQLITE_ONLY();
  TestDb dir("damaged");
  const std::string path = dir.where("t");
  fill(path);
  // The b-tree page of the records' time index claims 32767 cells: its page header lies.
  const int64_t page = root_page(path, "records_by_time");
  ASSERT_GT(page, 1);
  {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp((page - 1) * 4096 + 3);
    f.write("\x7f\xff", 2);
  }
  const std::string before = bytes_of(path);
  for (Database::Check check : {Database::Check::Quick, Database::Check::Full}) {
    try {
      Database::open(path, false, check);
      ADD_FAILURE() << "a damaged database opened for writing";
    } catch (const UserError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("is damaged"), std::string::npos) << what;
      EXPECT_NE(what.find("nothing was written"), std::string::npos) << what;
      EXPECT_LT(what.size(), 600u) << what;
    }
  }
  EXPECT_EQ(bytes_of(path), before);
  // Reading what still reads (db export, the rescue path) is not refused.
  EXPECT_NO_THROW(Database::open(path, true));
}

TEST(Checks, ASchemaWithADroppedColumnIsRefusedForWriting) {
  TestDb dir("dropped");
  const std::string path = dir.where("t");
  fill(path);
  exec_sql(path, "ALTER TABLE records DROP COLUMN git_revision");
  const bool file = !is_server_url(path);
  const std::string before = file ? bytes_of(path) : "";
  try {
    Database db = Database::open(path);
    db.prune(1);
    ADD_FAILURE() << "a database without records.git_revision was pruned";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("table 'records' has no column 'git_revision'"),
              std::string::npos)
        << e.what();
  }
  if (file) {
    EXPECT_EQ(bytes_of(path), before);
  }
  EXPECT_EQ(Database::open(path, true).count_records(), 300);
  exec_sql(path, "DROP TABLE confirmations");
  EXPECT_THROW(
      {
        try {
          Database::open(path);
        } catch (const UserError& e) {
          EXPECT_NE(std::string(e.what()).find("no table 'confirmations'"), std::string::npos)
              << e.what();
          throw;
        }
      },
      UserError);
}

TEST(Checks, AHealthyDatabaseOpensAtEveryCheck) {
  TestDb dir("healthy");
  const std::string path = dir.where("t");
  fill(path);
  EXPECT_EQ(Database::open(path, false, Database::Check::Full).count_records(), 300);
  EXPECT_EQ(Database::open(path).count_records(), 300);
}

}  // namespace
}  // namespace tensortune::database

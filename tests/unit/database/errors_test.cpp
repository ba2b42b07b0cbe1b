// SPDX-License-Identifier: Apache-2.0
// Messages of a damaged or mistaken database: a folder given as the file, a row another program
// wrote badly, a schema with a column missing. Each names what is wrong in a line.
#include "common/errors.h"

#include "db_test_util.h"
#include "tensortune/database/jsonl_io.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <sstream>
#include <string>
#include <vector>

namespace tensortune::database {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

using test::user_error;

TEST(DatabaseErrors, AFolderIsNamedAsAFolder) {
  TT_SQLITE_ONLY();
  TestDb dir("folder");
  for (bool read_only : {true, false}) {
    // SQLite alone said "disk I/O error".
    EXPECT_EQ(user_error([&] { Database::open(dir.file(""), read_only); }),
              "database '" + dir.file("") + "' is a directory, not a database file");
  }
}

TEST(DatabaseErrors, ABadRowNamesItsRecordAndColumnAndExportKeepsTheRest) {
  TestDb dir("bad_row");
  const std::string path = dir.where("t");
  const WorkloadInfo mm = workload("matmul", 8);
  {
    Database db = Database::open(path);
    db.put_workload(mm);
    db.add_records({record(mm, cpu(), 1, 1e-3), record(mm, cpu(), 2, 2e-3)});
  }
  exec_sql(path, "UPDATE records SET repeats = 'not json' WHERE id = 2");
  Database db = Database::open(path);
  const std::string message = user_error([&] { db.all_records(); });
  EXPECT_EQ(message.rfind("record #2: column 'repeats' is not a JSON array of numbers: ", 0), 0U)
      << message;
  std::ostringstream out;
  EXPECT_THROW(export_jsonl(db, out), UserError);
  std::vector<std::string> unreadable;
  std::ostringstream rescued;
  EXPECT_EQ(export_jsonl(db, rescued, &unreadable), 2);  // the workload and record #1
  ASSERT_EQ(unreadable.size(), 1U);
  EXPECT_EQ(unreadable[0], message);
}

TEST(DatabaseErrors, AMissingColumnIsNamedWithoutTheQuery) {
  TestDb dir("dropped");
  const std::string path = dir.where("t");
  const WorkloadInfo mm = workload("matmul", 8);
  {
    Database db = Database::open(path);
    db.put_workload(mm);
    db.add_records({record(mm, cpu(), 1, 1e-3)});
  }
  exec_sql(path, "ALTER TABLE records DROP COLUMN knobs");
  Database db = Database::open(path, true);
  const std::string message = user_error([&] { db.best(mm.key, cpu(), 1); });
  // It used to quote some 600 characters of SQL.
  EXPECT_LT(message.size(), 150U + path.size()) << message;
  EXPECT_NE(message.find("r.knobs"), std::string::npos) << message;
  EXPECT_NE(message.find("schema version"), std::string::npos) << message;
}

}  // namespace
}  // namespace tensortune::database

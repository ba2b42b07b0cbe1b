// SPDX-License-Identifier: Apache-2.0
// Forward migrations: a database written at every older schema version opens at the current
// version with its data intact, and a read-only open refuses to migrate.
#include "db_test_util.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

namespace tensortune::database {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

/// Writes one workload, target and record with plain SQL, using only version-1 columns (every
/// later version keeps them).
void write_version_one_rows(const std::string& path) {
  const char* sql =
      "INSERT INTO workloads(key, name, canonical_text, flop_count) "
      "VALUES('matmul_8x8x8_float32_k', 'matmul_8x8x8_float32', 'text', 1024);"
      "INSERT INTO targets(target, fingerprint) VALUES('llvm -cores=2', 'fp');"
      "INSERT INTO records(workload_id, target_id, schedule, status, repeats, median_seconds, "
      "timestamp) VALUES(1, 1, '{\"steps\":[]}', 'Ok', '[0.001]', 0.001, 1700000000);";
  exec_sql(path, sql);
}

TEST(Migration, EveryOlderVersionOpensAtTheCurrentOneWithItsData) {
  ASSERT_GE(current_schema_version(), 2);
  for (int version = 1; version < current_schema_version(); ++version) {
    TestDb dir("migrate" + std::to_string(version));
    std::string path = dir.where("old");
    {
      Database old = Database::open_at_version(path, version);
      EXPECT_EQ(old.schema_version(), version);
    }
    write_version_one_rows(path);
    EXPECT_THROW(Database::open(path, true), UserError) << version;  // read-only: no migration
    Database db = Database::open(path);
    EXPECT_EQ(db.schema_version(), current_schema_version());
    TargetKey target{"llvm -cores=2", "fp"};
    std::vector<Record> best = db.best("matmul_8x8x8_float32_k", target, 1);
    ASSERT_EQ(best.size(), 1U) << version;
    EXPECT_DOUBLE_EQ(best[0].median_seconds, 0.001);
    EXPECT_EQ(best[0].knobs, "{}");
    EXPECT_EQ(best[0].run_id, 0);
    EXPECT_DOUBLE_EQ(best[0].confirmed_seconds, 0);  // migration 4: none confirmed yet
    EXPECT_DOUBLE_EQ(best[0].rank_seconds, 0.001);
    // Migration 2 derives the operator from the name of workloads written before it.
    EXPECT_EQ(db.workload("matmul_8x8x8_float32_k")->op, version == 1 ? "matmul" : "") << version;
    // The migrated file takes new data of the current version.
    WorkloadInfo w = *db.workload("matmul_8x8x8_float32_k");
    Record r = best[0];
    r.timestamp += 1;
    r.knobs = "{\"tile\":4}";
    db.add_records({r});
    EXPECT_EQ(db.history(w.key, target).size(), 2U);
  }
}

TEST(Migration, AFileWhoseVersionWasSetBackMigratesAgainWithItsData) {
  // Version 3 stored in a database that already had the confirmations table: read commands said to
  // migrate, and the migration failed with "table confirmations already exists".
  for (int version = 1; version < current_schema_version(); ++version) {
    TestDb dir("set_back" + std::to_string(version));
    std::string path = dir.where("t");
    { Database::open(path); }
    write_version_one_rows(path);
    set_stored_version(path, version);
    EXPECT_THROW(Database::open(path, true), UserError) << version;
    Database db = Database::open(path);
    EXPECT_EQ(db.schema_version(), current_schema_version()) << version;
    EXPECT_EQ(db.count_records(), 1) << version;
  }
}

TEST(Migration, ReopeningAtTheCurrentVersionChangesNothing) {
  TestDb dir("reopen");
  std::string path = dir.where("t");
  {
    Database db = Database::open(path);
    db.put_workload(workload("matmul", 8));
  }
  Database again = Database::open(path);
  EXPECT_EQ(again.schema_version(), current_schema_version());
  EXPECT_EQ(again.workloads().size(), 1U);
  EXPECT_THROW(Database::open_at_version(path, 0), UserError);
}

}  // namespace
}  // namespace tensortune::database

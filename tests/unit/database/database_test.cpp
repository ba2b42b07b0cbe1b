// SPDX-License-Identifier: Apache-2.0
// The tuning database: schema creation and refusal of foreign files, best-k that never mixes
// targets, history, stats, resume lookups, prune, and atomic batches.
#include "db_test_util.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <fstream>

namespace tensortune::database {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

TEST(Database, CreatesTheFileAndItsDirectoryAtTheCurrentVersion) {
  TT_SQLITE_ONLY();
  TestDb dir("create");
  std::string path = dir.file("logs/nested/tune.db");
  Database db = Database::open(path);
  EXPECT_EQ(db.schema_version(), current_schema_version());
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(db.count_records(), 0);
}

TEST(Database, BestNeverMixesTargetsAndOrdersByMedian) {
  TestDb dir("best");
  Database db = Database::open(dir.where("t"));
  WorkloadInfo mm = workload("matmul", 64);
  db.put_workload(mm);
  TargetKey here = cpu();
  TargetKey other_machine = cpu("{\"cpu\":\"skylake\",\"cores\":2}");
  db.add_records({record(mm, here, 1, 3e-3), record(mm, here, 2, 1e-3),
                  record(mm, here, 3, 0, "RuntimeError"), record(mm, here, 4, 2e-3),
                  record(mm, other_machine, 5, 1e-4)});
  std::vector<Record> best = db.best(mm.key, here, 2);
  ASSERT_EQ(best.size(), 2U);
  EXPECT_DOUBLE_EQ(best[0].median_seconds, 1e-3);
  EXPECT_DOUBLE_EQ(best[1].median_seconds, 2e-3);
  EXPECT_EQ(best[0].target, here);
  EXPECT_EQ(best[0].knobs, "{\"tile\":2}");
  EXPECT_EQ(best[0].repeats, (std::vector<double>{1e-3 * 1.01, 1e-3, 1e-3 * 0.99}));
  std::vector<Record> theirs = db.best(mm.key, other_machine, 5);
  ASSERT_EQ(theirs.size(), 1U);
  EXPECT_DOUBLE_EQ(theirs[0].median_seconds, 1e-4);
  EXPECT_TRUE(db.best(mm.key, TargetKey{"llvm -mcpu=znver4 -cores=2", ""}, 5).empty());
  EXPECT_TRUE(db.best("no_such_workload", here, 5).empty());
}

TEST(Database, HistoryStatsAndResumeLookups) {
  TestDb dir("history");
  Database db = Database::open(dir.where("t"));
  WorkloadInfo mm = workload("matmul", 64);
  db.put_workload(mm);
  std::vector<int64_t> ids = db.add_records(
      {record(mm, cpu(), 1, 3e-3), record(mm, cpu(), 2, 0, "WrongResult"),
       record(mm, cpu(), 3, 0, "RunTimeout"), record(mm, cpu(), 4, 0, "WrongResult")});
  ASSERT_EQ(ids.size(), 4U);
  std::vector<Record> history = db.history(mm.key, cpu());
  ASSERT_EQ(history.size(), 4U);
  EXPECT_EQ(history[2].id, ids[2]);
  EXPECT_EQ(history[2].status, "RunTimeout");
  EXPECT_EQ(db.record(ids[1])->status, "WrongResult");
  EXPECT_FALSE(db.record(9999));
  EXPECT_TRUE(db.contains(mm.key, cpu(), record(mm, cpu(), 3, 0).schedule));
  EXPECT_FALSE(db.contains(mm.key, cpu(), record(mm, cpu(), 9, 0).schedule));
  EXPECT_EQ(db.measured_schedules(mm.key, cpu()).size(), 4U);
  std::vector<WorkloadStats> stats = db.stats();
  ASSERT_EQ(stats.size(), 1U);
  EXPECT_EQ(stats[0].records, 4);
  EXPECT_EQ(stats[0].ok, 1);
  EXPECT_DOUBLE_EQ(stats[0].best_seconds, 3e-3);
  using Count = std::pair<std::string, int64_t>;
  EXPECT_EQ(stats[0].by_status,
            (std::vector<Count>{{"Ok", 1}, {"RunTimeout", 1}, {"WrongResult", 2}}));
}

TEST(Database, ABatchWithABadRecordWritesNothing) {
  TestDb dir("atomic");
  Database db = Database::open(dir.where("t"));
  WorkloadInfo mm = workload("matmul", 64);
  db.put_workload(mm);
  Record orphan = record(workload("conv2d", 8), cpu(), 1, 1e-3);  // its workload was never put
  EXPECT_THROW(db.add_records({record(mm, cpu(), 1, 1e-3), orphan}), UserError);
  EXPECT_EQ(db.count_records(), 0);
}

TEST(Database, PruneKeepsTheBestKPerWorkloadAndTarget) {
  TestDb dir("prune");
  Database db = Database::open(dir.where("t"));
  WorkloadInfo a = workload("matmul", 64);
  WorkloadInfo b = workload("matmul", 128);
  db.put_workload(a);
  db.put_workload(b);
  std::vector<Record> batch;
  for (int i = 1; i <= 6; ++i) {
    batch.push_back(record(a, cpu(), i, i * 1e-3));
    batch.push_back(record(b, cpu(), i, 0, "CompileError"));
  }
  batch.push_back(record(b, cpu(), 7, 5e-3));
  db.add_records(batch);
  EXPECT_EQ(db.prune(2), 13 - 3);
  EXPECT_EQ(db.count_records(), 3);
  EXPECT_EQ(db.best(a.key, cpu(), 10).size(), 2U);
  EXPECT_DOUBLE_EQ(db.best(a.key, cpu(), 10)[1].median_seconds, 2e-3);
  EXPECT_EQ(db.history(b.key, cpu()).size(), 1U);
  db.vacuum();
  EXPECT_EQ(db.count_records(), 3);
}

TEST(Database, BestOfOperatorGivesOneRecordPerShape) {
  TestDb dir("op");
  Database db = Database::open(dir.where("t"));
  WorkloadInfo a = workload("matmul", 64);
  WorkloadInfo b = workload("matmul", 128);
  WorkloadInfo c = workload("conv2d", 64);
  for (const WorkloadInfo& w : {a, b, c}) {
    db.put_workload(w);
  }
  db.add_records({record(a, cpu(), 1, 2e-3), record(a, cpu(), 2, 1e-3), record(b, cpu(), 3, 4e-3),
                  record(c, cpu(), 4, 1e-3), record(b, cpu("other"), 5, 1e-6)});
  std::vector<Record> best = db.best_of_operator("matmul", cpu());
  ASSERT_EQ(best.size(), 2U);  // sorted by workload key: "matmul_128..." < "matmul_64..."
  EXPECT_EQ(best[0].workload_key, b.key);
  EXPECT_DOUBLE_EQ(best[0].median_seconds, 4e-3);
  EXPECT_EQ(best[1].workload_key, a.key);
  EXPECT_DOUBLE_EQ(best[1].median_seconds, 1e-3);
}

TEST(Database, RunsRecordTheirOptionsAndCounts) {
  TestDb dir("runs");
  Database db = Database::open(dir.where("t"));
  WorkloadInfo mm = workload("matmul", 64);
  db.put_workload(mm);
  TuningRun run;
  run.workload_key = mm.key;
  run.target = cpu();
  run.options = "{\"trials\":64}";
  run.started = 1700000000;
  int64_t id = db.start_run(run);
  Record r = record(mm, cpu(), 1, 1e-3);
  r.run_id = id;
  db.add_records({r});
  db.finish_run(id, 64, 60, 1700000100);
  std::vector<TuningRun> runs = db.runs();
  ASSERT_EQ(runs.size(), 1U);
  EXPECT_EQ(runs[0].trials, 64);
  EXPECT_EQ(runs[0].ok_trials, 60);
  EXPECT_EQ(runs[0].ended, 1700000100);
  EXPECT_EQ(runs[0].options, "{\"trials\":64}");
  EXPECT_EQ(db.best(mm.key, cpu())[0].run_id, id);
  EXPECT_THROW(db.finish_run(id + 1, 1, 1, 1), UserError);
}

TEST(Database, ForeignFilesAndNewerSchemasAreRefusedClearly) {
  TestDb dir("foreign");
  std::string text = dir.file("notes.txt");
  std::ofstream(text) << "this is not a database, but it is long enough to look like a file\n";
  EXPECT_THROW(Database::open(text), UserError);
  EXPECT_THROW(Database::open(dir.where("missing"), true), UserError);
  std::string newer = dir.where("newer");
  { Database db = Database::open(newer); }
  set_stored_version(newer, 99);
  try {
    Database::open(newer);
    ADD_FAILURE() << "a newer schema was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 99, newer"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tensortune::database

// SPDX-License-Identifier: Apache-2.0
// Confirmations (Database::confirm): best records measured again side by side rank by that
// measurement on the stored medians' scale, in best, best_of_operator, stats and prune; bad
// confirmations are refused and write nothing.
#include "db_test_util.h"
#include "tensortune/database/jsonl_io.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <sstream>

namespace tensortune::database {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

std::vector<int64_t> ids_of(const std::vector<Record>& records) {
  std::vector<int64_t> out;
  for (const Record& r : records)
    out.push_back(r.id);
  return out;
}

/// Records stored at 1.0, 1.1, 1.2 and 1.15 ms; the first three are measured again at 1.3,
/// 1.1 and 1.25 ms. Stored / again: 0.769, 1.0, 0.96, median 0.96, so they rank at 1.248,
/// 1.056 and 1.2 ms, and the unconfirmed 1.15 ms record between the second and the third.
struct Confirmed : ::testing::Test {
  Confirmed() : dir("confirm"), db(Database::open(dir.where("t"))), mm(workload("matmul", 64)) {
    db.put_workload(mm);
    ids = db.add_records({record(mm, cpu(), 1, 1.0e-3), record(mm, cpu(), 2, 1.1e-3),
                          record(mm, cpu(), 3, 1.2e-3), record(mm, cpu(), 4, 1.15e-3)});
    db.confirm({ids[0], ids[1], ids[2]}, {1.3e-3, 1.1e-3, 1.25e-3}, 1700000100);
  }
  TestDb dir;
  Database db;
  WorkloadInfo mm;
  std::vector<int64_t> ids;
};

TEST_F(Confirmed, BestRanksBySideBySideTimesOnTheStoredScale) {
  const std::vector<Record> best = db.best(mm.key, cpu(), 4);
  EXPECT_EQ(ids_of(best), (std::vector<int64_t>{ids[1], ids[3], ids[2], ids[0]}));
  EXPECT_DOUBLE_EQ(best[0].confirmed_seconds, 1.1e-3);
  EXPECT_NEAR(best[0].rank_seconds, 1.1e-3 * 0.96, 1e-12);
  EXPECT_DOUBLE_EQ(best[0].median_seconds, 1.1e-3);  // the stored measurement stays
  EXPECT_DOUBLE_EQ(best[1].confirmed_seconds, 0);    // never confirmed: ranks by its median
  EXPECT_DOUBLE_EQ(best[1].rank_seconds, 1.15e-3);
  EXPECT_NEAR(best[3].rank_seconds, 1.3e-3 * 0.96, 1e-12);
  EXPECT_EQ(db.best_of_operator("matmul", cpu()).at(0).id, ids[1]);
  // stats names the same best, at its one time: the confirmation, not the rank time.
  EXPECT_DOUBLE_EQ(db.stats().at(0).best_seconds, 1.1e-3);
  EXPECT_EQ(db.stats().at(0).best_record_id, ids[1]);
  EXPECT_TRUE(db.stats().at(0).best_confirmed);
  EXPECT_TRUE(best[0].confirmed());
  EXPECT_DOUBLE_EQ(best[0].seconds(), 1.1e-3);
  EXPECT_FALSE(best[1].confirmed());
  EXPECT_DOUBLE_EQ(best[1].seconds(), 1.15e-3);  // unconfirmed: its stored median
  EXPECT_EQ(db.record(ids[2])->confirmed_seconds, 1.25e-3);
}

TEST_F(Confirmed, ALaterConfirmationReplacesTheEarlierOne) {
  db.confirm({ids[0], ids[3]}, {1.0e-3, 1.15e-3}, 1700000200);  // both as stored: scale 1
  EXPECT_DOUBLE_EQ(db.record(ids[0])->rank_seconds, 1.0e-3);
  EXPECT_EQ(db.best(mm.key, cpu(), 1).at(0).id, ids[0]);
  EXPECT_EQ(db.history(mm.key, cpu()).size(), 4U);  // records are never touched
}

TEST_F(Confirmed, PruneKeepsTheBestByRankAndDropsTheConfirmationsOfWhatItDeletes) {
  EXPECT_EQ(db.prune(2), 2);
  EXPECT_EQ(ids_of(db.best(mm.key, cpu(), 4)), (std::vector<int64_t>{ids[1], ids[3]}));
  // A confirmation of a deleted record would attach to nothing; adding records again reuses
  // no stale rank.
  const std::vector<int64_t> more = db.add_records({record(mm, cpu(), 9, 2e-3)});
  EXPECT_DOUBLE_EQ(db.record(more[0])->rank_seconds, 2e-3);
  EXPECT_DOUBLE_EQ(db.record(more[0])->confirmed_seconds, 0);
}

TEST_F(Confirmed, BadConfirmationsAreRefusedAndWriteNothing) {
  WorkloadInfo other = workload("matmul", 128);
  db.put_workload(other);
  const std::vector<int64_t> more =
      db.add_records({record(mm, cpu(), 5, 0, "WrongResult"), record(other, cpu(), 6, 1e-3),
                      record(mm, cpu("elsewhere"), 7, 1e-3)});
  struct Case {
    std::vector<int64_t> ids;
    std::vector<double> seconds;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{ids[3]}, {1e-3}, "at least 2"},
      {{ids[3], ids[0]}, {1e-3}, "2 records and 1 times"},
      {{ids[3], 999}, {1e-3, 1e-3}, "no record 999"},
      {{ids[3], more[0]}, {1e-3, 1e-3}, "failed"},
      {{ids[3], ids[0]}, {1e-3, 0}, "a time > 0"},
      {{ids[3], more[1]}, {1e-3, 1e-3}, "another workload or target"},
      {{ids[3], more[2]}, {1e-3, 1e-3}, "another workload or target"},
  };
  const std::vector<Record> before = db.best(mm.key, cpu(), 10);
  for (const Case& c : cases) {
    try {
      db.confirm(c.ids, c.seconds, 1700000300);
      ADD_FAILURE() << c.message << ": accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
  const std::vector<Record> after = db.best(mm.key, cpu(), 10);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].id, before[i].id);
    EXPECT_DOUBLE_EQ(after[i].rank_seconds, before[i].rank_seconds);
  }
}

TEST_F(Confirmed, AFailedConfirmationTakesARecordOutOfEveryBestUntilOneSucceeds) {
  // An imported record claims 1 ns; its schedule no longer replays.
  const int64_t bad = db.add_records({record(mm, cpu(), 8, 1e-9)}).at(0);
  ASSERT_EQ(db.best(mm.key, cpu(), 1).at(0).id, bad);
  db.fail_confirmation(bad, "does not replay onto the workload: no axis 'zz'", 1700000300);
  EXPECT_EQ(db.record(bad)->confirm_error, "does not replay onto the workload: no axis 'zz'");
  EXPECT_FALSE(db.record(bad)->may_be_best());
  EXPECT_EQ(ids_of(db.best(mm.key, cpu(), 10)),
            (std::vector<int64_t>{ids[1], ids[3], ids[2], ids[0]}));
  EXPECT_EQ(db.best_of_operator("matmul", cpu()).at(0).id, ids[1]);
  EXPECT_DOUBLE_EQ(db.stats().at(0).best_seconds, 1.1e-3);
  EXPECT_EQ(db.stats().at(0).ok, 5);  // still an Ok measurement, counted as one
  // Moved to another database, it stays out of best there.
  std::stringstream lines;
  export_jsonl(db, lines);
  EXPECT_NE(lines.str().find("\"confirm_error\""), std::string::npos);
  TestDb other_dir("confirm-import");
  Database other = Database::open(other_dir.where("t"));
  import_jsonl(other, lines, "lines");
  EXPECT_EQ(other.best(mm.key, cpu(), 10).size(), 4u);
  EXPECT_EQ(other.count_records(), 5);
  // Prune keeps what may be best.
  EXPECT_EQ(db.prune(4), 1);
  EXPECT_FALSE(db.record(bad).has_value());
  EXPECT_THROW(db.fail_confirmation(ids[0], "", 1700000300), UserError);
  EXPECT_THROW(db.fail_confirmation(999, "gone", 1700000300), UserError);
}

TEST_F(Confirmed, ASuccessfulConfirmationReplacesAFailedOne) {
  db.fail_confirmation(ids[1], "failed when measured again: signal 11", 1700000300);
  EXPECT_EQ(db.best(mm.key, cpu(), 1).at(0).id, ids[3]);
  db.confirm({ids[1], ids[3]}, {1.1e-3, 1.15e-3}, 1700000400);
  EXPECT_EQ(db.best(mm.key, cpu(), 1).at(0).id, ids[1]);
  EXPECT_EQ(db.record(ids[1])->confirm_error, "");
}

}  // namespace
}  // namespace tensortune::database

namespace tensortune::database {
namespace {

TEST_F(Confirmed, SpreadsRoundsAndTheRunsPeakAreStoredAndExported) {
  db.confirm({ids[1], ids[3]}, {1.2e-3, 1.3e-3}, {0.02, 0.15}, 5, 1700000400);
  const Record r = *db.record(ids[3]);
  EXPECT_TRUE(r.confirmed());
  EXPECT_DOUBLE_EQ(r.seconds(), 1.3e-3);
  EXPECT_DOUBLE_EQ(r.confirm_spread, 0.15);
  EXPECT_EQ(r.confirm_rounds, 5);
  // An export carries them, and an import puts them back.
  std::stringstream lines;
  export_jsonl(db, lines);
  EXPECT_NE(lines.str().find("\"confirm_rounds\":5"), std::string::npos);
  TestDb other_dir("confirm-copy");
  Database copy = Database::open(other_dir.where("c"));
  import_jsonl(copy, read_jsonl(lines, "lines"));
  for (const Record& c : copy.all_records()) {
    if (c.schedule == r.schedule) {
      EXPECT_DOUBLE_EQ(c.confirm_spread, 0.15);
      EXPECT_EQ(c.confirm_rounds, 5);
    }
  }
  EXPECT_THROW(db.confirm({ids[1], ids[3]}, {1e-3, 1e-3}, {0.1}, 5, 1), UserError);
  EXPECT_THROW(db.confirm({ids[1], ids[3]}, {1e-3, 1e-3}, {0.1, -1}, 5, 1), UserError);

  TuningRun run;
  run.workload_key = mm.key;
  run.target = cpu();
  const int64_t id = db.start_run(run);
  db.set_run_machine(id, 150.5, 0.03, "{\"loadavg_1min\":0.5}");
  EXPECT_DOUBLE_EQ(db.runs().back().peak_gflops, 150.5);
  EXPECT_DOUBLE_EQ(db.runs().back().peak_spread, 0.03);
  EXPECT_EQ(db.runs().back().machine, "{\"loadavg_1min\":0.5}");
  EXPECT_THROW(db.set_run_machine(id, 0, 0, "{}"), UserError);
  EXPECT_THROW(db.set_run_machine(id, 1, 0, "[1]"), UserError);
  EXPECT_THROW(db.set_run_machine(id + 100, 1, 0, "{}"), UserError);
}

}  // namespace
}  // namespace tensortune::database

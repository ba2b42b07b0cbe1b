// SPDX-License-Identifier: Apache-2.0
// Claims (Database::claim): concurrent jobs of one workload never get the same schedule, the
// budget counts records and other jobs' claims, and claims end when their records are stored,
// when their job releases them, when they expire, or when their process is gone.
#include "db_test_util.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

namespace tensortune::database {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

constexpr int64_t kNow = 1700000000;

struct Claims : ::testing::Test {
  Claims() : dir("claims"), db(Database::open(dir.where("t"))), mm(workload("matmul", 64)) {
    db.put_workload(mm);
  }
  ClaimRequest request(int64_t owner, std::vector<std::string> schedules, int64_t budget = 100) {
    ClaimRequest q;
    q.budget_keys = {mm.key};
    q.budget = budget;
    q.workload_key = mm.key;
    q.target = cpu();
    q.schedules = std::move(schedules);
    q.claimer = Claimer{owner, ::getpid(), "here"};
    q.now = kNow;
    return q;
  }
  TestDb dir;
  Database db;
  WorkloadInfo mm;
};

TEST_F(Claims, AScheduleClaimedOrStoredIsNotClaimedAgain) {
  const Record stored = record(mm, cpu(), 1, 1e-3);
  db.add_records({stored});
  const ClaimResult a = db.claim(request(1, {stored.schedule, "s2", "s3"}));
  EXPECT_EQ(a.claimed, (std::vector<bool>{false, true, true}));
  EXPECT_EQ(a.used, 1);
  const ClaimResult b = db.claim(request(2, {"s2", "s4"}));
  EXPECT_EQ(b.claimed, (std::vector<bool>{false, true}));
  EXPECT_EQ(b.used, 3);  // one record and job 1's two claims
  // Storing a claimed schedule ends its claim; the record keeps it from job 2 now.
  Record s2 = record(mm, cpu(), 2, 1e-3);
  s2.schedule = "s2";
  db.add_records({s2});
  EXPECT_EQ(db.claim(request(2, {"s2"})).claimed, (std::vector<bool>{false}));
  EXPECT_EQ(db.claim(request(3, {})).used, 4);  // 2 records, "s3" of job 1, "s4" of job 2
  db.release_claims(1);
  EXPECT_EQ(db.claim(request(3, {"s3"})).claimed, (std::vector<bool>{true}));
}

TEST_F(Claims, TheBudgetCountsEveryJobsRecordsAndClaims) {
  db.add_records({record(mm, cpu(), 1, 1e-3), record(mm, cpu(), 2, 1e-3)});
  EXPECT_EQ(db.claim(request(1, {"a", "b"}, 5)).claimed, (std::vector<bool>{true, true}));
  const ClaimResult b = db.claim(request(2, {"c", "d", "e"}, 5));
  EXPECT_EQ(b.used, 4);
  EXPECT_EQ(b.claimed, (std::vector<bool>{true, false, false}));
}

TEST_F(Claims, ExpiredClaimsAndClaimsOfGoneProcessesAreReleased) {
  EXPECT_EQ(db.claim(request(1, {"a"})).claimed, (std::vector<bool>{true}));
  ClaimRequest later = request(2, {"a"});
  later.now = kNow + Database::kClaimSeconds + 1;
  EXPECT_EQ(db.claim(later).claimed, (std::vector<bool>{true}));
  // A process of this host that is gone (kill -9 in mid-batch) leaves claims no one stores.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0)
    ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  ClaimRequest gone = request(3, {"b"});
  gone.claimer.pid = child;
  EXPECT_EQ(db.claim(gone).claimed, (std::vector<bool>{true}));
  EXPECT_EQ(db.claim(request(4, {"b"})).claimed, (std::vector<bool>{true}));
  // Another host's claims live until they expire: its processes cannot be seen from here.
  ClaimRequest elsewhere = request(5, {"c"});
  elsewhere.claimer = Claimer{5, child, "elsewhere"};
  EXPECT_EQ(db.claim(elsewhere).claimed, (std::vector<bool>{true}));
  EXPECT_EQ(db.claim(request(4, {"c"})).claimed, (std::vector<bool>{false}));
}

}  // namespace
}  // namespace tensortune::database

// SPDX-License-Identifier: Apache-2.0
// The measurement queue on both backends: jobs go to workers of their target only, most urgent
// first; a completion stores the record once and ends the job, its claim and its run's counts
// together; an expired lease sends the job elsewhere and the late result is discarded; a job
// whose leases keep expiring becomes an error record; concurrent workers claim each job once.
#include "db_test_util.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <set>
#include <sys/wait.h>
#include <unistd.h>

namespace tensortune::database {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

/// Job `tile` of `w`: a record template with an empty measurement.
Job job(const WorkloadInfo& w, const TargetKey& t, int tile, int64_t priority = 0) {
  Job j;
  j.record = record(w, t, tile, 0, "Ok");
  j.record.repeats.clear();
  j.record.median_seconds = 0;
  j.options = "{\"threads\":2}";
  j.owner = 77;
  j.priority = priority;
  return j;
}

WorkerInfo worker(const TargetKey& t, const std::string& name) {
  WorkerInfo w;
  w.name = name;
  w.host = "host";
  w.pid = 1;
  w.target = t;
  w.started = 1000;
  return w;
}

/// What a worker stores for `j`: its record, measured at `seconds`.
Record measured(const Job& j, double seconds) {
  Record r = j.record;
  r.status = "Ok";
  r.repeats = {seconds};
  r.median_seconds = seconds;
  r.timestamp = 2000;
  return r;
}

class Queue : public ::testing::Test {
 protected:
  Queue() : dir("queue"), db(Database::open(dir.where())), mm(workload("matmul", 64)) {
    db.put_workload(mm);
  }
  TestDb dir;
  Database db;
  WorkloadInfo mm;
};

TEST_F(Queue, AJobGoesToAWorkerOfItsTargetMostUrgentFirstAndIsStoredOnce) {
  const TargetKey other = cpu("{\"cpu\":\"skylake\",\"cores\":2}");
  TuningRun run;
  run.workload_key = mm.key;
  run.target = cpu();
  run.started = 1000;
  const int64_t run_id = db.start_run(run);
  std::vector<Job> jobs = {job(mm, cpu(), 1), job(mm, cpu(), 2, 5), job(mm, other, 3)};
  for (Job& j : jobs)
    j.record.run_id = run_id;
  const std::vector<int64_t> ids = db.enqueue(jobs, 1000);
  ASSERT_EQ(ids.size(), 3U);
  const int64_t w = db.register_worker(worker(cpu(), "zen4"));
  LeasePolicy policy;
  std::optional<Job> first = db.claim_job(w, 1001, policy);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->id, ids[1]);  // priority 5
  EXPECT_EQ(first->state, "running");
  EXPECT_EQ(first->worker_id, w);
  EXPECT_EQ(first->lease_until, 1001 + policy.lease_seconds);
  EXPECT_EQ(first->attempts, 1);
  EXPECT_EQ(first->record.schedule, jobs[1].record.schedule);
  EXPECT_EQ(first->options, "{\"threads\":2}");
  EXPECT_EQ(first->record.run_id, run_id);
  std::optional<Job> second = db.claim_job(w, 1002, policy);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->id, ids[0]);
  EXPECT_FALSE(db.claim_job(w, 1003, policy).has_value());  // the third is another device's

  const std::optional<int64_t> stored = db.complete_job(first->id, w, measured(*first, 2e-3), 1004);
  ASSERT_TRUE(stored.has_value());
  const std::optional<Record> r = db.record(*stored);
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->median_seconds, 2e-3);
  EXPECT_EQ(r->run_id, run_id);
  const std::vector<Job> now = db.jobs(ids);
  ASSERT_EQ(now.size(), 3U);
  EXPECT_EQ(now[1].state, "done");
  EXPECT_EQ(now[1].record_id, *stored);
  EXPECT_EQ(now[1].finished, 1004);
  EXPECT_EQ(now[0].state, "running");
  EXPECT_EQ(now[2].state, "queued");
  EXPECT_EQ(db.runs().at(0).trials, 1);
  EXPECT_EQ(db.runs().at(0).ok_trials, 1);
  // Completing it again is a late result: nothing more is stored.
  EXPECT_FALSE(db.complete_job(first->id, w, measured(*first, 1e-3), 1005).has_value());
  EXPECT_EQ(db.count_records(), 1);
  const std::vector<WorkerInfo> workers = db.workers();
  ASSERT_EQ(workers.size(), 1U);
  EXPECT_EQ(workers[0].done, 1);
  EXPECT_EQ(workers[0].discarded, 1);
  EXPECT_EQ(workers[0].running_job, ids[0]);
  const std::vector<QueueStats> stats = db.queue_stats(1010);
  ASSERT_EQ(stats.size(), 2U);
}

TEST_F(Queue, AnExpiredLeaseSendsTheJobElsewhereAndTheLateResultIsDiscarded) {
  const int64_t id = db.enqueue({job(mm, cpu(), 1)}, 1000).at(0);
  const int64_t a = db.register_worker(worker(cpu(), "a"));
  const int64_t b = db.register_worker(worker(cpu(), "b"));
  LeasePolicy policy;
  policy.lease_seconds = 10;
  ASSERT_TRUE(db.claim_job(a, 1000, policy).has_value());
  // A heartbeat keeps it: at 1009 a's lease is renewed to 1019.
  EXPECT_TRUE(db.heartbeat(a, {id}, 1009, policy.lease_seconds));
  EXPECT_FALSE(db.claim_job(b, 1015, policy).has_value());
  // Then a falls silent (killed, or cut off): after 1019 the job is b's.
  std::optional<Job> again = db.claim_job(b, 1020, policy);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->id, id);
  EXPECT_EQ(again->attempts, 2);
  EXPECT_FALSE(db.complete_job(id, a, measured(*again, 1e-3), 1021).has_value());
  EXPECT_EQ(db.count_records(), 0);
  ASSERT_TRUE(db.complete_job(id, b, measured(*again, 2e-3), 1022).has_value());
  EXPECT_EQ(db.count_records(), 1);
  EXPECT_DOUBLE_EQ(db.best(mm.key, cpu()).at(0).median_seconds, 2e-3);
  EXPECT_FALSE(db.heartbeat(12345, {}, 1023, 10));  // an unknown worker
}

TEST_F(Queue, AJobWhoseLeasesKeepExpiringBecomesAnErrorRecord) {
  const int64_t id = db.enqueue({job(mm, cpu(), 1)}, 1000).at(0);
  const int64_t w = db.register_worker(worker(cpu(), "w"));
  LeasePolicy policy;
  policy.lease_seconds = 5;
  policy.max_attempts = 2;
  ASSERT_TRUE(db.claim_job(w, 1000, policy).has_value());
  ASSERT_TRUE(db.claim_job(w, 1010, policy).has_value());  // the first lease expired
  EXPECT_EQ(db.requeue_expired(1020, policy), 1);
  const Job failed = db.jobs({id}).at(0);
  EXPECT_EQ(failed.state, "error");
  ASSERT_NE(failed.record_id, 0);
  const Record r = *db.record(failed.record_id);
  EXPECT_EQ(r.status, "RuntimeError");
  EXPECT_NE(r.error.find("lost the job's lease 2 times"), std::string::npos) << r.error;
  EXPECT_EQ(r.schedule, job(mm, cpu(), 1).record.schedule);
  EXPECT_FALSE(db.claim_job(w, 1030, policy).has_value());
}

TEST_F(Queue, AStoppingWorkerReturnsItsJobAndATunerCancelsWhatIsQueued) {
  const std::vector<int64_t> ids =
      db.enqueue({job(mm, cpu(), 1), job(mm, cpu(), 2), job(mm, cpu(), 3)}, 1000);
  const int64_t w = db.register_worker(worker(cpu(), "w"));
  LeasePolicy policy;
  ASSERT_TRUE(db.claim_job(w, 1000, policy).has_value());
  db.stop_worker(w, 1001);
  EXPECT_EQ(db.jobs({ids[0]}).at(0).state, "queued");
  EXPECT_NE(db.workers().at(0).stopped, 0);
  ASSERT_TRUE(db.claim_job(w, 1002, policy).has_value());
  EXPECT_EQ(db.cancel_jobs(77), 2);  // the running one stays
  EXPECT_EQ(db.jobs(ids).size(), 1U);
}

TEST_F(Queue, AWorkerClaimsSeveralJobsAtOnceMostUrgentFirst) {
  const std::vector<int64_t> ids = db.enqueue(
      {job(mm, cpu(), 1), job(mm, cpu(), 2, 3), job(mm, cpu(), 3), job(mm, cpu(), 4, 1)}, 1000);
  const int64_t w = db.register_worker(worker(cpu(), "w"));
  LeasePolicy policy;
  const std::vector<Job> three = db.claim_jobs(w, 1000, policy, 3);
  ASSERT_EQ(three.size(), 3U);
  EXPECT_EQ(three[0].id, ids[1]);
  EXPECT_EQ(three[1].id, ids[3]);
  EXPECT_EQ(three[2].id, ids[0]);
  for (const Job& j : three)
    EXPECT_EQ(j.state, "running");
  // The heartbeat renews the leases of the jobs held, and only those.
  EXPECT_TRUE(db.heartbeat(w, {three[0].id, three[1].id}, 1020, policy.lease_seconds));
  const std::vector<Job> now = db.jobs({three[0].id, three[2].id});
  EXPECT_EQ(now[0].lease_until, 1020 + policy.lease_seconds);
  EXPECT_EQ(now[1].lease_until, 1000 + policy.lease_seconds);
  const std::vector<Job> rest = db.claim_jobs(w, 1021, policy, 5);
  ASSERT_EQ(rest.size(), 1U);
  EXPECT_EQ(rest[0].id, ids[2]);
  EXPECT_THROW(db.claim_jobs(w, 1022, policy, 0), UserError);
}

TEST_F(Queue, ConcurrentWorkersClaimEveryJobExactlyOnce) {
  constexpr int kJobs = 120;
  constexpr int kWorkers = 4;
  std::vector<Job> jobs;
  for (int i = 1; i <= kJobs; ++i)
    jobs.push_back(job(mm, cpu(), i));
  db.enqueue(jobs, 1000);
  const std::string where = db.path();
  std::vector<pid_t> children;
  for (int k = 0; k < kWorkers; ++k) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 0;
      try {
        Database mine = Database::open(where);
        const int64_t w = mine.register_worker(worker(cpu(), "w" + std::to_string(k)));
        LeasePolicy policy;
        while (std::optional<Job> j = mine.claim_job(w, 1001, policy)) {
          if (!mine.complete_job(j->id, w, measured(*j, 1e-3), 1002))
            status = 2;
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "worker %d: %s\n", k, e.what());
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
  EXPECT_EQ(db.count_records(), kJobs);
  EXPECT_EQ(db.measured_schedules(mm.key, cpu()).size(), static_cast<size_t>(kJobs));
  int64_t done = 0;
  for (const WorkerInfo& w : db.workers())
    done += w.done;
  EXPECT_EQ(done, kJobs);
}

}  // namespace
}  // namespace tensortune::database

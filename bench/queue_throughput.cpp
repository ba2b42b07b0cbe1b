// SPDX-License-Identifier: Apache-2.0
// The measurement queue's own cost per job (issue: a fleet on PostgreSQL): W worker processes,
// each with a heartbeat thread on its own connection (as `tensortune worker` has), claim, complete
// and store N jobs of a trivial kernel whose measurement takes no time, so what is timed is the
// queue: the claim (FOR UPDATE SKIP LOCKED), the heartbeat and the completion transaction that
// stores the record. Prints jobs/s (median of --reps runs) and checks every job was stored once.
//
//   queue_throughput --db postgresql://USER@HOST:PORT/DBNAME [--jobs 4000] [--workers 8] [--reps 3]
//
// bench/queue_throughput.sh starts a throwaway server, runs this, then times a real tuning job
// through the queue against the same job measured locally.
#include "tensortune/database/database.h"
#include "tensortune/support/stats.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <iostream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace tensortune;  // NOLINT(google-build-using-namespace): a small program

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

database::WorkloadInfo workload() {
  database::WorkloadInfo w;
  w.key = "add_4_bench";
  w.name = "add_4_float32";
  w.op = "add";
  w.spec = "add:M=4,N=1";
  w.canonical_text = "add";
  w.flop_count = 4;
  return w;
}

database::TargetKey target() {
  return {"llvm -cores=2", "bench"};
}

/// One worker process: claims and completes until the queue is empty; a heartbeat thread on a
/// second connection renews its leases meanwhile. Returns the jobs it stored.
int64_t work(const std::string& where, int index) {
  database::Database db = database::Database::open(where);
  database::WorkerInfo me;
  me.name = "bench" + std::to_string(index);
  me.host = "bench";
  me.pid = ::getpid();
  me.target = target();
  me.started = 1;
  const int64_t id = db.register_worker(me);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> holding{0};
  std::thread heartbeat([&] {
    database::Database beat = database::Database::open(where);
    while (!stop.load()) {
      beat.heartbeat(id, {holding.load()}, 1000, 30);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  database::LeasePolicy policy;
  int64_t stored = 0;
  while (std::optional<database::Job> job = db.claim_job(id, 1000, policy)) {
    holding = job->id;
    database::Record r = job->record;
    r.repeats = {1e-6};
    r.median_seconds = 1e-6;
    r.timestamp = 1001;
    if (db.complete_job(job->id, id, r, 1001))
      ++stored;
  }
  stop = true;
  heartbeat.join();
  return stored;
}

double one_run(const std::string& where, int jobs, int workers) {
  {
    database::Database db = database::Database::open(where);
    db.put_workload(workload());
    std::vector<database::Job> batch;
    for (int i = 0; i < jobs; ++i) {
      database::Job j;
      j.record.workload_key = workload().key;
      j.record.target = target();
      j.record.schedule = fmt::format("{{\"steps\":[],\"n\":{}}}", now() * 1e6 + i);
      batch.push_back(std::move(j));
    }
    db.enqueue(batch, 1000);
  }
  const double t0 = now();
  std::vector<pid_t> children;
  for (int k = 0; k < workers; ++k) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int status = 0;
      try {
        work(where, k);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "worker %d: %s\n", k, e.what());
        status = 1;
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  bool ok = true;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  const double seconds = now() - t0;
  if (!ok)
    throw std::runtime_error("a worker failed");
  return seconds;
}

int run(int argc, char** argv) {
  std::string where;
  int jobs = 4000, workers = 8, reps = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--db")
      where = argv[i + 1];
    else if (flag == "--jobs")
      jobs = std::atoi(argv[i + 1]);
    else if (flag == "--workers")
      workers = std::atoi(argv[i + 1]);
    else if (flag == "--reps")
      reps = std::atoi(argv[i + 1]);
    else
      throw std::runtime_error("unknown option " + flag);
  }
  if (where.empty() || jobs < 1 || workers < 1 || reps < 1)
    throw std::runtime_error(
        "usage: queue_throughput --db URL [--jobs N] [--workers W] [--reps R]");
  std::vector<double> rates;
  for (int r = 0; r < reps; ++r) {
    const double seconds = one_run(where, jobs, workers);
    rates.push_back(jobs / seconds);
    std::cout << fmt::format("run {}: {} jobs by {} workers in {:.2f} s: {:.0f} jobs/s\n", r + 1,
                             jobs, workers, seconds, rates.back());
  }
  database::Database db = database::Database::open(where, true);
  const int64_t records = db.count_records();
  int64_t done = 0, discarded = 0;
  for (const database::WorkerInfo& w : db.workers()) {
    done += w.done;
    discarded += w.discarded;
  }
  std::cout << fmt::format(
      "queue overhead: median {:.0f} jobs/s (claim + heartbeat + completion with its record; "
      "goal >= 500); {} records for {} jobs, {} completions, {} discarded\n",
      support::median(rates), records, int64_t{jobs} * reps, done, discarded);
  return records == int64_t{jobs} * reps && done == records ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "queue_throughput: " << e.what() << "\n";
    return 1;
  }
}

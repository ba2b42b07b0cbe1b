// SPDX-License-Identifier: Apache-2.0
// `tensortune worker`: measures the jobs `tune --measure-on queue` puts in a database, on the
// device it runs on; and `tensortune workers`: the fleet, its jobs in flight and its throughput.
#include "commands.h"
#include "pipeline.h"
#include "tensortune/database/database.h"
#include "tensortune/driver/compile.h"
#include "tensortune/lower/lower.h"
#include "tensortune/measure/measurer.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/support/log.h"
#include "tensortune/te/operators.h"
#include "tune_common.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace tensortune::cli {
namespace {

int64_t unix_now() {
  return static_cast<int64_t>(std::time(nullptr));
}

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0)
    return "unknown";
  return host;
}

/// Renews the worker's heartbeat and its jobs' leases every third of a lease, on a connection of
/// its own (a Database is used by one thread), while the main thread measures.
class Heartbeat {
 public:
  Heartbeat(const std::string& db, int64_t worker, int64_t lease_seconds)
      : db_(database::Database::open(db)), worker_(worker), lease_(lease_seconds) {
    // Beats from the start: a worker that waits for its first job is alive too.
    thread_ = std::thread([this] { loop(); });
  }
  ~Heartbeat() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;
  /// The jobs whose leases the beats renew.
  void hold(std::vector<int64_t> jobs) {
    std::lock_guard<std::mutex> lock(jobs_mutex_);
    jobs_ = std::move(jobs);
  }

 private:
  void loop() {
    const auto period = std::chrono::milliseconds(std::max<int64_t>(500, lease_ * 1000 / 3));
    std::unique_lock<std::mutex> lock(mutex_);
    do {
      lock.unlock();
      try {
        db_.heartbeat(worker_, held(), unix_now(), lease_);
      } catch (const std::exception& e) {  // the server is away: the next beat tries again
        TT_LOG(1) << "worker: heartbeat failed: " << e.what();
      }
      lock.lock();
    } while (!wake_.wait_for(lock, period, [this] { return stop_; }));
  }

  std::vector<int64_t> held() {
    std::lock_guard<std::mutex> lock(jobs_mutex_);
    return jobs_;
  }

  std::mutex jobs_mutex_;
  std::vector<int64_t> jobs_;
  database::Database db_;
  int64_t worker_;
  int64_t lease_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

/// A measurer with the reference of one workload, per measurement options: building the
/// reference runs the default kernel, so it is kept for the jobs that follow.
struct Bench {
  std::unique_ptr<measure::Measurer> measurer;
  std::shared_ptr<const measure::Reference> reference;
};

class JobRunner {
 public:
  JobRunner(database::Database& db, target::Target target) : db_(db), target_(std::move(target)) {}

  /// The jobs' records with their measurements, in order. Jobs of one workload and options are
  /// measured together, so their candidates build in parallel as a tuner's batch does. A job
  /// that cannot be replayed (a workload whose spec does not rebuild it, a schedule that does
  /// not parse or apply, options out of range) gets a CompileError record that says why.
  /// Nothing in a job row runs as code: the schedule is data, checked on replay.
  std::vector<database::Record> run(const std::vector<database::Job>& jobs) {
    std::vector<measure::MeasureResult> results(jobs.size());
    std::vector<bool> done(jobs.size(), false);
    for (size_t first = 0; first < jobs.size(); ++first) {
      if (done[first])
        continue;
      std::vector<size_t> group;
      for (size_t i = first; i < jobs.size(); ++i) {
        if (!done[i] && jobs[i].options == jobs[first].options &&
            jobs[i].record.workload_key == jobs[first].record.workload_key) {
          group.push_back(i);
          done[i] = true;
        }
      }
      measure_group(jobs, group, results);
    }
    std::vector<database::Record> out;
    for (size_t i = 0; i < jobs.size(); ++i) {
      database::Record r = jobs[i].record;
      const measure::MeasureResult& m = results[i];
      r.status = measure::status_name(m.status);
      r.error = m.message;
      r.repeats = m.repeats;
      r.median_seconds = m.ok() ? m.median_seconds : 0.0;
      r.build_seconds = m.build_seconds;
      r.run_seconds = m.run_seconds;
      r.wall_seconds = m.wall_seconds;
      r.timestamp = unix_now();
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  static measure::MeasureResult refused(const std::exception& e) {
    measure::MeasureResult m;
    m.status = measure::MeasureStatus::CompileError;
    m.message = std::string("the job does not replay here: ") + e.what();
    return m;
  }

  /// Jobs `group` of `jobs` (one workload, one set of options) into `results`.
  void measure_group(const std::vector<database::Job>& jobs,
                     const std::vector<size_t>& group,
                     std::vector<measure::MeasureResult>& results) {
    const std::string& key = jobs[group[0]].record.workload_key;
    std::optional<te::Workload> workload;
    Bench* bench = nullptr;
    try {
      const std::optional<database::WorkloadInfo> info = db_.workload(key);
      TT_USER_CHECK(info && !info->spec.empty())
          << "workload '" << key << "' has no spec in the database to rebuild it from";
      workload = te::make_workload(info->spec);
      TT_USER_CHECK(workload->key() == key) << "the spec '" << info->spec << "' builds workload '"
                                            << workload->key() << "', not '" << key << "'";
      bench = &bench_for(jobs[group[0]].options, *workload);
    } catch (const std::exception& e) {
      for (size_t i : group)
        results[i] = refused(e);
      return;
    }
    std::vector<ir::LoweredFunc> funcs;
    std::vector<size_t> lowered;
    for (size_t i : group) {
      try {
        const schedule::Schedule sched = schedule::parse_schedule(jobs[i].record.schedule);
        TT_USER_CHECK(sched.workload_key == key)
            << "the schedule is of workload '" << sched.workload_key << "'";
        funcs.push_back(lower::lower(*workload, sched, target_));
        lowered.push_back(i);
      } catch (const std::exception& e) {
        results[i] = refused(e);
      }
    }
    if (funcs.empty())
      return;
    const std::vector<measure::MeasureResult> measured =
        bench->measurer->measure(*bench->reference, funcs);
    for (size_t k = 0; k < lowered.size(); ++k)
      results[lowered[k]] = measured[k];
  }

  Bench& bench_for(const std::string& options, const te::Workload& workload) {
    const std::string id = options + "\n" + workload.key();
    auto it = benches_.find(id);
    if (it != benches_.end())
      return it->second;
    if (benches_.size() >= 8)  // each holds a worker process and a reference's outputs
      benches_.erase(benches_.begin());
    measure::MeasurerOptions mo = measurer_options_of_job(options);
    mo.max_consecutive_errors = 0;  // a worker serves every tuner: it never gives up
    Bench bench;
    bench.measurer = std::make_unique<measure::Measurer>(target_, mo);
    bench.reference = bench.measurer->make_reference(
        lower::lower(workload, schedule::Schedule{workload.key(), {}}, target_),
        measure::Tolerance::for_reduction(workload.max_reduction_length()));
    return benches_.emplace(id, std::move(bench)).first->second;
  }

  database::Database& db_;
  target::Target target_;
  std::map<std::string, Bench> benches_;
};

}  // namespace

ArgParser worker_parser() {
  ArgParser parser(
      "worker",
      "worker --db URL --target T [--lease S] [--max-attempts N] [--name NAME] [--idle-exit S] "
      "[--max-jobs N]",
      "Measures the jobs that 'tune --measure-on queue' puts in the database, on this machine: "
      "registers the device (the target and its fingerprint) and takes only that target's "
      "jobs, claims each under a lease that a heartbeat renews, builds, runs and verifies it "
      "with the local measurer, and stores its record in the transaction that completes the "
      "job. A job whose lease expires (the worker killed, its machine rebooted or cut off) "
      "runs elsewhere, and a result that comes back after that is discarded. Ctrl-C or SIGTERM "
      "finish the job in hand, return nothing to the queue twice, and exit 0.");
  parser
      .option("db", "URL", "the database the tuners queue into (postgresql://... or a file)", {},
              true)
      .option("target", "T", "the target this machine measures (as tune's --target)", {}, true)
      .option("lease", "S", "seconds a claimed job is held without a heartbeat (default 30)")
      .option("max-attempts", "N",
              "leases a job gets before it becomes an error record (default 3)")
      .option("name", "NAME", "the name 'tensortune workers' shows (default HOST:PID)")
      .option("idle-exit", "S", "exit after S seconds without a job (default 0: never)")
      .option("max-jobs", "N", "exit after N jobs (default 0: no limit)")
      .option(
          "batch", "N",
          "jobs claimed at a time, built in parallel (default: this machine's CPUs, at most 8)");
  return parser;
}

int run_worker(const std::vector<std::string>& args) {
  std::optional<ArgParser::Parsed> parsed = parse_command_line(worker_parser(), args);
  if (!parsed)
    return 0;
  const ArgParser::Parsed& p = *parsed;
  const std::string where = p.get("db");
  const target::Target target = resolve_target(p.get("target"));
  check_target_runs_here(p.get("target"), "worker", true);
  database::LeasePolicy policy;
  policy.lease_seconds = p.get_int("lease", 30, 2, 86400);
  policy.max_attempts = p.get_int("max-attempts", 3, 1, 1000);
  const double idle_exit = p.get_double("idle-exit", 0, 0, 1e9);
  const int64_t max_jobs = p.get_int("max-jobs", 0, 0, INT64_MAX);
  // As many jobs at a time as the local measurer builds in parallel.
  const int64_t batch =
      p.get_int("batch", std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, 8), 1, 4096);

  database::Database db = database::Database::open(where);
  database::WorkerInfo me;
  me.host = host_name();
  me.pid = ::getpid();
  me.name = p.get("name", me.host + ":" + std::to_string(me.pid));
  me.target = driver::target_key(target::Target::parse(p.get("target")));
  me.started = unix_now();
  const int64_t id = db.register_worker(me);
  std::cerr << fmt::format("worker {} ({}) takes the jobs of '{}' from {}\n", id, me.name,
                           me.target.target, db.name());
  StopOnSignals stop(true);
  int64_t done = 0, discarded = 0;
  {
    Heartbeat heartbeat(where, id, policy.lease_seconds);
    JobRunner runner(db, target);
    auto idle_since = std::chrono::steady_clock::now();
    while (!stop.flag().load() && (max_jobs == 0 || done + discarded < max_jobs)) {
      const int64_t room = max_jobs == 0 ? batch : std::min(batch, max_jobs - done - discarded);
      const std::vector<database::Job> jobs = db.claim_jobs(id, unix_now(), policy, room);
      if (jobs.empty()) {
        const double idle =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - idle_since).count();
        if (idle_exit > 0 && idle >= idle_exit)
          break;
        db.wait_for("jobs", 1.0);
        continue;
      }
      std::vector<int64_t> ids;
      for (const database::Job& j : jobs)
        ids.push_back(j.id);
      heartbeat.hold(ids);
      const std::vector<database::Record> measured = runner.run(jobs);
      for (size_t i = 0; i < jobs.size(); ++i) {
        const std::optional<int64_t> record =
            db.complete_job(jobs[i].id, id, measured[i], unix_now());
        if (record) {
          ++done;
          TT_LOG(1) << "worker: job " << jobs[i].id << " -> record " << *record << " ("
                    << measured[i].status << ")";
        } else {
          ++discarded;
          std::cerr << "worker: job " << jobs[i].id
                    << ": the lease was lost meanwhile; the result is discarded (it runs "
                       "elsewhere)\n";
        }
      }
      heartbeat.hold({});
      idle_since = std::chrono::steady_clock::now();
    }
  }
  db.stop_worker(id, unix_now());
  std::cerr << fmt::format("worker {}: {} jobs stored, {} late results discarded\n", id, done,
                           discarded);
  return 0;
}

ArgParser workers_parser() {
  ArgParser parser("workers", "workers --db URL [--json]",
                   "Lists the measurement fleet of a database: each worker with its target, the "
                   "job it runs, the jobs it stored and when it was last heard from; then the "
                   "queue per target (queued, running, done, errors, done in the last minute).");
  parser.option("db", "URL", "the database (postgresql://... or a file)", {}, true)
      .flag("json", "print one JSON document");
  return parser;
}

int run_workers(const std::vector<std::string>& args) {
  std::optional<ArgParser::Parsed> parsed = parse_command_line(workers_parser(), args);
  if (!parsed)
    return 0;
  const ArgParser::Parsed& p = *parsed;
  check_database_exists(p.get("db"), "workers");
  const database::Database db = database::Database::open(p.get("db"), true);
  const int64_t now = unix_now();
  const std::vector<database::WorkerInfo> workers = db.workers();
  const std::vector<database::QueueStats> queue = db.queue_stats(now);
  auto state_of = [&](const database::WorkerInfo& w) -> std::string {
    if (w.stopped != 0)
      return "stopped";
    // Silent for over a minute: killed, rebooted or cut off (its leases expire and run elsewhere).
    return now - w.heartbeat > 60 ? "silent" : (w.running_job != 0 ? "busy" : "idle");
  };
  if (p.has("json")) {
    support::Json out = support::Json::object();
    out["db"] = db.name();
    support::Json list = support::Json::array();
    for (const database::WorkerInfo& w : workers) {
      support::Json j = support::Json::object();
      j["id"] = w.id;
      j["name"] = w.name;
      j["target"] = w.target.target;
      j["state"] = state_of(w);
      j["job"] = w.running_job;
      j["done"] = w.done;
      j["discarded"] = w.discarded;
      j["seconds_since_heartbeat"] = now - w.heartbeat;
      list.push_back(std::move(j));
    }
    out["workers"] = std::move(list);
    support::Json q = support::Json::array();
    for (const database::QueueStats& s : queue) {
      support::Json j = support::Json::object();
      j["target"] = s.target.target;
      j["queued"] = s.queued;
      j["running"] = s.running;
      j["done"] = s.done;
      j["errors"] = s.errors;
      j["done_last_minute"] = s.done_last_minute;
      q.push_back(std::move(j));
    }
    out["queue"] = std::move(q);
    std::cout << out.dump() << "\n";
    return 0;
  }
  std::cout << db.name() << ": " << workers.size() << " workers\n";
  for (const database::WorkerInfo& w : workers) {
    std::cout << fmt::format(
        "  #{:<4} {:<28} {:<8} job {:<8} {:>7} done {:>4} late  heard {}s ago  {}\n", w.id, w.name,
        state_of(w), w.running_job != 0 ? std::to_string(w.running_job) : "-", w.done, w.discarded,
        now - w.heartbeat, w.target.target);
  }
  for (const database::QueueStats& s : queue) {
    std::cout << fmt::format("queue '{}': {} queued, {} running, {} done, {} errors; {} jobs/min\n",
                             s.target.target, s.queued, s.running, s.done, s.errors,
                             s.done_last_minute);
  }
  return 0;
}

}  // namespace tensortune::cli

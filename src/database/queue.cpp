// SPDX-License-Identifier: Apache-2.0
// The measurement queue (see queue.h and Database::enqueue). Claims and completions run in shared
// transactions that lock only the job rows they change, so many workers claim side by side on
// PostgreSQL (FOR UPDATE SKIP LOCKED); a completion stores the record, ends the job and wakes the
// tuners in one transaction, after checking that the worker still holds the job's lease.
#include "database/connection.h"
#include "database/record_rows.h"
#include "database/write.h"
#include "tensortune/database/database.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace tensortune::database {

using detail::Statement;

namespace {

constexpr const char* kJobColumns =
    "j.id, w.key, t.target, t.fingerprint, j.schedule, j.knobs, j.seed, j.tool_version, "
    "j.git_revision, COALESCE(j.run_id, 0), j.options, j.owner, j.priority, j.state, "
    "COALESCE(j.worker_id, 0), j.lease_until, j.attempts, COALESCE(j.record_id, 0), j.created, "
    "j.finished FROM jobs j JOIN workloads w ON w.id = j.workload_id "
    "JOIN targets t ON t.id = j.target_id";

Job read_job(const Statement& st) {
  Job j;
  j.id = st.get_int(0);
  j.record.workload_key = st.get_text(1);
  j.record.target = TargetKey{st.get_text(2), st.get_text(3)};
  j.record.schedule = st.get_text(4);
  j.record.knobs = st.get_text(5);
  j.record.seed = st.get_int(6);
  j.record.tool_version = st.get_text(7);
  j.record.git_revision = st.get_text(8);
  j.record.run_id = st.get_int(9);
  j.options = st.get_text(10);
  j.owner = st.get_int(11);
  j.priority = st.get_int(12);
  j.state = st.get_text(13);
  j.worker_id = st.get_int(14);
  j.lease_until = st.get_int(15);
  j.attempts = st.get_int(16);
  j.record_id = st.get_int(17);
  j.created = st.get_int(18);
  j.finished = st.get_int(19);
  return j;
}

/// "FOR UPDATE SKIP LOCKED" on PostgreSQL (rows another claimer holds are passed over); SQLite
/// runs one writer at a time and has no row locks.
const char* skip_locked(const detail::Connection& conn) {
  return conn.dialect() == detail::Dialect::Postgres ? " FOR UPDATE SKIP LOCKED" : "";
}

const char* for_update(const detail::Connection& conn) {
  return conn.dialect() == detail::Dialect::Postgres ? " FOR UPDATE" : "";
}

/// Stores `r` as job `job`'s record and ends the job in `state`, inside the caller's transaction:
/// the claim of its schedule ends and its run's trial counts grow, as add_records does. The job's
/// workload and target row ids, when known (> 0), save their lookups.
int64_t store_job_record(detail::Connection& conn,
                         int64_t job,
                         const Record& r,
                         const std::string& state,
                         int64_t now,
                         int64_t workload_row = 0,
                         int64_t target_row = 0) {
  detail::RecordInserter inserter(conn);
  if (workload_row > 0 && target_row > 0)
    inserter.prime(r.workload_key, workload_row, r.target, target_row);
  const int64_t id = inserter.insert(r);
  Statement unclaim(conn,
                    "DELETE FROM claims WHERE (workload_id, target_id, schedule) IN (SELECT "
                    "workload_id, target_id, schedule FROM records WHERE id = ?)");
  unclaim.bind(1, id).run();
  if (r.run_id != 0) {
    Statement count(conn,
                    "UPDATE tuning_runs SET trials = trials + 1, ok_trials = ok_trials + ? "
                    "WHERE id = ?");
    count.bind(1, int64_t{r.ok() ? 1 : 0}).bind(2, r.run_id).run();
  }
  Statement end(conn, "UPDATE jobs SET state = ?, record_id = ?, finished = ? WHERE id = ?");
  end.bind(1, state).bind(2, id).bind(3, now).bind(4, job).run();
  conn.notify("tt_done");
  return id;
}

}  // namespace

std::vector<int64_t> Database::enqueue(const std::vector<Job>& jobs, int64_t now) {
  return write(
      [&] {
        std::vector<int64_t> ids;
        Statement insert(*conn_,
                         "INSERT INTO jobs(workload_id, target_id, schedule, knobs, seed, "
                         "tool_version, git_revision, run_id, options, owner, priority, created) "
                         "VALUES(?, ?, ?, ?, ?, ?, ?, NULLIF(CAST(? AS BIGINT), 0), ?, ?, ?, ?) "
                         "RETURNING id");
        for (const Job& j : jobs) {
          const Record& r = j.record;
          insert.reset();
          insert.bind(1, detail::workload_id(*conn_, r.workload_key));
          insert.bind(2, detail::target_id(*conn_, r.target)).bind(3, r.schedule);
          insert.bind(4, r.knobs).bind(5, r.seed).bind(6, r.tool_version);
          insert.bind(7, r.git_revision).bind(8, r.run_id).bind(9, j.options);
          insert.bind(10, j.owner).bind(11, j.priority).bind(12, now);
          TT_CHECK(insert.step()) << "database: an insert returned no id";
          ids.push_back(insert.get_int(0));
        }
        insert.reset();
        conn_->notify("tt_jobs");
        return ids;
      },
      false);
}

int64_t Database::register_worker(const WorkerInfo& w) {
  return write([&] {
    Statement st(*conn_,
                 "INSERT INTO workers(name, host, pid, target_id, started, heartbeat) "
                 "VALUES(?, ?, ?, ?, ?, ?) RETURNING id");
    st.bind(1, w.name).bind(2, w.host).bind(3, w.pid);
    st.bind(4, detail::target_id(*conn_, w.target)).bind(5, w.started).bind(6, w.started);
    TT_CHECK(st.step()) << "database: an insert returned no id";
    return st.get_int(0);
  });
}

bool Database::heartbeat(int64_t worker,
                         const std::vector<int64_t>& jobs,
                         int64_t now,
                         int64_t lease_seconds) {
  return write(
      [&] {
        // Job rows before the worker's row, as every queue transaction locks them: a completion
        // holds its job and then counts it on the worker. Only the job the worker says it
        // holds: one whose claim it never heard back about expires and runs again.
        Statement leases(*conn_,
                         "UPDATE jobs SET lease_until = ? WHERE id = ? AND worker_id = ? AND "
                         "state = 'running'");
        for (int64_t job : jobs) {
          leases.reset();
          leases.bind(1, now + lease_seconds).bind(2, job).bind(3, worker).run();
        }
        Statement beat(*conn_, "UPDATE workers SET heartbeat = ? WHERE id = ?");
        beat.bind(1, now).bind(2, worker).run();
        return conn_->changes() == 1;
      },
      false);
}

void Database::stop_worker(int64_t worker, int64_t now) {
  write(
      [&] {
        Statement back(*conn_,
                       "UPDATE jobs SET state = 'queued', worker_id = NULL, lease_until = 0 "
                       "WHERE worker_id = ? AND state = 'running'");
        back.bind(1, worker).run();
        if (conn_->changes() > 0)
          conn_->notify("tt_jobs");
        Statement stop(*conn_, "UPDATE workers SET stopped = ?, heartbeat = ? WHERE id = ?");
        stop.bind(1, now).bind(2, now).bind(3, worker).run();
        return 0;
      },
      false);
}

int64_t Database::requeue_expired(int64_t now, const LeasePolicy& policy) {
  // Found outside a transaction first: nearly always there is none, and then nothing is locked.
  {
    Statement any(*conn_, "SELECT 1 FROM jobs WHERE state = 'running' AND lease_until < ? LIMIT 1");
    if (!any.bind(1, now).step())
      return 0;
  }
  return write(
      [&] {
        std::vector<Job> expired;
        {
          const std::string sql =
              std::string("SELECT ") + kJobColumns +
              " WHERE j.state = 'running' AND j.lease_until < ?" +
              (conn_->dialect() == detail::Dialect::Postgres ? " FOR UPDATE OF j SKIP LOCKED" : "");
          Statement st(*conn_, sql);
          st.bind(1, now);
          while (st.step())
            expired.push_back(read_job(st));
        }
        Statement back(*conn_,
                       "UPDATE jobs SET state = 'queued', worker_id = NULL, lease_until = 0 "
                       "WHERE id = ?");
        for (const Job& j : expired) {
          if (j.attempts < policy.max_attempts) {
            back.reset();
            back.bind(1, j.id).run();
            continue;
          }
          Record r = j.record;
          r.status = "RuntimeError";
          r.error = "its worker lost the job's lease " + std::to_string(j.attempts) +
                    " times (killed, rebooted, or cut off from the database)";
          r.timestamp = now;
          store_job_record(*conn_, j.id, r, "error", now);
        }
        if (!expired.empty())
          conn_->notify("tt_jobs");
        return static_cast<int64_t>(expired.size());
      },
      false);
}

std::optional<Job> Database::claim_job(int64_t worker, int64_t now, const LeasePolicy& policy) {
  std::vector<Job> one = claim_jobs(worker, now, policy, 1);
  if (one.empty())
    return std::nullopt;
  return std::move(one[0]);
}

std::vector<Job> Database::claim_jobs(int64_t worker,
                                      int64_t now,
                                      const LeasePolicy& policy,
                                      int64_t max) {
  TT_USER_CHECK(max >= 1) << "database: claim at least one job, not " << max;
  // Leases are counted in seconds: looking for expired ones once a second is enough.
  if (now != last_requeue_check_) {
    requeue_expired(now, policy);
    last_requeue_check_ = now;
  }
  const std::string claim =
      std::string(
          "UPDATE jobs SET state = 'running', worker_id = ?, lease_until = ?, attempts = "
          "attempts + 1 WHERE id IN (SELECT j.id FROM jobs j WHERE j.state = 'queued' AND "
          "j.target_id = (SELECT target_id FROM workers WHERE id = ?) ORDER BY j.priority "
          "DESC, j.id LIMIT ?") +
      skip_locked(*conn_) + ")";
  std::vector<Job> out;
  if (conn_->dialect() == detail::Dialect::Postgres) {
    // One statement, one round trip: the claim and the jobs' rows with workload and target.
    // Should its answer be lost, the jobs stay leased to nobody who renews them and run again
    // once the lease expires.
    std::string read = std::string("SELECT ") + kJobColumns;
    read.replace(read.find("FROM jobs j"), 11, "FROM claimed j");
    Statement st(*conn_, "WITH claimed AS (" + claim + " RETURNING *) " + read +
                             " ORDER BY j.priority DESC, j.id");
    st.bind(1, worker).bind(2, now + policy.lease_seconds).bind(3, worker).bind(4, max);
    while (st.step())
      out.push_back(read_job(st));
    return out;
  }
  const std::vector<int64_t> ids = write(
      [&] {
        std::vector<int64_t> claimed;
        Statement st(*conn_, claim + " RETURNING id");
        st.bind(1, worker).bind(2, now + policy.lease_seconds).bind(3, worker).bind(4, max);
        while (st.step())
          claimed.push_back(st.get_int(0));
        return claimed;
      },
      false);
  out = jobs(ids);
  std::sort(out.begin(), out.end(), [](const Job& x, const Job& y) {
    return x.priority != y.priority ? x.priority > y.priority : x.id < y.id;
  });
  return out;
}

std::optional<int64_t> Database::complete_job(int64_t job,
                                              int64_t worker,
                                              const Record& measured,
                                              int64_t now) {
  return write(
      [&]() -> std::optional<int64_t> {
        int64_t workload_row = 0, target_row = 0;
        {
          Statement st(*conn_, std::string("SELECT state, COALESCE(worker_id, 0), workload_id, "
                                           "target_id FROM jobs WHERE id = ?") +
                                   for_update(*conn_));
          st.bind(1, job);
          const bool mine = st.step() && st.get_text(0) == "running" && st.get_int(1) == worker;
          if (mine) {
            workload_row = st.get_int(2);
            target_row = st.get_int(3);
          }
          st.reset();
          if (!mine) {
            Statement late(*conn_, "UPDATE workers SET discarded = discarded + 1 WHERE id = ?");
            late.bind(1, worker).run();
            return std::nullopt;
          }
        }
        const int64_t id =
            store_job_record(*conn_, job, measured, "done", now, workload_row, target_row);
        Statement done(*conn_, "UPDATE workers SET done = done + 1, heartbeat = ? WHERE id = ?");
        done.bind(1, now).bind(2, worker).run();
        return id;
      },
      false);
}

std::vector<Job> Database::jobs(const std::vector<int64_t>& ids) const {
  // One query per 100 ids (a tuner polls its whole batch), in the order given.
  std::map<int64_t, Job> found;
  for (size_t start = 0; start < ids.size(); start += 100) {
    const size_t n = std::min<size_t>(100, ids.size() - start);
    std::string marks;
    for (size_t i = 0; i < n; ++i)
      marks += i == 0 ? "?" : ", ?";
    Statement st(*conn_, std::string("SELECT ") + kJobColumns + " WHERE j.id IN (" + marks + ")");
    for (size_t i = 0; i < n; ++i)
      st.bind(static_cast<int>(i) + 1, ids[start + i]);
    while (st.step()) {
      Job j = read_job(st);
      found.emplace(j.id, std::move(j));
    }
  }
  std::vector<Job> out;
  for (int64_t id : ids) {
    auto it = found.find(id);
    if (it != found.end())
      out.push_back(it->second);
  }
  return out;
}

int64_t Database::cancel_jobs(int64_t owner) {
  return write(
      [&] {
        Statement st(*conn_, "DELETE FROM jobs WHERE owner = ? AND state = 'queued'");
        st.bind(1, owner).run();
        return conn_->changes();
      },
      false);
}

std::vector<WorkerInfo> Database::workers() const {
  Statement st(*conn_,
               "SELECT w.id, w.name, w.host, w.pid, t.target, t.fingerprint, w.started, "
               "w.heartbeat, w.stopped, w.done, w.discarded, COALESCE((SELECT max(j.id) FROM jobs "
               "j WHERE j.worker_id = w.id AND j.state = 'running'), 0) FROM workers w JOIN "
               "targets t ON t.id = w.target_id ORDER BY w.id");
  std::vector<WorkerInfo> out;
  while (st.step()) {
    WorkerInfo w;
    w.id = st.get_int(0);
    w.name = st.get_text(1);
    w.host = st.get_text(2);
    w.pid = st.get_int(3);
    w.target = TargetKey{st.get_text(4), st.get_text(5)};
    w.started = st.get_int(6);
    w.heartbeat = st.get_int(7);
    w.stopped = st.get_int(8);
    w.done = st.get_int(9);
    w.discarded = st.get_int(10);
    w.running_job = st.get_int(11);
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<QueueStats> Database::queue_stats(int64_t now) const {
  Statement st(*conn_,
               "SELECT t.target, t.fingerprint, j.state, count(*), "
               "sum(CASE WHEN j.finished >= ? THEN 1 ELSE 0 END) FROM jobs j JOIN targets t ON "
               "t.id = j.target_id GROUP BY t.target, t.fingerprint, j.state "
               "ORDER BY t.target, t.fingerprint, j.state");
  st.bind(1, now - 60);
  std::vector<QueueStats> out;
  while (st.step()) {
    TargetKey target{st.get_text(0), st.get_text(1)};
    if (out.empty() || !(out.back().target == target)) {
      out.emplace_back();
      out.back().target = target;
    }
    QueueStats& q = out.back();
    const std::string state = st.get_text(2);
    const int64_t n = st.get_int(3);
    if (state == "queued")
      q.queued = n;
    else if (state == "running")
      q.running = n;
    else if (state == "done")
      q.done = n;
    else
      q.errors += n;
    q.done_last_minute += state == "done" ? st.get_int(4) : 0;
  }
  return out;
}

bool Database::wait_for(const std::string& what, double seconds) {
  TT_CHECK(what == "jobs" || what == "done") << "database: no queue event '" << what << "'";
  return conn_->wait_notify("tt_" + what, seconds);
}

void Database::fail_job(int64_t job, const Record& error_record, int64_t now) {
  write(
      [&] {
        store_job_record(*conn_, job, error_record, "error", now);
        return 0;
      },
      false);
}

}  // namespace tensortune::database

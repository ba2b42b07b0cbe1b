// SPDX-License-Identifier: Apache-2.0
// The read side of the tuning database: best-k, history, stats, and the lookups of the driver
// and the tuner. Every query filters by the exact target identity, so targets never mix.
#include "database/connection.h"
#include "database/record_rows.h"
#include "tensortune/database/database.h"

#include <map>
#include <string>

namespace tensortune::database {

using detail::Statement;

namespace {

std::string select_records(const std::string& where_and_order) {
  return std::string("SELECT ") + detail::kRecordColumns + " FROM " + detail::kRecordFrom + " " +
         where_and_order;
}

std::vector<Record> read_all(Statement& st) {
  std::vector<Record> out;
  while (st.step()) {
    out.push_back(detail::read_record(st));
  }
  return out;
}

constexpr const char* kSameWorkloadAndTarget =
    "WHERE w.key = ? AND t.target = ? AND t.fingerprint = ? ";

WorkloadInfo read_workload(const Statement& st) {
  WorkloadInfo w;
  w.key = st.get_text(0);
  w.name = st.get_text(1);
  w.canonical_text = st.get_text(2);
  w.flop_count = st.get_double(3);
  w.op = st.get_text(4);
  w.spec = st.get_text(5);
  return w;
}

}  // namespace

std::vector<Record> Database::best(const std::string& workload_key,
                                   const TargetKey& target,
                                   int64_t k) const {
  std::string sql =
      select_records(std::string(kSameWorkloadAndTarget) + "AND " + detail::kMayBeBest +
                     " ORDER BY " + detail::kRankSeconds + ", r.id LIMIT ?");
  Statement st(*conn_, sql);
  st.bind(1, workload_key).bind(2, target.target).bind(3, target.fingerprint).bind(4, k);
  return read_all(st);
}

std::vector<Record> Database::history(const std::string& workload_key,
                                      const TargetKey& target) const {
  std::string sql = select_records(std::string(kSameWorkloadAndTarget) + "ORDER BY r.id");
  Statement st(*conn_, sql);
  st.bind(1, workload_key).bind(2, target.target).bind(3, target.fingerprint);
  return read_all(st);
}

std::optional<Record> Database::record(int64_t id) const {
  std::string sql = select_records("WHERE r.id = ?");
  Statement st(*conn_, sql);
  st.bind(1, id);
  if (!st.step()) {
    return std::nullopt;
  }
  return detail::read_record(st);
}

bool Database::contains(const std::string& workload_key,
                        const TargetKey& target,
                        const std::string& schedule) const {
  std::string sql = std::string("SELECT 1 FROM ") + detail::kRecordFrom + " " +
                    kSameWorkloadAndTarget + "AND r.schedule = ? LIMIT 1";
  Statement st(*conn_, sql);
  st.bind(1, workload_key).bind(2, target.target).bind(3, target.fingerprint).bind(4, schedule);
  return st.step();
}

std::vector<std::string> Database::measured_schedules(const std::string& workload_key,
                                                      const TargetKey& target) const {
  std::string sql = std::string("SELECT DISTINCT r.schedule FROM ") + detail::kRecordFrom + " " +
                    kSameWorkloadAndTarget + "ORDER BY r.schedule";
  Statement st(*conn_, sql);
  st.bind(1, workload_key).bind(2, target.target).bind(3, target.fingerprint);
  std::vector<std::string> out;
  while (st.step()) {
    out.push_back(st.get_text(0));
  }
  return out;
}

std::optional<WorkloadInfo> Database::workload(const std::string& key) const {
  Statement st(*conn_,
               "SELECT key, name, canonical_text, flop_count, op, spec FROM workloads "
               "WHERE key = ?");
  st.bind(1, key);
  if (!st.step()) {
    return std::nullopt;
  }
  return read_workload(st);
}

std::vector<WorkloadInfo> Database::workloads() const {
  Statement st(*conn_,
               "SELECT key, name, canonical_text, flop_count, op, spec FROM workloads "
               "ORDER BY key");
  std::vector<WorkloadInfo> out;
  while (st.step()) {
    out.push_back(read_workload(st));
  }
  return out;
}

std::vector<TargetKey> Database::targets() const {
  Statement st(*conn_, "SELECT target, fingerprint FROM targets ORDER BY target, fingerprint");
  std::vector<TargetKey> out;
  while (st.step()) {
    out.push_back(TargetKey{st.get_text(0), st.get_text(1)});
  }
  return out;
}

std::vector<WorkloadStats> Database::stats() const {
  const std::string sql =
      std::string(
          "SELECT w.key, w.name, w.flop_count, t.target, t.fingerprint, r.status, "
          "count(*) FROM ") +
      detail::kRecordFrom +
      " GROUP BY w.key, w.name, w.flop_count, t.target, t.fingerprint, r.status "
      "ORDER BY w.key, t.target, t.fingerprint, r.status";
  Statement st(*conn_, sql);
  std::vector<WorkloadStats> out;
  while (st.step()) {
    TargetKey target{st.get_text(3), st.get_text(4)};
    std::string key = st.get_text(0);
    if (out.empty() || out.back().workload_key != key || !(out.back().target == target)) {
      WorkloadStats s;
      s.workload_key = key;
      s.workload_name = st.get_text(1);
      s.flop_count = st.get_double(2);
      s.target = target;
      out.push_back(std::move(s));
    }
    WorkloadStats& s = out.back();
    std::string status = st.get_text(5);
    int64_t n = st.get_int(6);
    s.records += n;
    s.by_status.emplace_back(status, n);
    if (status == "Ok")
      s.ok = n;
  }
  // The best as `best` names it, with the one time every surface shows for it.
  for (WorkloadStats& s : out) {
    const std::vector<Record> b =
        s.ok > 0 ? best(s.workload_key, s.target, 1) : std::vector<Record>{};
    if (b.empty())
      continue;
    s.best_record_id = b[0].id;
    s.best_seconds = b[0].seconds();
    s.best_confirmed = b[0].confirmed();
  }
  return out;
}

std::vector<Record> Database::best_of_operator(const std::string& op,
                                               const TargetKey& target) const {
  std::string sql = select_records(
      "WHERE r.id IN (SELECT id FROM (SELECT r2.id AS id, row_number() OVER ("
      "  PARTITION BY r2.workload_id ORDER BY COALESCE(c2.rank_seconds, r2.median_seconds),"
      "  r2.id) AS rank FROM records r2 JOIN workloads w2 ON w2.id = r2.workload_id"
      "  JOIN targets t2 ON t2.id = r2.target_id"
      "  LEFT JOIN confirmations c2 ON c2.record_id = r2.id"
      "  WHERE w2.op = ? AND t2.target = ? AND t2.fingerprint = ? AND r2.status = 'Ok'"
      "  AND COALESCE(c2.error, '') = '') ranked"
      " WHERE rank = 1) ORDER BY w.key");
  Statement st(*conn_, sql);
  st.bind(1, op).bind(2, target.target).bind(3, target.fingerprint);
  return read_all(st);
}

std::vector<TuningRun> Database::runs() const {
  Statement st(*conn_,
               "SELECT u.id, w.key, t.target, t.fingerprint, u.options, u.started, u.ended, "
               "u.trials, u.ok_trials, u.peak_gflops, u.peak_spread, u.machine FROM tuning_runs u "
               "JOIN workloads w ON w.id = "
               "u.workload_id JOIN targets t ON t.id = u.target_id ORDER BY u.id");
  std::vector<TuningRun> out;
  while (st.step()) {
    TuningRun r;
    r.id = st.get_int(0);
    r.workload_key = st.get_text(1);
    r.target = TargetKey{st.get_text(2), st.get_text(3)};
    r.options = st.get_text(4);
    r.started = st.get_int(5);
    r.ended = st.get_int(6);
    r.trials = st.get_int(7);
    r.ok_trials = st.get_int(8);
    r.peak_gflops = st.get_double(9);
    r.peak_spread = st.get_double(10);
    r.machine = st.get_text(11);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Record> Database::all_records(std::vector<std::string>* unreadable) const {
  std::string sql = select_records(
      "ORDER BY w.key, t.target, t.fingerprint, r.timestamp, r.schedule, r.seed, r.id");
  Statement st(*conn_, sql);
  if (unreadable == nullptr)
    return read_all(st);
  std::vector<Record> out;
  while (st.step()) {
    try {
      out.push_back(detail::read_record(st));
    } catch (const UserError& e) {
      unreadable->push_back(e.what());
    }
  }
  return out;
}

int64_t Database::count_records() const {
  Statement st(*conn_, "SELECT count(*) FROM records");
  st.step();
  return st.get_int(0);
}

}  // namespace tensortune::database

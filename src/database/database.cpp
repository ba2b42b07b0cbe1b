// SPDX-License-Identifier: Apache-2.0
// Opening, migrating and writing the tuning database (see database.h); queries are in
// queries.cpp.
#include "tensortune/database/database.h"

#include "database/checks.h"
#include "database/connection.h"
#include "database/record_rows.h"
#include "database/schema.h"
#include "database/write.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/support/stats.h"

#include <cmath>
#include <map>

namespace tensortune::database {

using detail::exec;
using detail::Statement;
using detail::Transaction;

int current_schema_version() {
  return detail::schema_version_count();
}

bool is_server_url(const std::string& where) {
  return detail::is_postgres_url(where);
}

std::string display_name(const std::string& where) {
  return detail::is_postgres_url(where) ? detail::redact_url(where) : where;
}

Database::Database(std::string path, std::unique_ptr<detail::Connection> conn)
    : path_(std::move(path)), conn_(std::move(conn)) {}

Database::Database(Database&& other) noexcept = default;
Database& Database::operator=(Database&& other) noexcept = default;
Database::~Database() = default;

const std::string& Database::name() const {
  return conn_->name();
}

namespace {

std::unique_ptr<detail::Connection> open_connection(const std::string& where, bool read_only) {
  return detail::is_postgres_url(where) ? detail::open_postgres(where, read_only)
                                        : detail::open_sqlite(where, read_only);
}

}  // namespace

Database Database::open(const std::string& path, bool read_only, Check check) {
  Database result(path, open_connection(path, read_only));
  detail::Connection& conn = *result.conn_;
  int version = detail::stored_version(conn);
  if (read_only) {
    TT_USER_CHECK(version == detail::schema_version_count())
        << "database '" << conn.name() << "' has schema version " << version
        << "; open it writable once to migrate it to version " << detail::schema_version_count();
  } else {
    // A damaged file accepted writes (prune deleted records from it, vacuum said "disk is
    // full"): it is named, and left as it is, before the first write, the migration included.
    detail::check_integrity(conn, check == Check::Full);
    const bool current = version == detail::schema_version_count();
    if (current)
      detail::check_schema(conn);
    detail::migrate(conn, detail::schema_version_count());
    if (!current)
      detail::check_schema(conn);
  }
  return result;
}

Database Database::open_at_version(const std::string& path, int version) {
  TT_USER_CHECK(version >= 1 && version <= detail::schema_version_count())
      << "database: no schema version " << version;
  Database result(path, open_connection(path, false));
  detail::migrate(*result.conn_, version);
  return result;
}

int Database::schema_version() const {
  return detail::stored_version(*conn_);
}

void Database::put_workload(const WorkloadInfo& w) {
  write([&] {
    detail::put_workload(*conn_, w);
    return 0;
  });
}

int64_t Database::start_run(const TuningRun& run) {
  return write([&] {
    int64_t workload = detail::workload_id(*conn_, run.workload_key);
    int64_t target = detail::target_id(*conn_, run.target);
    Statement st(*conn_,
                 "INSERT INTO tuning_runs(workload_id, target_id, options, started) "
                 "VALUES(?, ?, ?, ?) RETURNING id");
    st.bind(1, workload).bind(2, target).bind(3, run.options).bind(4, run.started);
    TT_CHECK(st.step()) << "database: an insert returned no id";
    return st.get_int(0);
  });
}

void Database::finish_run(int64_t run_id, int64_t trials, int64_t ok_trials, int64_t ended) {
  write([&] {
    Statement st(*conn_,
                 "UPDATE tuning_runs SET trials = ?, ok_trials = ?, ended = ? WHERE id = ?");
    st.bind(1, trials).bind(2, ok_trials).bind(3, ended).bind(4, run_id).run();
    TT_USER_CHECK(conn_->changes() == 1) << "database: no tuning run " << run_id;
    return 0;
  });
}

std::vector<int64_t> Database::add_records(const std::vector<Record>& records) {
  return write([&] {
    std::vector<int64_t> ids;
    ids.reserve(records.size());
    detail::RecordInserter inserter(*conn_);
    std::map<int64_t, std::pair<int64_t, int64_t>> per_run;  // run id -> (trials, ok)
    // A stored schedule needs its claim no more (Database::claim): the record now keeps other
    // jobs from measuring it.
    Statement unclaim(*conn_,
                      "DELETE FROM claims WHERE (workload_id, target_id, schedule) IN (SELECT "
                      "workload_id, target_id, schedule FROM records WHERE id = ?)");
    for (const Record& r : records) {
      ids.push_back(inserter.insert(r));
      unclaim.reset();
      unclaim.bind(1, ids.back()).run();
      if (r.run_id != 0) {
        ++per_run[r.run_id].first;
        per_run[r.run_id].second += r.ok() ? 1 : 0;
      }
    }
    // The run's counts move with its records, in their transaction: a job killed by kill -9
    // leaves a row that says what it stored (and ended = 0).
    Statement count(*conn_,
                    "UPDATE tuning_runs SET trials = trials + ?, ok_trials = ok_trials + ? "
                    "WHERE id = ?");
    for (const auto& [run, n] : per_run) {
      count.reset();
      count.bind(1, n.first).bind(2, n.second).bind(3, run).run();
    }
    return ids;
  });
}

int64_t Database::merge(const std::vector<WorkloadInfo>& workloads,
                        const std::vector<Record>& records) {
  return write([&] {
    for (const WorkloadInfo& w : workloads) {
      detail::put_workload(*conn_, w);
    }
    int64_t skipped = 0;
    detail::RecordInserter inserter(*conn_);
    // By ids, so that the lookup is one probe of records_by_identity (see kSameRecord).
    Statement same(*conn_, detail::kSameRecord);
    std::map<std::string, int64_t> workload_ids;
    std::map<TargetKey, int64_t> target_ids;
    for (const Record& r : records) {
      auto w = workload_ids.find(r.workload_key);
      if (w == workload_ids.end())
        w = workload_ids.emplace(r.workload_key, detail::workload_id(*conn_, r.workload_key)).first;
      auto t = target_ids.find(r.target);
      if (t == target_ids.end())
        t = target_ids.emplace(r.target, detail::target_id(*conn_, r.target)).first;
      same.reset();
      same.bind(1, w->second).bind(2, t->second).bind(3, r.schedule).bind(4, r.seed);
      if (same.bind(5, r.timestamp).step()) {
        ++skipped;
        continue;
      }
      inserter.insert(r);
    }
    return skipped;
  });
}

int64_t Database::prune(int64_t k) {
  TT_USER_CHECK(k >= 0) << "database: prune needs k >= 0, not " << k;
  return write([&] {
    // The kept set is fixed first: dropping a confirmation would change the rank of its record.
    exec(*conn_, "DROP TABLE IF EXISTS prune_keep");
    const std::string keep_sql =
        std::string(
            "CREATE TEMP TABLE prune_keep AS SELECT id FROM (SELECT r.id AS id, "
            "row_number() OVER (PARTITION BY r.workload_id, r.target_id ORDER BY ") +
        detail::kRankSeconds +
        ", r.id) AS rank FROM records r LEFT JOIN confirmations c ON c.record_id = r.id "
        "WHERE " +
        detail::kMayBeBest + ") ranked WHERE rank <= ?";
    Statement keep(*conn_, keep_sql);
    keep.bind(1, k).run();
    exec(*conn_, "DELETE FROM confirmations WHERE record_id NOT IN (SELECT id FROM prune_keep)");
    exec(*conn_, "DELETE FROM records WHERE id NOT IN (SELECT id FROM prune_keep)");
    int64_t deleted = conn_->changes();
    exec(*conn_, "DROP TABLE prune_keep");
    return deleted;
  });
}

void Database::confirm(const std::vector<int64_t>& ids,
                       const std::vector<double>& seconds,
                       int64_t timestamp) {
  confirm(ids, seconds, std::vector<double>(ids.size(), 0.0), 0, timestamp);
}

void Database::confirm(const std::vector<int64_t>& ids,
                       const std::vector<double>& seconds,
                       const std::vector<double>& spreads,
                       int64_t rounds,
                       int64_t timestamp) {
  TT_USER_CHECK(spreads.size() == ids.size())
      << "database: confirm got " << ids.size() << " records and " << spreads.size() << " spreads";
  TT_USER_CHECK(ids.size() == seconds.size())
      << "database: confirm got " << ids.size() << " records and " << seconds.size() << " times";
  TT_USER_CHECK(ids.size() >= 2) << "database: a confirmation compares at least 2 records";
  write([&] {
    Statement st(*conn_,
                 "SELECT status, median_seconds, workload_id, target_id FROM records WHERE id = ?");
    std::vector<double> ratios;  // stored / measured again
    int64_t workload = -1;
    int64_t target = -1;
    for (size_t i = 0; i < ids.size(); ++i) {
      st.reset();
      st.bind(1, ids[i]);
      TT_USER_CHECK(st.step()) << "database: confirm: no record " << ids[i];
      TT_USER_CHECK(st.get_text(0) == "Ok") << "database: confirm: record " << ids[i] << " failed";
      TT_USER_CHECK(seconds[i] > 0)
          << "database: confirm: record " << ids[i] << " needs a time > 0";
      TT_USER_CHECK(i == 0 || (st.get_int(2) == workload && st.get_int(3) == target))
          << "database: confirm: record " << ids[i] << " is of another workload or target";
      workload = st.get_int(2);
      target = st.get_int(3);
      ratios.push_back(st.get_double(1) / seconds[i]);
    }
    st.reset();
    const double scale = support::median(ratios);
    detail::RecordInserter rows(*conn_);
    for (size_t i = 0; i < ids.size(); ++i)
      rows.confirm(ids[i], seconds[i], seconds[i] * scale, timestamp, spreads[i], rounds);
    return 0;
  });
}

void Database::fail_confirmation(int64_t id, const std::string& error, int64_t timestamp) {
  TT_USER_CHECK(!error.empty()) << "database: a failed confirmation of record " << id
                                << " needs a reason";
  write([&] {
    Statement st(*conn_, "SELECT status, median_seconds FROM records WHERE id = ?");
    st.bind(1, id);
    TT_USER_CHECK(st.step()) << "database: confirm: no record " << id;
    TT_USER_CHECK(st.get_text(0) == "Ok") << "database: confirm: record " << id << " failed";
    const double median = st.get_double(1);
    st.reset();
    detail::RecordInserter(*conn_).fail_confirmation(id, median, error, timestamp);
    return 0;
  });
}

void Database::set_run_machine(int64_t run_id,
                               double peak_gflops,
                               double peak_spread,
                               const std::string& machine) {
  TT_USER_CHECK(std::isfinite(peak_gflops) && peak_gflops > 0 && std::isfinite(peak_spread) &&
                peak_spread >= 0)
      << "database: run " << run_id << " needs a peak > 0 and a spread >= 0";
  TT_USER_CHECK(support::Json::parse(machine).is_object())
      << "database: the machine state of run " << run_id << " is not a JSON object";
  write([&] {
    Statement st(
        *conn_,
        "UPDATE tuning_runs SET peak_gflops = ?, peak_spread = ?, machine = ? WHERE id = ?");
    st.bind(1, peak_gflops).bind(2, peak_spread).bind(3, machine).bind(4, run_id).run();
    TT_USER_CHECK(conn_->changes() == 1) << "database: no tuning run " << run_id;
    return 0;
  });
}

void Database::vacuum() {
  exec(*conn_, "VACUUM");
}

void Database::use_rollback_journal() {
  if (is_server_url(path_))
    return;
  // Leaving WAL checkpoints the log into the file and deletes it; the answer is the mode now.
  Statement st(*conn_, "PRAGMA journal_mode = DELETE");
  TT_USER_CHECK(st.step() && st.get_text(0) == "delete")
      << "database '" << name() << "': cannot leave WAL mode (another process has it open?)";
}

}  // namespace tensortune::database

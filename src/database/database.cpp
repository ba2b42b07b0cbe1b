// SPDX-License-Identifier: Apache-2.0
// Opening, migrating and writing the tuning database (see database.h); queries are in
// queries.cpp.
#include "tensortune/database/database.h"

#include "database/checks.h"
#include "database/record_rows.h"
#include "database/schema.h"
#include "database/sqlite_util.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/support/stats.h"

#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <thread>

namespace tensortune::database {

using detail::exec;
using detail::Statement;
using detail::Transaction;

int current_schema_version() {
  return detail::schema_version_count();
}

Database::Database(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}

Database::Database(Database&& other) noexcept : path_(std::move(other.path_)), db_(other.db_) {
  other.db_ = nullptr;
}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    path_ = std::move(other.path_);
    db_ = other.db_;
    other.db_ = nullptr;
  }
  return *this;
}

Database::~Database() {
  sqlite3_close_v2(db_);
}

namespace {

/// Switches the connection to WAL. Processes that create one database at once race here: one
/// that read the empty file before another switched it asks for the exclusive lock while the
/// other's WAL connection holds a shared one, and SQLite answers SQLITE_BUSY at once, without
/// running the busy handler. The next try reads the header again and finds WAL already set, so
/// busy answers are retried for as long as the busy timeout would have waited.
void enable_wal(sqlite3* db, const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    int rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
    if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline) {
      TT_USER_CHECK(rc == SQLITE_OK)
          << "database '" << path << "': cannot switch to WAL mode: " << sqlite3_errmsg(db);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

/// `path` as an SQLite URI that opens it immutable (no locks, no -shm file).
std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      static const char* const kHex = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[(static_cast<unsigned char>(c) >> 4) & 0xF];
      uri += kHex[static_cast<unsigned char>(c) & 0xF];
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}

sqlite3* connect(const std::string& path, bool read_only, bool immutable);

/// Opens the file and sets the connection up; the schema is not touched. A WAL database read
/// from a folder this process cannot write (a read-only mount, another user's folder) cannot
/// get the -shm file an SQLite reader needs, so a reader that fails there and finds no -wal
/// file with content opens it immutable instead: nothing there can be written by this process,
/// and a writer elsewhere would have created the -shm file, which the first try would use.
sqlite3* open_connection(const std::string& path, bool read_only) {
  try {
    return connect(path, read_only, false);
  } catch (const UserError&) {
    std::error_code ec;
    const auto wal = std::filesystem::file_size(path + "-wal", ec);
    if (!read_only || (!ec && wal > 0) || !std::filesystem::is_regular_file(path, ec))
      throw;
    try {
      return connect(path, true, true);
    } catch (const UserError&) {
    }
    throw;  // the first error is the one to show
  }
}

sqlite3* connect(const std::string& path, bool read_only, bool immutable) {
  TT_USER_CHECK(!path.empty()) << "database: no path given";
  // SQLite says only "disk I/O error" (or "unable to open") for a folder.
  TT_USER_CHECK(!std::filesystem::is_directory(path))
      << "database '" << path << "' is a directory, not a database file";
  if (!read_only) {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) {
      std::filesystem::create_directories(parent, ec);
    }
    TT_USER_CHECK(!ec) << "database '" << path << "': cannot create directory '" << parent.string()
                       << "': " << ec.message();
  } else {
    TT_USER_CHECK(std::filesystem::exists(path)) << "database '" << path << "' does not exist";
  }
  sqlite3* db = nullptr;
  int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const std::string name = immutable ? immutable_uri(path) : path;
  int rc = sqlite3_open_v2(
      name.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX | (immutable ? SQLITE_OPEN_URI : 0), nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    throw UserError("database '" + path + "': cannot open: " + message);
  }
  try {
    sqlite3_busy_timeout(db, 60000);
    exec(db, "PRAGMA foreign_keys = ON");
    // Reading the schema fails here, clearly, when the file is not an SQLite database.
    int64_t tables = 0;
    {
      Statement count(db, "SELECT count(*) FROM sqlite_master");
      count.step();
      tables = count.get_int(0);
    }  // finalized: no read transaction stays open
    int version = detail::stored_version(db);
    TT_USER_CHECK(version > 0 || tables == 0)
        << "database '" << path << "' is an SQLite file but not a tensortune database";
    TT_USER_CHECK(version <= detail::schema_version_count())
        << "database '" << path << "' has schema version " << version
        << ", newer than this tensortune understands (" << detail::schema_version_count()
        << "); upgrade tensortune";
    if (!read_only) {
      // WAL: readers never block the writer, and a killed writer loses at most its open
      // transaction. synchronous=NORMAL is durable across process crashes in WAL mode.
      enable_wal(db, path);
      exec(db, "PRAGMA synchronous = NORMAL");
    }
  } catch (...) {
    sqlite3_close_v2(db);
    throw;
  }
  return db;
}

}  // namespace

Database Database::open(const std::string& path, bool read_only, Check check) {
  sqlite3* db = open_connection(path, read_only);
  Database result(path, db);
  int version = detail::stored_version(db);
  if (read_only) {
    TT_USER_CHECK(version == detail::schema_version_count())
        << "database '" << path << "' has schema version " << version
        << "; open it writable once to migrate it to version " << detail::schema_version_count();
  } else {
    // A damaged file accepted writes (prune deleted records from it, vacuum said "disk is
    // full"): it is named, and left as it is, before the first write, the migration included.
    detail::check_integrity(db, path, check == Check::Full);
    const bool current = version == detail::schema_version_count();
    if (current)
      detail::check_schema(db, path);
    detail::migrate(db, detail::schema_version_count());
    if (!current)
      detail::check_schema(db, path);
  }
  return result;
}

Database Database::open_at_version(const std::string& path, int version) {
  TT_USER_CHECK(version >= 1 && version <= detail::schema_version_count())
      << "database: no schema version " << version;
  sqlite3* db = open_connection(path, false);
  Database result(path, db);
  detail::migrate(db, version);
  return result;
}

int Database::schema_version() const {
  return detail::stored_version(db_);
}

void Database::put_workload(const WorkloadInfo& w) {
  Transaction tx(db_);
  detail::put_workload(db_, w);
  tx.commit();
}

int64_t Database::start_run(const TuningRun& run) {
  Transaction tx(db_);
  int64_t workload = detail::workload_id(db_, run.workload_key);
  int64_t target = detail::target_id(db_, run.target);
  Statement st(db_,
               "INSERT INTO tuning_runs(workload_id, target_id, options, started) "
               "VALUES(?, ?, ?, ?)");
  st.bind(1, workload).bind(2, target).bind(3, run.options).bind(4, run.started).run();
  int64_t id = sqlite3_last_insert_rowid(db_);
  tx.commit();
  return id;
}

void Database::finish_run(int64_t run_id, int64_t trials, int64_t ok_trials, int64_t ended) {
  Transaction tx(db_);
  Statement st(db_, "UPDATE tuning_runs SET trials = ?, ok_trials = ?, ended = ? WHERE id = ?");
  st.bind(1, trials).bind(2, ok_trials).bind(3, ended).bind(4, run_id).run();
  TT_USER_CHECK(sqlite3_changes(db_) == 1) << "database: no tuning run " << run_id;
  tx.commit();
}

std::vector<int64_t> Database::add_records(const std::vector<Record>& records) {
  Transaction tx(db_);
  std::vector<int64_t> ids;
  ids.reserve(records.size());
  detail::RecordInserter inserter(db_);
  std::map<int64_t, std::pair<int64_t, int64_t>> per_run;  // run id -> (trials, ok)
  // A stored schedule needs its claim no more (Database::claim): the record now keeps other
  // jobs from measuring it.
  Statement unclaim(db_,
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
  // The run's counts move with its records, in their transaction: a job killed by kill -9 leaves
  // a row that says what it stored (and ended = 0).
  Statement count(db_,
                  "UPDATE tuning_runs SET trials = trials + ?, ok_trials = ok_trials + ? "
                  "WHERE id = ?");
  for (const auto& [run, n] : per_run) {
    count.reset();
    count.bind(1, n.first).bind(2, n.second).bind(3, run).run();
  }
  tx.commit();
  return ids;
}

int64_t Database::merge(const std::vector<WorkloadInfo>& workloads,
                        const std::vector<Record>& records) {
  Transaction tx(db_);
  for (const WorkloadInfo& w : workloads) {
    detail::put_workload(db_, w);
  }
  int64_t skipped = 0;
  detail::RecordInserter inserter(db_);
  // By ids, so that the lookup is one probe of records_by_identity (see kSameRecord).
  Statement same(db_, detail::kSameRecord);
  std::map<std::string, int64_t> workload_ids;
  std::map<TargetKey, int64_t> target_ids;
  for (const Record& r : records) {
    auto w = workload_ids.find(r.workload_key);
    if (w == workload_ids.end())
      w = workload_ids.emplace(r.workload_key, detail::workload_id(db_, r.workload_key)).first;
    auto t = target_ids.find(r.target);
    if (t == target_ids.end())
      t = target_ids.emplace(r.target, detail::target_id(db_, r.target)).first;
    same.reset();
    same.bind(1, w->second).bind(2, t->second).bind(3, r.schedule).bind(4, r.seed);
    if (same.bind(5, r.timestamp).step()) {
      ++skipped;
      continue;
    }
    inserter.insert(r);
  }
  tx.commit();
  return skipped;
}

int64_t Database::prune(int64_t k) {
  TT_USER_CHECK(k >= 0) << "database: prune needs k >= 0, not " << k;
  Transaction tx(db_);
  // The kept set is fixed first: dropping a confirmation would change the rank of its record.
  exec(db_, "DROP TABLE IF EXISTS temp.prune_keep");
  const std::string keep_sql =
      std::string(
          "CREATE TEMP TABLE prune_keep AS SELECT id FROM (SELECT r.id AS id, "
          "row_number() OVER (PARTITION BY r.workload_id, r.target_id ORDER BY ") +
      detail::kRankSeconds +
      ", r.id) AS rank FROM records r LEFT JOIN confirmations c ON c.record_id = r.id "
      "WHERE " +
      detail::kMayBeBest + ") WHERE rank <= ?";
  Statement keep(db_, keep_sql.c_str());
  keep.bind(1, k).run();
  exec(db_, "DELETE FROM confirmations WHERE record_id NOT IN (SELECT id FROM temp.prune_keep)");
  exec(db_, "DELETE FROM records WHERE id NOT IN (SELECT id FROM temp.prune_keep)");
  int64_t deleted = sqlite3_changes(db_);
  exec(db_, "DROP TABLE temp.prune_keep");
  tx.commit();
  return deleted;
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
  Transaction tx(db_);
  Statement st(db_,
               "SELECT status, median_seconds, workload_id, target_id FROM records WHERE id = ?");
  std::vector<double> ratios;  // stored / measured again
  int64_t workload = -1;
  int64_t target = -1;
  for (size_t i = 0; i < ids.size(); ++i) {
    st.reset();
    st.bind(1, ids[i]);
    TT_USER_CHECK(st.step()) << "database: confirm: no record " << ids[i];
    TT_USER_CHECK(st.get_text(0) == "Ok") << "database: confirm: record " << ids[i] << " failed";
    TT_USER_CHECK(seconds[i] > 0) << "database: confirm: record " << ids[i] << " needs a time > 0";
    TT_USER_CHECK(i == 0 || (st.get_int(2) == workload && st.get_int(3) == target))
        << "database: confirm: record " << ids[i] << " is of another workload or target";
    workload = st.get_int(2);
    target = st.get_int(3);
    ratios.push_back(st.get_double(1) / seconds[i]);
  }
  const double scale = support::median(ratios);
  detail::RecordInserter rows(db_);
  for (size_t i = 0; i < ids.size(); ++i)
    rows.confirm(ids[i], seconds[i], seconds[i] * scale, timestamp, spreads[i], rounds);
  tx.commit();
}

void Database::fail_confirmation(int64_t id, const std::string& error, int64_t timestamp) {
  TT_USER_CHECK(!error.empty()) << "database: a failed confirmation of record " << id
                                << " needs a reason";
  Transaction tx(db_);
  Statement st(db_, "SELECT status, median_seconds FROM records WHERE id = ?");
  st.bind(1, id);
  TT_USER_CHECK(st.step()) << "database: confirm: no record " << id;
  TT_USER_CHECK(st.get_text(0) == "Ok") << "database: confirm: record " << id << " failed";
  detail::RecordInserter(db_).fail_confirmation(id, st.get_double(1), error, timestamp);
  tx.commit();
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
  Transaction tx(db_);
  Statement st(db_,
               "UPDATE tuning_runs SET peak_gflops = ?, peak_spread = ?, machine = ? WHERE id = ?");
  st.bind(1, peak_gflops).bind(2, peak_spread).bind(3, machine).bind(4, run_id).run();
  TT_USER_CHECK(sqlite3_changes(db_) == 1) << "database: no tuning run " << run_id;
  tx.commit();
}

void Database::vacuum() {
  exec(db_, "VACUUM");
}

}  // namespace tensortune::database

// SPDX-License-Identifier: Apache-2.0
// The migrations of the tuning database. Never edit a migration that has shipped: add one.
#include "database/schema.h"

#include "tensortune/support/error.h"

#include <string>
#include <utility>
#include <vector>

namespace tensortune::database::detail {
namespace {

const std::vector<const char*>& sqlite_migrations() {
  static const std::vector<const char*> kMigrations = {
      // 1: workloads, targets and measured records.
      R"sql(
      CREATE TABLE workloads(
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        canonical_text TEXT NOT NULL,
        flop_count REAL NOT NULL);
      CREATE TABLE targets(
        id INTEGER PRIMARY KEY,
        target TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        UNIQUE(target, fingerprint));
      CREATE TABLE records(
        id INTEGER PRIMARY KEY,
        workload_id INTEGER NOT NULL REFERENCES workloads(id),
        target_id INTEGER NOT NULL REFERENCES targets(id),
        schedule TEXT NOT NULL,
        status TEXT NOT NULL,
        error TEXT NOT NULL DEFAULT '',
        repeats TEXT NOT NULL DEFAULT '[]',
        median_seconds REAL NOT NULL DEFAULT 0,
        build_seconds REAL NOT NULL DEFAULT 0,
        run_seconds REAL NOT NULL DEFAULT 0,
        seed INTEGER NOT NULL DEFAULT 0,
        tool_version TEXT NOT NULL DEFAULT '',
        timestamp INTEGER NOT NULL);
      CREATE INDEX records_by_time ON records(workload_id, target_id, status, median_seconds);
      )sql",
      // 2: knob configurations, wall time and git revision of records; operator and spec of
      // workloads (for the nearest compatible record).
      R"sql(
      ALTER TABLE records ADD COLUMN knobs TEXT NOT NULL DEFAULT '{}';
      ALTER TABLE records ADD COLUMN wall_seconds REAL NOT NULL DEFAULT 0;
      ALTER TABLE records ADD COLUMN git_revision TEXT NOT NULL DEFAULT '';
      ALTER TABLE workloads ADD COLUMN op TEXT NOT NULL DEFAULT '';
      ALTER TABLE workloads ADD COLUMN spec TEXT NOT NULL DEFAULT '';
      UPDATE workloads SET op = substr(name, 1, instr(name || '_', '_') - 1);
      CREATE INDEX workloads_by_op ON workloads(op);
      )sql",
      // 3: tuning runs, and the lookup of already measured schedules (resume).
      R"sql(
      CREATE TABLE tuning_runs(
        id INTEGER PRIMARY KEY,
        workload_id INTEGER NOT NULL REFERENCES workloads(id),
        target_id INTEGER NOT NULL REFERENCES targets(id),
        options TEXT NOT NULL,
        started INTEGER NOT NULL,
        ended INTEGER NOT NULL DEFAULT 0,
        trials INTEGER NOT NULL DEFAULT 0,
        ok_trials INTEGER NOT NULL DEFAULT 0);
      ALTER TABLE records ADD COLUMN run_id INTEGER REFERENCES tuning_runs(id);
      CREATE INDEX records_by_schedule ON records(workload_id, target_id, schedule);
      )sql",
      // 4: confirmations: the best records of a workload measured again side by side
      // (Database::confirm); the latest one of each record.
      R"sql(
      CREATE TABLE confirmations(
        record_id INTEGER PRIMARY KEY REFERENCES records(id),
        seconds REAL NOT NULL,
        rank_seconds REAL NOT NULL,
        timestamp INTEGER NOT NULL);
      )sql",
      // 5: failed confirmations: a record whose schedule no longer replays, or that fails when
      // measured again, keeps a confirmation row with the reason and is never best.
      R"sql(
      ALTER TABLE confirmations ADD COLUMN error TEXT NOT NULL DEFAULT '';
      )sql",
      // 6: a record's identity (workload, target, schedule, seed, timestamp), which import skips
      // duplicates by. The schedule index alone left a scan of every record sharing the
      // schedule per imported record, quadratic in them; this one also serves the schedule
      // lookups, so it replaces that index.
      R"sql(
      CREATE INDEX records_by_identity
        ON records(workload_id, target_id, schedule, seed, timestamp);
      DROP INDEX records_by_schedule;
      )sql",
      // 7: claims: the schedules a tuning job is measuring, so that concurrent jobs of one
      // workload neither measure nor store one twice (Database::claim).
      R"sql(
      CREATE TABLE claims(
        workload_id INTEGER NOT NULL REFERENCES workloads(id),
        target_id INTEGER NOT NULL REFERENCES targets(id),
        schedule TEXT NOT NULL,
        owner INTEGER NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        claimed INTEGER NOT NULL,
        PRIMARY KEY(workload_id, target_id, schedule));
      CREATE INDEX claims_by_owner ON claims(owner);
      )sql",
      // 8: the spread of a confirmation's rounds (one figure per round, each in a fresh worker
      // process) and how many there were; the FMA peak measured during a tuning run, with its
      // spread, and the state of the machine then (JSON), so reports need not measure again.
      R"sql(
      ALTER TABLE confirmations ADD COLUMN spread REAL NOT NULL DEFAULT 0;
      ALTER TABLE confirmations ADD COLUMN rounds INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE tuning_runs ADD COLUMN peak_gflops REAL NOT NULL DEFAULT 0;
      ALTER TABLE tuning_runs ADD COLUMN peak_spread REAL NOT NULL DEFAULT 0;
      ALTER TABLE tuning_runs ADD COLUMN machine TEXT NOT NULL DEFAULT '{}';
      )sql",
      // 9: the measurement queue: jobs that tuners queue and workers on device machines claim
      // under a lease (Database::enqueue, claim_job, complete_job), and the workers.
      R"sql(
      CREATE TABLE workers(
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        target_id INTEGER NOT NULL REFERENCES targets(id),
        started INTEGER NOT NULL,
        heartbeat INTEGER NOT NULL,
        stopped INTEGER NOT NULL DEFAULT 0,
        done INTEGER NOT NULL DEFAULT 0,
        discarded INTEGER NOT NULL DEFAULT 0);
      CREATE TABLE jobs(
        id INTEGER PRIMARY KEY,
        workload_id INTEGER NOT NULL REFERENCES workloads(id),
        target_id INTEGER NOT NULL REFERENCES targets(id),
        schedule TEXT NOT NULL,
        knobs TEXT NOT NULL DEFAULT '{}',
        seed INTEGER NOT NULL DEFAULT 0,
        tool_version TEXT NOT NULL DEFAULT '',
        git_revision TEXT NOT NULL DEFAULT '',
        run_id INTEGER REFERENCES tuning_runs(id),
        options TEXT NOT NULL DEFAULT '{}',
        owner INTEGER NOT NULL DEFAULT 0,
        priority INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL DEFAULT 'queued',
        worker_id INTEGER REFERENCES workers(id),
        lease_until INTEGER NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 0,
        record_id INTEGER REFERENCES records(id),
        created INTEGER NOT NULL,
        finished INTEGER NOT NULL DEFAULT 0);
      CREATE INDEX jobs_by_state ON jobs(state, target_id, priority, id);
      CREATE INDEX jobs_by_worker ON jobs(worker_id, state);
      )sql",
  };
  return kMigrations;
}

/// `sql`, written for SQLite, in PostgreSQL's words: 64-bit integers, double precision,
/// identity ids, strpos for instr. The PostgreSQL schema is derived, not written twice, so the
/// two stay in step (check_schema compares them too).
std::string to_postgres(std::string sql) {
  const std::pair<const char*, const char*> kWords[] = {
      {" id INTEGER PRIMARY KEY", " id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"},
      {" INTEGER", " BIGINT"},
      {" REAL", " DOUBLE PRECISION"},
      {"instr(", "strpos("},
  };
  for (const auto& [from, to] : kWords) {
    for (size_t at = sql.find(from); at != std::string::npos;
         at = sql.find(from, at + std::string(to).size()))
      sql.replace(at, std::string(from).size(), to);
  }
  return sql;
}

const std::vector<std::string>& postgres_migrations() {
  static const std::vector<std::string> kMigrations = [] {
    std::vector<std::string> out;
    for (const char* m : sqlite_migrations())
      out.push_back(to_postgres(m));
    return out;
  }();
  return kMigrations;
}

std::string migration(const Connection& conn, int index) {
  return conn.dialect() == Dialect::Postgres
             ? postgres_migrations().at(static_cast<size_t>(index))
             : std::string(sqlite_migrations().at(static_cast<size_t>(index)));
}

/// What migration i + 1 adds: its tables (column "") and the columns it adds to older tables,
/// and the indexes it creates. A migration is never edited, so this list only grows with it.
struct Adds {
  std::vector<std::pair<const char*, const char*>> columns;  // (table, column or "")
  std::vector<const char*> indexes;                          // CREATE INDEX IF NOT EXISTS ...
  std::vector<const char*> index_names = {};  // indexes it creates, for one that adds no column
};

const std::vector<Adds>& additions() {
  static const std::vector<Adds> kAdds = {
      {{{"workloads", ""}, {"targets", ""}, {"records", ""}},
       {"CREATE INDEX IF NOT EXISTS records_by_time ON records(workload_id, target_id, status, "
        "median_seconds)"}},
      {{{"records", "knobs"},
        {"records", "wall_seconds"},
        {"records", "git_revision"},
        {"workloads", "op"},
        {"workloads", "spec"}},
       {"CREATE INDEX IF NOT EXISTS workloads_by_op ON workloads(op)"}},
      {{{"tuning_runs", ""}, {"records", "run_id"}},
       {"CREATE INDEX IF NOT EXISTS records_by_schedule ON records(workload_id, target_id, "
        "schedule)"}},
      {{{"confirmations", ""}}, {}},
      {{{"confirmations", "error"}}, {}},
      // Only an index, which replaces version 3's (recreated when an older version is replayed).
      {{},
       {"CREATE INDEX IF NOT EXISTS records_by_identity ON records(workload_id, target_id, "
        "schedule, seed, timestamp)",
        "DROP INDEX IF EXISTS records_by_schedule"},
       {"records_by_identity"}},
      {{{"claims", ""}}, {"CREATE INDEX IF NOT EXISTS claims_by_owner ON claims(owner)"}},
      {{{"confirmations", "spread"},
        {"confirmations", "rounds"},
        {"tuning_runs", "peak_gflops"},
        {"tuning_runs", "peak_spread"},
        {"tuning_runs", "machine"}},
       {}},
      {{{"workers", ""}, {"jobs", ""}},
       {"CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs(state, target_id, priority, id)",
        "CREATE INDEX IF NOT EXISTS jobs_by_worker ON jobs(worker_id, state)"}},
  };
  return kAdds;
}

bool has_table(Connection& conn, const char* table) {
  Statement st(conn, conn.dialect() == Dialect::Postgres
                         ? "SELECT 1 FROM information_schema.tables WHERE table_schema = "
                           "current_schema() AND table_name = ?"
                         : "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  st.bind(1, std::string(table));
  return st.step();
}

bool has_index(Connection& conn, const char* index) {
  Statement st(conn, conn.dialect() == Dialect::Postgres
                         ? "SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND "
                           "indexname = ?"
                         : "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?");
  st.bind(1, std::string(index));
  return st.step();
}

bool has_column(Connection& conn, const char* table, const char* column) {
  Statement st(conn, conn.dialect() == Dialect::Postgres
                         ? "SELECT 1 FROM information_schema.columns WHERE table_schema = "
                           "current_schema() AND table_name = ? AND column_name = ?"
                         : "SELECT 1 FROM pragma_table_info(?) WHERE name = ?");
  st.bind(1, std::string(table)).bind(2, std::string(column));
  return st.step();
}

/// "table 'confirmations'" or "column 'records.run_id'".
std::string describe(const std::pair<const char*, const char*>& item) {
  return *item.second == '\0' ? std::string("table '") + item.first + "'"
                              : std::string("column '") + item.first + "." + item.second + "'";
}

/// Whether migration `v` + 1 has already been applied to a file whose user_version says `v`
/// (a file whose version was set back by hand, or written by a tool that forgot to bump it):
/// everything it adds is there. UserError naming what is there and what is missing when only
/// part of it is: the file is neither version and migrating it would fail half way.
bool already_applied(Connection& conn, int v) {
  std::vector<std::string> present, missing;
  for (const auto& item : additions().at(static_cast<size_t>(v)).columns) {
    const bool there = *item.second == '\0' ? has_table(conn, item.first)
                                            : has_table(conn, item.first) &&
                                                  has_column(conn, item.first, item.second);
    (there ? present : missing).push_back(describe(item));
  }
  for (const char* index : additions().at(static_cast<size_t>(v)).index_names)
    (has_index(conn, index) ? present : missing).push_back(std::string("index '") + index + "'");
  if (present.empty())
    return false;
  if (missing.empty())
    return true;
  throw UserError("database '" + conn.name() + "' has schema version " + std::to_string(v) +
                  " but already has " + present.front() + " of version " + std::to_string(v + 1) +
                  ", and lacks " + missing.front() +
                  "; it cannot be migrated (export what it holds, if it can "
                  "be read, and import it into a new database)");
}

}  // namespace

int schema_version_count() {
  return static_cast<int>(sqlite_migrations().size());
}

int stored_version(Connection& conn) {
  if (conn.dialect() == Dialect::SQLite) {
    Statement st(conn, "PRAGMA user_version");
    return st.step() ? static_cast<int>(st.get_int(0)) : 0;
  }
  Statement exists(conn, "SELECT to_regclass('tensortune_schema') IS NOT NULL");
  exists.step();
  if (exists.get_text(0) != "t")
    return 0;
  Statement st(conn, "SELECT COALESCE(max(version), 0) FROM tensortune_schema");
  st.step();
  return static_cast<int>(st.get_int(0));
}

void migrate(Connection& conn, int target) {
  TT_CHECK(additions().size() == sqlite_migrations().size())
      << "schema.cpp: additions() lags a migration";
  const bool postgres = conn.dialect() == Dialect::Postgres;
  for (;;) {
    // The version is read inside the write transaction: another process may have migrated the
    // database while this one waited for the lock.
    Transaction tx(conn);
    if (postgres)
      exec(conn,
           "CREATE TABLE IF NOT EXISTS tensortune_schema(version INTEGER NOT NULL); "
           "INSERT INTO tensortune_schema SELECT 0 WHERE NOT EXISTS "
           "(SELECT 1 FROM tensortune_schema)");
    int v = stored_version(conn);
    if (v >= target) {
      tx.commit();
      return;
    }
    // A file that already has what the migration adds (its version was set back) only needs
    // its version and indexes: running the migration again failed ("table confirmations
    // already exists"), although every read command had said to migrate.
    if (already_applied(conn, v)) {
      for (const char* index : additions().at(static_cast<size_t>(v)).indexes)
        exec(conn, index);
    } else {
      exec(conn, migration(conn, v));
    }
    exec(conn, postgres ? "UPDATE tensortune_schema SET version = " + std::to_string(v + 1)
                        : "PRAGMA user_version = " + std::to_string(v + 1));
    tx.commit();
  }
}

}  // namespace tensortune::database::detail

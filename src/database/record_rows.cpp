// SPDX-License-Identifier: Apache-2.0
// Rows <-> Record and the id lookups (see record_rows.h).
#include "database/record_rows.h"

#include "tensortune/support/error.h"
#include "tensortune/support/json.h"

#include <cmath>

namespace tensortune::database::detail {

const char* const kRecordColumns =
    "r.id, w.key, t.target, t.fingerprint, r.schedule, r.knobs, r.status, r.error, r.repeats, "
    "r.median_seconds, r.build_seconds, r.run_seconds, r.wall_seconds, r.seed, r.tool_version, "
    "r.git_revision, r.timestamp, COALESCE(r.run_id, 0), COALESCE(c.seconds, 0), "
    "COALESCE(c.rank_seconds, r.median_seconds), "  // kRankSeconds
    "COALESCE(c.error, ''), COALESCE(c.spread, 0), COALESCE(c.rounds, 0)";
const char* const kRecordFrom =
    "records r JOIN workloads w ON w.id = r.workload_id JOIN targets t ON t.id = r.target_id "
    "LEFT JOIN confirmations c ON c.record_id = r.id";
const char* const kRankSeconds = "COALESCE(c.rank_seconds, r.median_seconds)";
const char* const kSameRecord =
    "SELECT 1 FROM records WHERE workload_id = ? AND target_id = ? AND schedule = ? AND seed = ? "
    "AND timestamp = ? LIMIT 1";
const char* const kMayBeBest = "r.status = 'Ok' AND COALESCE(c.error, '') = ''";

namespace {

std::string repeats_text(const std::vector<double>& repeats) {
  support::Json list = support::Json::array();
  for (double r : repeats) {
    list.push_back(r);
  }
  return list.dump();
}

}  // namespace

Record read_record(const Statement& st) {
  Record r;
  r.id = st.get_int(0);
  r.workload_key = st.get_text(1);
  r.target.target = st.get_text(2);
  r.target.fingerprint = st.get_text(3);
  r.schedule = st.get_text(4);
  r.knobs = st.get_text(5);
  r.status = st.get_text(6);
  r.error = st.get_text(7);
  try {
    support::Json repeats = support::Json::parse(st.get_text(8));
    for (const support::Json& v : repeats.as_array("repeats")) {
      r.repeats.push_back(v.as_double("a repeat"));
    }
  } catch (const UserError& e) {  // a row written by another program: name it
    throw UserError("record #" + std::to_string(r.id) +
                    ": column 'repeats' is not a JSON array of numbers: " + e.what());
  }
  r.median_seconds = st.get_double(9);
  r.build_seconds = st.get_double(10);
  r.run_seconds = st.get_double(11);
  r.wall_seconds = st.get_double(12);
  r.seed = st.get_int(13);
  r.tool_version = st.get_text(14);
  r.git_revision = st.get_text(15);
  r.timestamp = st.get_int(16);
  r.run_id = st.get_int(17);
  r.confirmed_seconds = st.get_double(18);
  r.rank_seconds = st.get_double(19);
  r.confirm_error = st.get_text(20);
  r.confirm_spread = st.get_double(21);
  r.confirm_rounds = st.get_int(22);
  return r;
}

void put_workload(Connection& conn, const WorkloadInfo& w) {
  TT_USER_CHECK(!w.key.empty()) << "database: a workload without a key";
  Statement st(conn,
               "INSERT INTO workloads(key, name, canonical_text, flop_count, op, spec) "
               "VALUES(?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET name = excluded.name, "
               "canonical_text = excluded.canonical_text, flop_count = excluded.flop_count, "
               "op = excluded.op, spec = CASE WHEN excluded.spec = '' THEN workloads.spec "
               "ELSE excluded.spec END");
  st.bind(1, w.key).bind(2, w.name).bind(3, w.canonical_text).bind(4, w.flop_count);
  st.bind(5, w.op).bind(6, w.spec).run();
}

int64_t workload_id(Connection& conn, const std::string& key) {
  Statement st(conn, "SELECT id FROM workloads WHERE key = ?");
  st.bind(1, key);
  TT_USER_CHECK(st.step()) << "database: unknown workload '" << key
                           << "' (store the workload before its records)";
  return st.get_int(0);
}

int64_t target_id(Connection& conn, const TargetKey& target) {
  TT_USER_CHECK(!target.target.empty()) << "database: a record without a target";
  Statement insert(conn,
                   "INSERT INTO targets(target, fingerprint) VALUES(?, ?) ON CONFLICT DO NOTHING");
  insert.bind(1, target.target).bind(2, target.fingerprint).run();
  Statement st(conn, "SELECT id FROM targets WHERE target = ? AND fingerprint = ?");
  st.bind(1, target.target).bind(2, target.fingerprint);
  TT_CHECK(st.step()) << "database: the target just inserted is missing";
  return st.get_int(0);
}

RecordInserter::RecordInserter(Connection& conn)
    : conn_(conn),
      insert_(conn,
              "INSERT INTO records(workload_id, target_id, schedule, knobs, status, error, "
              "repeats, median_seconds, build_seconds, run_seconds, wall_seconds, seed, "
              "tool_version, git_revision, timestamp, run_id) "
              "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULLIF(CAST(? AS BIGINT), 0)) "
              "RETURNING id"),
      confirm_(conn,
               "INSERT INTO confirmations(record_id, seconds, rank_seconds, timestamp, error, "
               "spread, rounds) VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(record_id) DO UPDATE SET "
               "seconds = excluded.seconds, rank_seconds = excluded.rank_seconds, "
               "timestamp = excluded.timestamp, error = excluded.error, "
               "spread = excluded.spread, rounds = excluded.rounds") {}

int64_t RecordInserter::insert(const Record& r) {
  auto w = workloads_.find(r.workload_key);
  if (w == workloads_.end()) {
    w = workloads_.emplace(r.workload_key, workload_id(conn_, r.workload_key)).first;
  }
  auto t = targets_.find(r.target);
  if (t == targets_.end()) {
    t = targets_.emplace(r.target, target_id(conn_, r.target)).first;
  }
  Statement& st = insert_;
  st.reset();
  st.bind(1, w->second).bind(2, t->second).bind(3, r.schedule).bind(4, r.knobs);
  st.bind(5, r.status).bind(6, r.error).bind(7, repeats_text(r.repeats));
  st.bind(8, r.median_seconds).bind(9, r.build_seconds).bind(10, r.run_seconds);
  st.bind(11, r.wall_seconds).bind(12, r.seed).bind(13, r.tool_version);
  st.bind(14, r.git_revision).bind(15, r.timestamp).bind(16, r.run_id);
  TT_CHECK(st.step()) << "database: an insert returned no id";
  const int64_t id = st.get_int(0);
  st.reset();                     // ends the statement, so the confirmation below may write
  if (r.confirmed_seconds > 0) {  // an imported record keeps its confirmation
    TT_USER_CHECK(r.ok() && r.rank_seconds > 0)
        << "database: a confirmation needs an Ok record and a positive rank time";
    confirm(id, r.confirmed_seconds, r.rank_seconds, r.timestamp, r.confirm_spread,
            r.confirm_rounds);
  }
  if (!r.confirm_error.empty()) {
    TT_USER_CHECK(r.ok()) << "database: a failed confirmation needs an Ok record";
    fail_confirmation(id, r.median_seconds, r.confirm_error, r.timestamp);
  }
  return id;
}

void RecordInserter::confirm(int64_t id,
                             double seconds,
                             double rank_seconds,
                             int64_t timestamp,
                             double spread,
                             int64_t rounds) {
  TT_USER_CHECK(std::isfinite(spread) && spread >= 0 && rounds >= 0)
      << "database: confirm: record " << id << " needs a spread >= 0 and rounds >= 0";
  confirm_.reset();
  confirm_.bind(1, id).bind(2, seconds).bind(3, rank_seconds).bind(4, timestamp);
  confirm_.bind(5, std::string()).bind(6, spread).bind(7, rounds).run();
}

void RecordInserter::fail_confirmation(int64_t id,
                                       double median_seconds,
                                       const std::string& error,
                                       int64_t timestamp) {
  // Ranked by its own median, as if never confirmed: a query that forgot kMayBeBest would still
  // not put it first for a time of 0.
  confirm_.reset();
  confirm_.bind(1, id).bind(2, 0.0).bind(3, median_seconds).bind(4, timestamp);
  confirm_.bind(5, error).bind(6, 0.0).bind(7, int64_t{0}).run();
}

}  // namespace tensortune::database::detail

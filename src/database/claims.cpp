// SPDX-License-Identifier: Apache-2.0
// Claims of schedules by concurrent tuning jobs (see Database::claim): a job claims a batch
// before measuring it, so that jobs tuning one workload at once neither measure nor store one
// schedule twice, and the trial budget counts what other jobs stored and are measuring.
#include "database/record_rows.h"
#include "database/sqlite_util.h"
#include "tensortune/database/database.h"

#include <cerrno>
#include <csignal>
#include <vector>

namespace tensortune::database {

using detail::Statement;
using detail::Transaction;

namespace {

/// Drops the claims no job will store: older than Database::kClaimSeconds, or of a process of
/// this host that is gone (kill -9 leaves its batch claimed).
void drop_stale_claims(sqlite3* db, const ClaimRequest& q) {
  Statement expire(db, "DELETE FROM claims WHERE claimed < ?");
  expire.bind(1, q.now - Database::kClaimSeconds).run();
  std::vector<int64_t> pids;
  {
    Statement st(db, "SELECT DISTINCT pid FROM claims WHERE host = ? AND owner != ?");
    st.bind(1, q.claimer.host).bind(2, q.claimer.owner);
    while (st.step())
      pids.push_back(st.get_int(0));
  }
  Statement drop(db, "DELETE FROM claims WHERE host = ? AND pid = ?");
  for (int64_t pid : pids) {
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      drop.reset();
      drop.bind(1, q.claimer.host).bind(2, pid).run();
    }
  }
}

/// Records of the job's workloads on the target, plus other jobs' claims of them.
int64_t budget_used(sqlite3* db, const ClaimRequest& q) {
  Statement records(db,
                    "SELECT count(*) FROM records r JOIN workloads w ON w.id = r.workload_id "
                    "JOIN targets t ON t.id = r.target_id "
                    "WHERE w.key = ? AND t.target = ? AND t.fingerprint = ?");
  Statement claims(db,
                   "SELECT count(*) FROM claims c JOIN workloads w ON w.id = c.workload_id "
                   "JOIN targets t ON t.id = c.target_id "
                   "WHERE w.key = ? AND t.target = ? AND t.fingerprint = ? AND c.owner != ?");
  int64_t used = 0;
  for (const std::string& key : q.budget_keys) {
    records.reset();
    records.bind(1, key).bind(2, q.target.target).bind(3, q.target.fingerprint).step();
    used += records.get_int(0);
    claims.reset();
    claims.bind(1, key).bind(2, q.target.target).bind(3, q.target.fingerprint);
    claims.bind(4, q.claimer.owner).step();
    used += claims.get_int(0);
  }
  return used;
}

}  // namespace

ClaimResult Database::claim(const ClaimRequest& q) {
  Transaction tx(db_);
  drop_stale_claims(db_, q);
  ClaimResult out;
  out.used = budget_used(db_, q);
  if (q.schedules.empty()) {
    tx.commit();
    return out;
  }
  const int64_t workload = detail::workload_id(db_, q.workload_key);
  const int64_t target = detail::target_id(db_, q.target);
  Statement stored(db_,
                   "SELECT 1 FROM records WHERE workload_id = ? AND target_id = ? AND "
                   "schedule = ? LIMIT 1");
  Statement insert(db_,
                   "INSERT OR IGNORE INTO claims(workload_id, target_id, schedule, owner, pid, "
                   "host, claimed) VALUES(?, ?, ?, ?, ?, ?, ?)");
  Statement owner(db_,
                  "SELECT owner FROM claims WHERE workload_id = ? AND target_id = ? AND "
                  "schedule = ?");
  int64_t room = q.budget - out.used;
  for (const std::string& schedule : q.schedules) {
    bool mine = false;
    stored.reset();
    if (room > 0 && !stored.bind(1, workload).bind(2, target).bind(3, schedule).step()) {
      insert.reset();
      insert.bind(1, workload).bind(2, target).bind(3, schedule).bind(4, q.claimer.owner);
      insert.bind(5, q.claimer.pid).bind(6, q.claimer.host).bind(7, q.now).run();
      owner.reset();
      owner.bind(1, workload).bind(2, target).bind(3, schedule).step();
      mine = owner.get_int(0) == q.claimer.owner;
    }
    room -= mine ? 1 : 0;
    out.claimed.push_back(mine);
  }
  tx.commit();
  return out;
}

void Database::release_claims(int64_t owner) {
  Transaction tx(db_);
  Statement st(db_, "DELETE FROM claims WHERE owner = ?");
  st.bind(1, owner).run();
  tx.commit();
}

}  // namespace tensortune::database

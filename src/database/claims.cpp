// SPDX-License-Identifier: Apache-2.0
// Claims of schedules by concurrent tuning jobs (see Database::claim): a job claims a batch
// before measuring it, so that jobs tuning one workload at once neither measure nor store one
// schedule twice, and the trial budget counts what other jobs stored and are measuring.
#include "database/record_rows.h"
#include "database/write.h"
#include "tensortune/database/database.h"

#include <cerrno>
#include <csignal>
#include <vector>

namespace tensortune::database {

using detail::Statement;

namespace {

/// Drops the claims no job will store: older than Database::kClaimSeconds, or of a process of
/// this host that is gone (kill -9 leaves its batch claimed).
void drop_stale_claims(detail::Connection& db, const ClaimRequest& q) {
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

/// Records of the job's workloads on the target, plus other jobs' claims of them: one statement,
/// so that a record stored meanwhile in a shared transaction (a queue worker's, which also ends
/// the schedule's claim) is counted exactly once.
int64_t budget_used(detail::Connection& db, const ClaimRequest& q) {
  Statement used(db,
                 "SELECT (SELECT count(*) FROM records r JOIN workloads w ON w.id = "
                 "r.workload_id JOIN targets t ON t.id = r.target_id WHERE w.key = ? AND "
                 "t.target = ? AND t.fingerprint = ?) + (SELECT count(*) FROM claims c JOIN "
                 "workloads w ON w.id = c.workload_id JOIN targets t ON t.id = c.target_id "
                 "WHERE w.key = ? AND t.target = ? AND t.fingerprint = ? AND c.owner != ?)");
  int64_t total = 0;
  for (const std::string& key : q.budget_keys) {
    used.reset();
    used.bind(1, key).bind(2, q.target.target).bind(3, q.target.fingerprint);
    used.bind(4, key).bind(5, q.target.target).bind(6, q.target.fingerprint);
    used.bind(7, q.claimer.owner).step();
    total += used.get_int(0);
  }
  return total;
}

}  // namespace

ClaimResult Database::claim(const ClaimRequest& q) {
  return write([&] { return claim_in_transaction(q); });
}

ClaimResult Database::claim_in_transaction(const ClaimRequest& q) {
  detail::Connection& db = *conn_;
  drop_stale_claims(db, q);
  ClaimResult out;
  out.used = budget_used(db, q);
  if (q.schedules.empty())
    return out;
  const int64_t workload = detail::workload_id(db, q.workload_key);
  const int64_t target = detail::target_id(db, q.target);
  Statement stored(db,
                   "SELECT 1 FROM records WHERE workload_id = ? AND target_id = ? AND "
                   "schedule = ? LIMIT 1");
  Statement insert(db,
                   "INSERT INTO claims(workload_id, target_id, schedule, owner, pid, host, "
                   "claimed) VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING");
  Statement owner(db,
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
  return out;
}

void Database::release_claims(int64_t owner) {
  write([&] {
    Statement st(*conn_, "DELETE FROM claims WHERE owner = ?");
    st.bind(1, owner).run();
    return 0;
  });
}

}  // namespace tensortune::database

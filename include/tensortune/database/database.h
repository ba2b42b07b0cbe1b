// SPDX-License-Identifier: Apache-2.0
// The tuning database: an SQLite file (embedded, the default; WAL mode so several tuning
// processes can write at once) or a PostgreSQL server shared by a fleet of machines
// (postgresql://USER@HOST:PORT/DBNAME). One schema with forward migrations, one transaction per
// measured batch, the same queries on both.
#pragma once

#include "tensortune/database/queue.h"
#include "tensortune/database/record.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tensortune::database {

namespace detail {
class Connection;
}

/// The schema version this build creates and reads.
int current_schema_version();

/// True when `where` names a database server ("postgresql://..." or "postgres://...") rather
/// than an SQLite file.
bool is_server_url(const std::string& where);

/// `where` as messages, reports and JSON output show it: a URL without its password, a file as
/// it is.
std::string display_name(const std::string& where);

class Database {
 public:
  /// How a writable open checks the file before anything writes to it: PRAGMA quick_check
  /// (linear in the file, no index comparison), or integrity_check for the maintenance that
  /// rewrites much of it (import, prune, vacuum). A read-only open checks nothing.
  enum class Check { Quick, Full };

  /// Opens (creating the file and its directory unless `read_only`) and migrates the schema to
  /// the current version. `path` is a file, or a PostgreSQL URL (is_server_url), whose
  /// credentials come from the URL or libpq's usual sources (PGPASSFILE, service files).
  /// UserError when it is not a tensortune database, has a newer schema, or cannot be opened;
  /// opened writable, also when it fails `check` or lacks a table or column of the current
  /// schema (nothing is written then).
  static Database open(const std::string& path, bool read_only = false, Check check = Check::Quick);
  /// Opens a database at an older schema version `version` (1..current), for migration tests and
  /// tools that must not upgrade a file.
  static Database open_at_version(const std::string& path, int version);

  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  /// The file or URL it was opened with (a URL with its password: for opening it again).
  const std::string& path() const { return path_; }
  /// The database as messages and reports name it: the file, or the URL without a password.
  const std::string& name() const;
  int schema_version() const;

  // --- writing (each call is one transaction) ---
  /// Inserts or updates a workload (by key).
  void put_workload(const WorkloadInfo& workload);
  /// Starts a tuning run; returns its id.
  int64_t start_run(const TuningRun& run);
  /// Records the end of a run and its counts.
  void finish_run(int64_t run_id, int64_t trials, int64_t ok_trials, int64_t ended);
  /// Inserts a batch atomically (all or nothing); every record's workload must have been put.
  /// The trial counts of the records' tuning runs (Record::run_id) grow in the same transaction,
  /// and the claims of their schedules end (claim).
  /// Returns the ids in order.
  std::vector<int64_t> add_records(const std::vector<Record>& records);
  /// Puts `workloads` and every record not already present (same workload, target, schedule,
  /// seed and timestamp) in one transaction; returns how many records were already present.
  int64_t merge(const std::vector<WorkloadInfo>& workloads, const std::vector<Record>& records);
  /// Keeps the best `k` Ok records per (workload, target) and deletes every other record;
  /// returns how many were deleted.
  int64_t prune(int64_t k);
  /// Stores a side-by-side re-measurement of Ok records of one workload and target: `seconds[i]`
  /// is record `ids[i]`'s median time measured again, all in one session, so drift of the
  /// machine hits them alike. Each gets confirmed_seconds = seconds[i] and rank_seconds =
  /// seconds[i] x median over the group of (stored median / seconds): the side-by-side order on
  /// the stored medians' scale, so it still compares with unconfirmed records. Replaces earlier
  /// confirmations of these records; one transaction. UserError for fewer than 2 records, an
  /// unknown or failed record, a time <= 0, or records of different workloads or targets.
  void confirm(const std::vector<int64_t>& ids,
               const std::vector<double>& seconds,
               int64_t timestamp);
  /// As above, with each record's relative spread over the confirmation's rounds (Record::
  /// confirm_spread) and the number of rounds. UserError also when `spreads` has another size or
  /// a spread is negative.
  void confirm(const std::vector<int64_t>& ids,
               const std::vector<double>& seconds,
               const std::vector<double>& spreads,
               int64_t rounds,
               int64_t timestamp);
  /// Stores the FMA peak measured during tuning run `run_id` (GFLOP/s > 0), the relative spread
  /// of its readings, and the machine's state as a JSON object text (TuningRun::machine).
  /// UserError for an unknown run, a peak <= 0 or text that is not a JSON object.
  void set_run_machine(int64_t run_id,
                       double peak_gflops,
                       double peak_spread,
                       const std::string& machine);
  /// Stores a failed confirmation of Ok record `id`: its schedule no longer replays onto its
  /// workload, or it failed when measured again; `error` says why. Replaces an earlier
  /// confirmation; a later successful one replaces it in turn. Until then no best query (best,
  /// best_of_operator, stats, prune's kept set) ranks the record. UserError for an unknown or
  /// failed record, or an empty `error`.
  void fail_confirmation(int64_t id, const std::string& error, int64_t timestamp);
  void vacuum();
  /// Leaves an SQLite file in the rollback-journal mode, so a reader needs no -wal or -shm file
  /// beside it (a file shipped in a source tree, or installed read-only). The next writable open
  /// switches it back to WAL. Needs no other connection to the file; nothing for PostgreSQL.
  void use_rollback_journal();

  /// How long a claim lives: a job killed on another host leaves claims this old behind.
  static constexpr int64_t kClaimSeconds = 3600;
  /// Claims schedules before measuring them, so that jobs tuning one workload at once neither
  /// measure nor store a schedule twice, and share one trial budget. In one transaction: drops
  /// claims older than kClaimSeconds and those of processes of this host that are gone; counts
  /// the budget used (ClaimResult::used); then claims each schedule, in order, that is neither
  /// stored for (workload, target) nor claimed by another job, while the budget lasts. Storing a
  /// record (add_records) ends its schedule's claim.
  ClaimResult claim(const ClaimRequest& request);
  /// Drops every claim of `owner` (a job that ends).
  void release_claims(int64_t owner);

  // --- the measurement queue (queue.h; PostgreSQL for a fleet, SQLite on one host) ---
  /// Queues jobs in one transaction and wakes the idle workers; returns their ids. Every job's
  /// workload must have been put.
  std::vector<int64_t> enqueue(const std::vector<Job>& jobs, int64_t now);
  /// Registers a worker process (WorkerInfo::target: the jobs it takes); returns its id.
  int64_t register_worker(const WorkerInfo& worker);
  /// A worker's sign of life: its heartbeat, and the leases of the jobs it holds (`jobs`),
  /// renewed until now + lease_seconds. False when the worker is unknown.
  bool heartbeat(int64_t worker,
                 const std::vector<int64_t>& jobs,
                 int64_t now,
                 int64_t lease_seconds);
  /// The worker says it stops (its running jobs go back to the queue).
  void stop_worker(int64_t worker, int64_t now);
  /// Requeues running jobs whose lease expired before `now`; a job that has had
  /// policy.max_attempts leases becomes an error record instead. Returns how many it touched.
  int64_t requeue_expired(int64_t now, const LeasePolicy& policy);
  /// Requeues expired leases, then leases the most urgent queued job of the worker's target
  /// (oldest first among equals) to `worker` until now + lease_seconds. On PostgreSQL workers
  /// claim side by side (FOR UPDATE SKIP LOCKED). nullopt when none is queued.
  std::optional<Job> claim_job(int64_t worker, int64_t now, const LeasePolicy& policy);
  /// As claim_job, up to `max` jobs at once (a worker that builds several in parallel), most
  /// urgent first.
  std::vector<Job> claim_jobs(int64_t worker, int64_t now, const LeasePolicy& policy, int64_t max);
  /// Stores `measured` (the job's record with its measurement) and marks the job done, in one
  /// transaction, when the job is still leased to `worker`; the record's id. nullopt, storing
  /// nothing, when the lease was lost (expired and requeued, or given to another worker): a late
  /// result is discarded, never stored twice.
  std::optional<int64_t> complete_job(int64_t job,
                                      int64_t worker,
                                      const Record& measured,
                                      int64_t now);
  /// The jobs of these ids (a tuner waiting for its batch), in the order given.
  std::vector<Job> jobs(const std::vector<int64_t>& ids) const;
  /// Drops the queued jobs of tuner `owner` (a tuner that stops); returns how many.
  int64_t cancel_jobs(int64_t owner);
  std::vector<WorkerInfo> workers() const;
  std::vector<QueueStats> queue_stats(int64_t now) const;
  /// Waits up to `seconds` for a change in the queue: a job queued ("jobs") or finished
  /// ("done"). PostgreSQL: LISTEN/NOTIFY; SQLite: sleeps. True when woken.
  bool wait_for(const std::string& what, double seconds);

  // --- reading ---
  /// The fastest Ok records of (workload, target), fastest first by Record::rank_seconds (a
  /// confirmed record by its confirmation, the others by their median; ties: lower id first),
  /// leaving out those whose latest confirmation failed (Record::may_be_best).
  std::vector<Record> best(const std::string& workload_key,
                           const TargetKey& target,
                           int64_t k = 1) const;
  /// Every record of (workload, target) in insertion order.
  std::vector<Record> history(const std::string& workload_key, const TargetKey& target) const;
  std::optional<Record> record(int64_t id) const;
  /// True when `schedule` was already measured for (workload, target), whatever the outcome.
  bool contains(const std::string& workload_key,
                const TargetKey& target,
                const std::string& schedule) const;
  /// Every schedule measured for (workload, target).
  std::vector<std::string> measured_schedules(const std::string& workload_key,
                                              const TargetKey& target) const;
  std::optional<WorkloadInfo> workload(const std::string& key) const;
  /// All workloads, sorted by key.
  std::vector<WorkloadInfo> workloads() const;
  /// All target identities, sorted.
  std::vector<TargetKey> targets() const;
  /// For every (workload, target) with records: counts by status, and the best record as `best`
  /// ranks it, with its time (Record::seconds).
  std::vector<WorkloadStats> stats() const;
  /// For each workload of operator `op` with an Ok record on `target`: its best record.
  std::vector<Record> best_of_operator(const std::string& op, const TargetKey& target) const;
  std::vector<TuningRun> runs() const;
  /// All records, in a stable order (workload key, target, timestamp, schedule, id). UserError
  /// "record #ID: column 'C' ..." for a row that cannot be read, unless `unreadable` is given:
  /// then such rows are left out and their messages appended to it.
  std::vector<Record> all_records(std::vector<std::string>* unreadable = nullptr) const;
  int64_t count_records() const;

 private:
  Database(std::string path, std::unique_ptr<detail::Connection> conn);
  /// Runs `body` in a write transaction and commits it; tried again when the connection was
  /// lost before the commit (a server restart), so nothing is applied twice. `exclusive`: see
  /// detail::Connection::begin.
  template <class Body>
  auto write(Body&& body, bool exclusive = true);
  ClaimResult claim_in_transaction(const ClaimRequest& request);
  /// The error record of a job whose leases all expired, stored and the job ended with it.
  void fail_job(int64_t job, const Record& error_record, int64_t now);
  std::string path_;
  std::unique_ptr<detail::Connection> conn_;
  int64_t last_requeue_check_ = -1;  // claim_job's second of its last requeue_expired
};

}  // namespace tensortune::database

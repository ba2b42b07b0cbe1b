// SPDX-License-Identifier: Apache-2.0
// The measurement queue kept in the tuning database (Database::enqueue, claim_job, complete_job):
// tuners queue candidates as jobs, workers on the device machines claim them under a lease,
// measure them, and store the record in the transaction that completes the job.
#pragma once

#include "tensortune/database/record.h"

#include <cstdint>
#include <string>

namespace tensortune::database {

/// One candidate to measure. `record` is what will be stored: its workload, target, schedule,
/// knobs, seed, versions and run, with the measurement fields empty (the worker fills them).
struct Job {
  int64_t id = 0;
  Record record;
  /// The measurement options as a JSON object text (timing, timeouts, threads).
  std::string options = "{}";
  /// Which tuner queued it (Claimer::owner), and how urgent: higher runs first.
  int64_t owner = 0;
  int64_t priority = 0;
  /// "queued", "running", "done" or "error" (its leases expired too often: an error record).
  std::string state = "queued";
  int64_t worker_id = 0;
  /// Unix second at which the running job's lease ends unless its worker renews it.
  int64_t lease_until = 0;
  /// Leases given so far.
  int64_t attempts = 0;
  /// The record stored for it (done or error), else 0.
  int64_t record_id = 0;
  int64_t created = 0;
  int64_t finished = 0;
};

/// A worker process on a device machine, as it registered.
struct WorkerInfo {
  int64_t id = 0;
  std::string name;  ///< HOST:PID unless given
  std::string host;
  int64_t pid = 0;
  TargetKey target;  ///< the jobs it takes: this target string and device fingerprint
  int64_t started = 0;
  int64_t heartbeat = 0;  ///< unix seconds of its last sign of life
  int64_t stopped = 0;    ///< when it said it stops (0 = running or killed)
  int64_t done = 0;       ///< jobs it completed
  int64_t discarded = 0;  ///< results it brought back after losing the job's lease
  int64_t running_job = 0;
};

/// Jobs of one target by state, and how many finished in the last minute.
struct QueueStats {
  TargetKey target;
  int64_t queued = 0;
  int64_t running = 0;
  int64_t done = 0;
  int64_t errors = 0;
  int64_t done_last_minute = 0;
};

/// How a claim treats the leases it finds expired (Database::claim_job, requeue_expired).
struct LeasePolicy {
  int64_t lease_seconds = 30;
  /// A job whose lease expired this many times becomes an error record instead of running again.
  int64_t max_attempts = 3;
};

}  // namespace tensortune::database

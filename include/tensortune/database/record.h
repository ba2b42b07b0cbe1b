// SPDX-License-Identifier: Apache-2.0
// What the tuning database stores: workloads, targets (string + device fingerprint), measured
// records and tuning runs. Plain strings and numbers: the database never parses IR or schedules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::database {

/// The record format written by this version (the "format" field of exported lines).
constexpr int kRecordFormat = 1;

struct WorkloadInfo {
  /// The stable key (te::Workload::key()).
  std::string key;
  /// Readable name, e.g. "matmul_1024x1024x1024_float32".
  std::string name;
  /// The canonical text the key hashes; enough to rebuild the compute.
  std::string canonical_text;
  double flop_count = 0;
  /// The operator, e.g. "matmul" (records of other shapes of it are "compatible").
  std::string op;
  /// The workload spec it was made from ("matmul:M=64,N=64,K=64"), empty when unknown.
  std::string spec;
};

/// A target's identity: the canonical target string and the device fingerprint (CPU model, ISA
/// features, cores; GPU name and compute capability) as text. Records of one identity are never
/// returned for another.
struct TargetKey {
  std::string target;
  std::string fingerprint;
  bool operator==(const TargetKey& o) const {
    return target == o.target && fingerprint == o.fingerprint;
  }
  bool operator<(const TargetKey& o) const {
    return target != o.target ? target < o.target : fingerprint < o.fingerprint;
  }
};

struct Record {
  /// Assigned by the database (0 before insertion).
  int64_t id = 0;
  std::string workload_key;
  TargetKey target;
  /// The schedule steps as JSON (schedule::to_json) and the knob configuration ("{}" if none).
  std::string schedule;
  std::string knobs = "{}";
  /// A measure status name: "Ok", "CompileError", ...; and its message.
  std::string status = "Ok";
  std::string error;
  /// Seconds per call of each repeat, and their median (0 unless Ok).
  std::vector<double> repeats;
  double median_seconds = 0;
  double build_seconds = 0;
  double run_seconds = 0;
  double wall_seconds = 0;
  int64_t seed = 0;
  std::string tool_version;
  std::string git_revision;
  /// Unix time in seconds when the measurement finished.
  int64_t timestamp = 0;
  /// The tuning run that produced it (0 = none, e.g. imported).
  int64_t run_id = 0;
  /// The median of its latest side-by-side re-measurement with the other best records of its
  /// workload (Database::confirm; 0 = never confirmed), and the time `best` ranks it by: that
  /// confirmation on the stored medians' scale, else median_seconds (as read from a database).
  double confirmed_seconds = 0;
  double rank_seconds = 0;
  /// Why its latest confirmation failed: its schedule no longer replays onto the workload, or it
  /// failed when measured again ("" = no failed confirmation). Such a record is never best.
  std::string confirm_error;
  /// Of its latest confirmation: the relative spread of the figures of its middle rounds
  /// (support::middle_spread; 0 = not known) and how many rounds gave one (0 = not known).
  double confirm_spread = 0;
  int64_t confirm_rounds = 0;

  bool ok() const { return status == "Ok"; }
  /// True when its latest confirmation measured it (confirmed_seconds is its time).
  bool confirmed() const { return confirmed_seconds > 0 && confirm_error.empty(); }
  /// The one time every surface shows for this record (tune, db best, db stats, report, the
  /// Python API): its confirmed side-by-side median when a confirmation measured it, else its
  /// stored median, which the surfaces mark "unconfirmed". 0 unless Ok.
  double seconds() const { return confirmed() ? confirmed_seconds : median_seconds; }
  /// Ok and not refuted by a failed confirmation: what best queries rank.
  bool may_be_best() const { return ok() && confirm_error.empty(); }
};

struct TuningRun {
  int64_t id = 0;
  std::string workload_key;
  TargetKey target;
  /// The options of the job as JSON text (tuner, trials, seed, ...).
  std::string options = "{}";
  int64_t started = 0;
  int64_t ended = 0;  // 0 while running or when killed
  int64_t trials = 0;
  int64_t ok_trials = 0;
  /// The FMA peak of the machine measured during the run (GFLOP/s; 0 = not measured), the
  /// relative spread of its readings, and the machine's state then as JSON text (load, readings;
  /// see Database::set_run_machine).
  double peak_gflops = 0;
  double peak_spread = 0;
  std::string machine = "{}";
};

/// Who claims schedules for measurement (Database::claim): one tuning job, and the process and
/// host it runs on, so that the claims of a process that is gone can be released.
struct Claimer {
  int64_t owner = 0;  ///< unique per job (random)
  int64_t pid = 0;
  std::string host;
};

/// A job's claim of schedules of one workload before it measures them (Database::claim).
struct ClaimRequest {
  /// The job's workloads and trial budget: the budget counts every record of these workloads on
  /// `target`, and the schedules other jobs claimed of them.
  std::vector<std::string> budget_keys;
  int64_t budget = 0;
  std::string workload_key;
  TargetKey target;
  /// Schedule texts, as records store them; may be empty (then claim only counts).
  std::vector<std::string> schedules;
  Claimer claimer;
  int64_t now = 0;  ///< unix seconds
};

struct ClaimResult {
  /// Per requested schedule: claimed by this job, to measure and store.
  std::vector<bool> claimed;
  /// The budget used before this claim: records stored plus other jobs' live claims.
  int64_t used = 0;
};

/// Counts for one (workload, target): trials by status, and the best median.
struct WorkloadStats {
  std::string workload_key;
  std::string workload_name;
  TargetKey target;
  int64_t records = 0;
  int64_t ok = 0;
  /// (status, count) for every status present, sorted by status.
  std::vector<std::pair<std::string, int64_t>> by_status;
  double best_seconds = 0;  // 0 when no record is Ok
  double flop_count = 0;
  /// The record `best` ranks first (0 when none) and whether best_seconds is its confirmed time
  /// (Record::seconds, Record::confirmed).
  int64_t best_record_id = 0;
  bool best_confirmed = false;
};

}  // namespace tensortune::database

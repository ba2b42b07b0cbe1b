// SPDX-License-Identifier: Apache-2.0
// Private to src/database: rows <-> Record, and the id lookups every write needs. Callers hold
// the transaction.
#pragma once

#include "database/connection.h"
#include "tensortune/database/record.h"

#include <map>
#include <string>

namespace tensortune::database::detail {

/// The columns read_record expects, with the joins they need ("... FROM " + kRecordFrom).
extern const char* const kRecordColumns;
extern const char* const kRecordFrom;
/// What `best` orders by (in kRecordFrom's names): a record's confirmed rank time, else its median.
extern const char* const kRankSeconds;
/// The condition for a record that best queries rank (in kRecordFrom's names): Ok, and its latest
/// confirmation did not fail.
extern const char* const kMayBeBest;

/// Whether a record of (workload id, target id, schedule, seed, timestamp) is stored: a row when
/// it is. One probe of the index records_by_identity, whatever the number of records sharing
/// the schedule (import's duplicate check).
extern const char* const kSameRecord;

Record read_record(const Statement& st);

void put_workload(Connection& conn, const WorkloadInfo& w);
/// The row id of a workload; UserError naming the key when it was never put.
int64_t workload_id(Connection& conn, const std::string& key);
/// The row id of a target identity, inserted when new.
int64_t target_id(Connection& conn, const TargetKey& target);
/// Inserts records within the caller's transaction, with prepared statements and the workload
/// and target ids looked up once each.
class RecordInserter {
 public:
  explicit RecordInserter(Connection& conn);
  /// Inserts one record, and its confirmation when confirmed_seconds > 0; returns its id.
  int64_t insert(const Record& r);
  /// Records of workload `key` on `target` go to these row ids, without looking them up (the
  /// queue knows them from the job's row).
  void prime(const std::string& key,
             int64_t workload,
             const TargetKey& target,
             int64_t target_row) {
    workloads_[key] = workload;
    targets_[target] = target_row;
  }
  /// Sets (replaces) the confirmation of record `id`: its time, rank time, the relative spread of
  /// its rounds and how many there were (0 = not known: an older confirmation or import).
  void confirm(int64_t id,
               double seconds,
               double rank_seconds,
               int64_t timestamp,
               double spread = 0,
               int64_t rounds = 0);
  /// Sets (replaces) the confirmation of record `id` with a failure: `error` says why.
  void fail_confirmation(int64_t id,
                         double median_seconds,
                         const std::string& error,
                         int64_t timestamp);

 private:
  Connection& conn_;
  Statement insert_;
  Statement confirm_;
  std::map<std::string, int64_t> workloads_;
  std::map<TargetKey, int64_t> targets_;
};

}  // namespace tensortune::database::detail

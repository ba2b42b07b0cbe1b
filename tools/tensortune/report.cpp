// SPDX-License-Identifier: Apache-2.0
// The report's data: entries per (workload, target) from the database, and the text summary.
#include "report.h"

#include "db_schedule.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "tensortune/te/operators.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace tensortune::cli {

int64_t ReportEntry::ok() const {
  return std::count_if(history.begin(), history.end(), [](const database::Record& r) { return r.ok(); });
}

std::map<std::string, int64_t> ReportEntry::by_status() const {
  std::map<std::string, int64_t> out;
  for (const database::Record& r : history) ++out[r.status];
  return out;
}

const database::Record* ReportEntry::best() const {
  // Chosen by collect_entries as Database::best ranks (by a side-by-side confirmation when there
  // is one), leaving out failed confirmations and schedules that no longer replay.
  for (const database::Record& r : history) {
    if (r.id == best_id)
      return &r;
  }
  return nullptr;
}

const database::Record* ReportEntry::default_record() const {
  for (const database::Record& r : history) {
    if (r.knobs != "{}") continue;
    try {
      if (schedule::parse_schedule(r.schedule).steps.empty()) return &r;
    } catch (const UserError&) {
      continue;  // a record whose steps no longer parse is not the default
    }
  }
  return nullptr;
}

double ReportEntry::gflops(const database::Record& r) const {
  return r.ok() && r.median_seconds > 0 ? workload.flop_count / r.median_seconds * 1e-9 : 0.0;
}

namespace {

/// The workload key a --workload argument names: a key as stored, or a spec to build.
std::string resolve_key(const database::Database& db, const std::string& text) {
  if (db.workload(text)) return text;
  try {
    return te::make_workload(text).key();
  } catch (const UserError& e) {
    throw UserError("report: '" + text + "' is neither a workload key in the database nor a valid spec (" +
                    e.what() + ")");
  }
}

}  // namespace

std::vector<ReportEntry> collect_entries(const database::Database& db, const ReportOptions& options) {
  std::set<std::string> wanted;
  for (const std::string& w : options.workloads) wanted.insert(resolve_key(db, w));
  std::vector<ReportEntry> out;
  for (const database::WorkloadInfo& info : db.workloads()) {
    if (!wanted.empty() && wanted.count(info.key) == 0) continue;
    for (const database::TargetKey& target : db.targets()) {
      if (!options.target_filter.empty() &&
          target.target.find(options.target_filter) == std::string::npos &&
          target.target != options.target_exact) {
        continue;
      }
      std::vector<database::Record> history = db.history(info.key, target);
      if (history.empty()) continue;
      const std::vector<database::Record> best = replaying_best(db, info, target, 1);
      out.push_back({db.path(), info, target, std::move(history), best.empty() ? 0 : best[0].id});
    }
  }
  for (const std::string& key : wanted) {
    const bool found = std::any_of(out.begin(), out.end(),
                                   [&](const ReportEntry& e) { return e.workload.key == key; });
    TT_USER_CHECK(found) << "report: workload '" << key << "' has no records in '" << db.path() << "'"
                         << (options.target_filter.empty() ? "" : " for target '" + options.target_filter + "'");
  }
  std::stable_sort(out.begin(), out.end(), [](const ReportEntry& a, const ReportEntry& b) {
    return a.workload.name != b.workload.name ? a.workload.name < b.workload.name : a.target < b.target;
  });
  return out;
}

std::string render_text(const std::vector<ReportEntry>& entries, const std::vector<ReportEntry>& compare) {
  std::string out;
  auto line = [](const ReportEntry& e) {
    std::string errors;
    for (const auto& [status, n] : e.by_status()) {
      if (status != "Ok") errors += fmt::format(" {} {}", status, n);
    }
    const database::Record* best = e.best();
    const database::Record* def = e.default_record();
    std::string text = fmt::format("  {} trials, {} ok{}{}", e.history.size(), e.ok(),
                                   errors.empty() ? "" : ",", errors);
    if (best != nullptr) {
      text += fmt::format("; best {:.1f} GFLOP/s ({:.3f} ms, record {}{})", e.gflops(*best),
                          best->median_seconds * 1e3, best->id,
                          best->confirmed_seconds > 0 ? ", confirmed side by side" : "");
    }
    if (best != nullptr && def != nullptr && def->ok()) {
      text += fmt::format("; {:.1f}x the default", def->median_seconds / best->median_seconds);
    }
    return text + "\n";
  };
  for (const ReportEntry& e : entries) {
    out += fmt::format("{} on {}\n", e.workload.name, e.target.target);
    out += line(e);
    for (const ReportEntry& c : compare) {
      if (c.workload.key != e.workload.key) continue;
      out += fmt::format("  vs {} on {}:\n  {}", c.source, c.target.target, line(c).substr(2));
    }
  }
  if (entries.empty()) out += "no records\n";
  return out;
}

std::string render_unfinished_runs(const database::Database& db) {
  std::string out;
  for (const database::TuningRun& run : db.runs()) {
    if (run.ended != 0)
      continue;
    const std::optional<database::WorkloadInfo> w = db.workload(run.workload_key);
    out +=
        fmt::format("  run {} of {} on {}: unfinished (killed?), {} trials stored, {} ok\n", run.id,
                    w ? w->name : run.workload_key, run.target.target, run.trials, run.ok_trials);
  }
  return out;
}

}  // namespace tensortune::cli

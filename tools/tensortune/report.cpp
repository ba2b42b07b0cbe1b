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
  return std::count_if(history.begin(), history.end(),
                       [](const database::Record& r) { return r.ok(); });
}

std::map<std::string, int64_t> ReportEntry::by_status() const {
  std::map<std::string, int64_t> out;
  for (const database::Record& r : history)
    ++out[r.status];
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

std::vector<const database::Record*> ReportEntry::top(size_t k) const {
  std::vector<const database::Record*> out;
  const database::Record* first = best();
  if (first != nullptr)
    out.push_back(first);  // the best that replays, as db best names it
  std::vector<const database::Record*> rest;
  for (const database::Record& r : history) {
    if (r.may_be_best() && &r != first)
      rest.push_back(&r);
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [](const auto* a, const auto* b) { return a->rank_seconds < b->rank_seconds; });
  for (const database::Record* r : rest) {
    if (out.size() >= k)
      break;
    out.push_back(r);
  }
  return out;
}

double ReportEntry::wall_seconds() const {
  double total = 0;
  for (const database::Record& r : history)
    total += r.wall_seconds;
  return total;
}

const database::Record* ReportEntry::default_record() const {
  for (const database::Record& r : history) {
    if (r.knobs != "{}")
      continue;
    try {
      if (schedule::parse_schedule(r.schedule).steps.empty())
        return &r;
    } catch (const UserError&) {
      continue;  // a record whose steps no longer parse is not the default
    }
  }
  return nullptr;
}

double record_gflops(const database::Record& r, double flop_count) {
  return r.ok() && r.seconds() > 0 ? flop_count / r.seconds() * 1e-9 : 0.0;
}

std::string time_kind(const database::Record& r) {
  return r.confirmed() ? "confirmed" : "unconfirmed";
}

double ReportEntry::gflops(const database::Record& r) const {
  return record_gflops(r, workload.flop_count);
}

namespace {

/// The workload key a --workload argument names: a key as stored, or a spec to build.
std::string resolve_key(const database::Database& db, const std::string& text) {
  if (db.workload(text))
    return text;
  try {
    return te::make_workload(text).key();
  } catch (const UserError& e) {
    throw UserError("report: '" + text +
                    "' is neither a workload key in the database nor a valid spec (" + e.what() +
                    ")");
  }
}

/// The peak stored with the run of the entry's best record, else with the latest run on its
/// target that stored one.
void set_stored_peak(ReportEntry& e, const std::vector<database::TuningRun>& runs) {
  const database::Record* best = e.best();
  const database::TuningRun* pick = nullptr;
  for (const database::TuningRun& run : runs) {
    if (run.peak_gflops <= 0 || !(run.target == e.target))
      continue;
    if (best != nullptr && run.id == best->run_id) {
      pick = &run;
      break;
    }
    pick = &run;  // runs are in id order: the latest one wins
  }
  if (pick != nullptr) {
    e.peak_gflops = pick->peak_gflops;
    e.peak_spread = pick->peak_spread;
    e.peak_run = pick->id;
  }
}

}  // namespace

std::vector<ReportEntry> collect_entries(const database::Database& db,
                                         const ReportOptions& options) {
  std::set<std::string> wanted;
  for (const std::string& w : options.workloads)
    wanted.insert(resolve_key(db, w));
  const std::vector<database::TuningRun> runs = db.runs();
  std::vector<ReportEntry> out;
  for (const database::WorkloadInfo& info : db.workloads()) {
    if (!wanted.empty() && wanted.count(info.key) == 0)
      continue;
    for (const database::TargetKey& target : db.targets()) {
      if (!options.target_filter.empty() &&
          target.target.find(options.target_filter) == std::string::npos &&
          target.target != options.target_exact) {
        continue;
      }
      std::vector<database::Record> history = db.history(info.key, target);
      if (history.empty())
        continue;
      const std::vector<database::Record> best = replaying_best(db, info, target, 1);
      ReportEntry e{db.name(), info, target, std::move(history), best.empty() ? 0 : best[0].id};
      set_stored_peak(e, runs);
      out.push_back(std::move(e));
    }
  }
  for (const std::string& key : wanted) {
    const bool found = std::any_of(out.begin(), out.end(),
                                   [&](const ReportEntry& e) { return e.workload.key == key; });
    TT_USER_CHECK(found) << "report: workload '" << key << "' has no records in '" << db.name()
                         << "'"
                         << (options.target_filter.empty()
                                 ? ""
                                 : " for target '" + options.target_filter + "'");
  }
  std::stable_sort(out.begin(), out.end(), [](const ReportEntry& a, const ReportEntry& b) {
    return a.workload.name != b.workload.name ? a.workload.name < b.workload.name
                                              : a.target < b.target;
  });
  return out;
}

std::string render_text(const std::vector<ReportEntry>& entries,
                        const std::vector<ReportEntry>& compare) {
  std::string out;
  auto line = [](const ReportEntry& e) {
    std::string errors;
    for (const auto& [status, n] : e.by_status()) {
      if (status != "Ok")
        errors += fmt::format(" {} {}", status, n);
    }
    const database::Record* best = e.best();
    const database::Record* def = e.default_record();
    std::string text = fmt::format("  {} trials, {} ok{}{}", e.history.size(), e.ok(),
                                   errors.empty() ? "" : ",", errors);
    if (best != nullptr) {
      text += fmt::format("; best {:.1f} GFLOP/s ({:.3f} ms, record {}, {}{})", e.gflops(*best),
                          best->seconds() * 1e3, best->id, time_kind(*best),
                          e.peak_gflops > 0 ? fmt::format(", {:.1f}% of the stored peak",
                                                          100 * e.gflops(*best) / e.peak_gflops)
                                            : "");
    }
    if (best != nullptr && def != nullptr && def->ok()) {
      text += fmt::format("; {:.1f}x the default", def->seconds() / best->seconds());
    }
    return text + "\n";
  };
  for (const ReportEntry& e : entries) {
    out += fmt::format("{} on {}\n", e.workload.name, e.target.target);
    out += line(e);
    for (const ReportEntry& c : compare) {
      if (c.workload.key != e.workload.key)
        continue;
      out += fmt::format("  vs {} on {}:\n  {}", c.source, c.target.target, line(c).substr(2));
    }
  }
  if (entries.empty())
    out += "no records\n";
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

// SPDX-License-Identifier: Apache-2.0
// --schedule best and --record ID|best: schedules read from a tuning database through the driver.
#include "db_schedule.h"

#include "tensortune/database/database.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/support/error.h"
#include "tensortune/te/operators.h"
#include "zero_shot_cli.h"

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <utility>

namespace tensortune::cli {
namespace {

/// Exactly record `id_text` of the database, for `workload`.
ScheduleChoice exact_record(const database::Database& db,
                            const std::string& id_text,
                            const te::Workload& workload) {
  char* end = nullptr;
  errno = 0;
  int64_t id = std::strtoll(id_text.c_str(), &end, 10);
  TT_USER_CHECK(!id_text.empty() && end == id_text.c_str() + id_text.size() && id > 0 &&
                errno != ERANGE)
      << "--record: expected a record id or 'best', got '" << id_text << "'";
  std::optional<database::Record> record = db.record(id);
  TT_USER_CHECK(record) << "--record: no record #" << id << " in '" << db.name() << "'";
  TT_USER_CHECK(record->workload_key == workload.key())
      << "--record: record #" << id << " is for workload '" << record->workload_key << "', not '"
      << workload.key() << "'";
  schedule::Schedule parsed = driver::record_schedule(*record);
  try {
    schedule::apply_schedule(workload, parsed);
  } catch (const UserError& e) {
    throw UserError("record #" + std::to_string(id) + ": " + e.what());
  }
  if (!record->ok()) {
    std::cerr << "tensortune: warning: record #" << id << " is a failed measurement ("
              << record->status << ")\n";
  }
  return ScheduleChoice{parsed, "record #" + std::to_string(id)};
}

/// The workload `info` describes, when this build makes the same one from its spec.
std::optional<te::Workload> rebuild(const database::WorkloadInfo& info) {
  try {
    te::Workload w = te::make_workload(info.spec);
    if (w.key() == info.key)
      return w;
  } catch (const UserError&) {
  }
  return std::nullopt;
}

}  // namespace

std::vector<database::Record> replaying_best(const database::Database& db,
                                             const database::WorkloadInfo& info,
                                             const database::TargetKey& target,
                                             int64_t k) {
  const std::optional<te::Workload> workload = rebuild(info);
  if (!workload)
    return db.best(info.key, target, k);
  std::vector<database::Record> out;
  std::vector<std::pair<int64_t, std::string>> skipped;  // record id, why
  for (int64_t asked = k;; asked *= 2) {  // more, while skipped records leave the list short
    const std::vector<database::Record> best = db.best(info.key, target, asked);
    out.clear();
    skipped.clear();
    for (const database::Record& r : best) {
      if (static_cast<int64_t>(out.size()) == k)
        break;
      try {
        schedule::apply_schedule(*workload, driver::record_schedule(r));
        out.push_back(r);
      } catch (const UserError& e) {
        skipped.emplace_back(r.id, e.what());
      }
    }
    if (static_cast<int64_t>(out.size()) == k || static_cast<int64_t>(best.size()) < asked)
      break;
  }
  for (const auto& [id, why] : skipped) {
    std::cerr << "tensortune: warning: record #" << id << " of " << info.name
              << " does not replay onto its workload (" << why << "); it is not counted as best\n";
  }
  return out;
}

std::vector<std::string> driver_warnings(const driver::Compiler& compiler) {
  std::vector<std::string> all = compiler.warnings();
  std::string summary = compiler.summary_warning();
  if (!summary.empty()) {
    all.push_back(std::move(summary));
  }
  return all;
}

void print_driver_warnings(const driver::Compiler& compiler) {
  for (const std::string& w : driver_warnings(compiler)) {
    std::cerr << "tensortune: warning: " << w << "\n";
  }
}

void add_driver_notes(const driver::Compiler& compiler, support::Json* out) {
  support::Json untuned = support::Json::array();
  for (const std::string& name : compiler.untuned()) {
    untuned.push_back(name);
  }
  support::Json warnings = support::Json::array();
  for (const std::string& w : driver_warnings(compiler)) {
    warnings.push_back(w);
  }
  (*out)["untuned"] = std::move(untuned);
  (*out)["warnings"] = std::move(warnings);
}

ScheduleChoice choose_schedule(const ArgParser::Parsed& args,
                               const te::Workload& workload,
                               const std::string& command) {
  std::string schedule = args.get("schedule", args.has("record") ? "" : "default");
  if (args.has("record") && args.has("schedule")) {
    throw UsageError("give either --record or --schedule, not both", command);
  }
  if (schedule == "auto" || schedule == "zero-shot") {
    return auto_schedule(args, workload, schedule == "zero-shot");
  }
  bool best = schedule == "best" || args.get("record") == "best";
  if (!best && !args.has("record")) {
    return load_schedule(schedule, workload);
  }
  if (!has_database(args)) {
    throw UsageError(std::string(best ? "--schedule best" : "--record") + " needs --db PATH",
                     command);
  }
  if (!best) {
    database::Database db = database::Database::open(database_path(args), true);
    return exact_record(db, args.get("record"), workload);
  }
  return best_schedule(args, workload, command);
}

ScheduleChoice auto_schedule(const ArgParser::Parsed& args,
                             const te::Workload& workload,
                             bool zero_shot_only) {
  std::optional<database::Database> db;
  if (has_database(args) && !zero_shot_only) {
    db.emplace(database::Database::open(database_path(args), true));
  }
  driver::Compiler compiler(db ? &*db : nullptr, target::Target::parse(args.get("target")));
  if (zero_shot_only) {
    compiler.set_zero_shot(zero_shot_fn(zero_shot_model(args)));
  } else {
    enable_zero_shot(args, compiler);
  }
  driver::Compiled chosen = compiler.lower_kernel(workload, args.get("workload"));
  print_driver_warnings(compiler);
  std::cerr << "tensortune: " << workload.name() << ": using " << chosen.lookup.describe() << "\n";
  return ScheduleChoice{chosen.lookup.schedule, chosen.lookup.describe()};
}

ScheduleChoice best_schedule(const ArgParser::Parsed& args,
                             const te::Workload& workload,
                             const std::string& command) {
  if (!has_database(args)) {
    throw UsageError("best needs --db PATH", command);
  }
  database::Database db = database::Database::open(database_path(args), true);
  driver::Compiler compiler(&db, target::Target::parse(args.get("target")));
  driver::Compiled chosen = compiler.lower_kernel(workload, args.get("workload"));
  print_driver_warnings(compiler);
  std::cerr << "tensortune: " << workload.name() << ": using " << chosen.lookup.describe() << "\n";
  std::string source =
      chosen.lookup.source == driver::Source::Default ? "default" : chosen.lookup.describe();
  return ScheduleChoice{chosen.lookup.schedule, source};
}

}  // namespace tensortune::cli

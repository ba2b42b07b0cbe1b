// SPDX-License-Identifier: Apache-2.0
// `tensortune db shipped | shipped-import | shipped-update`: the tuning logs shipped with
// tensortune (tuning_logs/shipped/cpu.db), which compile and compile-model consult after the
// user's database: list them, and add records to them (maintainers regenerate them this way).
#include "commands.h"
#include "tensortune/codegen/host.h"
#include "tensortune/database/database.h"
#include "tensortune/database/jsonl_io.h"
#include "tensortune/driver/compile.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/target/target.h"
#include "zero_shot_cli.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#ifndef TT_SOURCE_DIR
#define TT_SOURCE_DIR ""
#endif

namespace tensortune::cli {
namespace {

ArgParser shipped_parser(const std::string& action) {
  ArgParser parser(
      "db " + action,
      action == "shipped" ? "db shipped [--shipped PATH] [--json]"
      : action == "shipped-import"
          ? "db shipped-import FILE.jsonl [--shipped PATH] [--json]"
          : "db shipped-update --db PATH [--k N] [--shipped PATH] [--json]",
      "The shipped tuning logs are a tuning database that compile, compile-model and bench "
      "--schedule auto consult after the user's own (--no-shipped: not at all). A record is used "
      "on a host only when the CPU it was tuned on had no ISA feature this host lacks. "
      "'db shipped' lists their devices and records; 'db shipped-import FILE' adds the records "
      "of a JSON-lines export (db export) of another machine, all or nothing; 'db shipped-update "
      "--db PATH' adds the best --k records (default 8) of every workload and target of PATH.");
  parser
      .option("shipped", "PATH",
              "the shipped logs to read or write (default: the ones this build uses, else "
              "tuning_logs/shipped/cpu.db of the source tree)")
      .flag("json", "print one JSON document");
  if (action == "shipped-update") {
    parser
        .option(
            "db", "PATH",
            "the tuning database whose best records are added (default tuning_logs/tensortune.db)")
        .option("k", "N", "records kept per workload and target (default 8)");
  }
  return parser;
}

std::string shipped_path(const ArgParser::Parsed& p, bool writing) {
  if (p.has("shipped"))
    return p.get("shipped");
  std::string path = shipped_logs_path();
  TT_USER_CHECK(!path.empty() || writing)
      << "db shipped: this build has no shipped tuning logs (tuning_logs/shipped/cpu.db)";
  if (path.empty()) {
    path = std::string(TT_SOURCE_DIR) + "/tuning_logs/shipped/cpu.db";
    TT_USER_CHECK(!std::string(TT_SOURCE_DIR).empty())
        << "db shipped: give --shipped PATH (this build does not know its source tree)";
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  }
  return path;
}

int list_shipped(const ArgParser::Parsed& p) {
  const std::string path = shipped_path(p, false);
  TT_USER_CHECK(std::filesystem::is_regular_file(path))
      << "db shipped: '" << path << "' does not exist";
  const database::Database db = database::Database::open(path, true);
  const std::string host = codegen::device_fingerprint(target::Target::parse("native"));
  const std::set<std::string> host_features = driver::fingerprint_features(host);
  std::map<std::string, int64_t> per_target;
  for (const database::Record& r : db.all_records())
    ++per_target[r.target.target + "\n" + r.target.fingerprint];
  support::Json targets = support::Json::array();
  for (const database::TargetKey& t : db.targets()) {
    const std::set<std::string> needs = driver::record_needs(t);
    // GPU code runs on any device of its architecture: its records serve builds for that target.
    bool gpu = false;
    try {
      gpu = target::Target::parse(t.target).is_gpu();
    } catch (const UserError&) {
    }
    const bool applies = gpu || std::includes(host_features.begin(), host_features.end(),
                                              needs.begin(), needs.end());
    support::Json j = support::Json::object();
    j["target"] = t.target;
    j["gpu"] = gpu;
    j["fingerprint"] = t.fingerprint;
    j["records"] = per_target[t.target + "\n" + t.fingerprint];
    j["applies_here"] = applies;
    targets.push_back(std::move(j));
  }
  if (p.has("json")) {
    support::Json out = support::Json::object();
    out["shipped"] = path;
    out["workloads"] = static_cast<int64_t>(db.workloads().size());
    out["targets"] = std::move(targets);
    std::cout << out.dump() << "\n";
    return 0;
  }
  std::cout << fmt::format("{}: {} workloads\n", path, db.workloads().size());
  for (const support::Json& t : targets.as_array()) {
    std::cout << fmt::format("  {} records, target '{}', {}\n    {}\n", t.at("records").as_int(),
                             t.at("target").as_string(),
                             t.at("gpu").as_bool() ? "used when compiling for that target"
                             : t.at("applies_here").as_bool() ? "used on this host"
                                                              : "not used here (ISA features)",
                             t.at("fingerprint").as_string());
  }
  return 0;
}

void print_summary(const ArgParser::Parsed& p,
                   const std::string& path,
                   const database::ImportSummary& s) {
  if (p.has("json")) {
    support::Json out = support::Json::object();
    out["shipped"] = path;
    out["workloads"] = s.workloads;
    out["imported"] = s.imported;
    out["skipped"] = s.skipped;
    std::cout << out.dump() << "\n";
    return;
  }
  std::cout << fmt::format("{}: added {} records ({} already there) and {} workloads\n", path,
                           s.imported, s.skipped, s.workloads);
}

}  // namespace

int run_db_shipped(const std::string& action, const std::vector<std::string>& in_args) {
  std::vector<std::string> args = in_args;
  std::string file;
  if (action == "shipped-import") {
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].rfind("-", 0) == 0) {
        i += (args[i] == "--json" || args[i].find('=') != std::string::npos) ? 0 : 1;
      } else {
        file = args[i];
        args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }
  std::optional<ArgParser::Parsed> parsed = parse_command_line(shipped_parser(action), args);
  if (!parsed)
    return 0;
  const ArgParser::Parsed& p = *parsed;
  if (action == "shipped")
    return list_shipped(p);
  database::ImportData data;
  if (action == "shipped-import") {
    if (file.empty())
      throw UsageError("shipped-import: give the JSON-lines file to add", "db");
    std::ifstream in(file);
    TT_USER_CHECK(in.good()) << "db shipped-import: cannot read '" << file << "'";
    data = database::read_jsonl(in, file);
  } else {
    const std::string source = database_path(p);
    TT_USER_CHECK(std::filesystem::is_regular_file(source))
        << "db shipped-update: database '" << source << "' does not exist";
    const database::Database db = database::Database::open(source, true);
    const int64_t k = p.get_int("k", 8, 1, 1000000);
    data.name = source;
    // Line numbers as an export would have them: every workload before its records.
    std::vector<database::Record> records;
    for (const database::WorkloadInfo& w : db.workloads()) {
      const size_t before = records.size();
      for (const database::TargetKey& t : db.targets()) {
        for (database::Record& r : db.best(w.key, t, k)) {
          r.run_id = 0;  // the tuning runs stay behind, as in an export
          records.push_back(std::move(r));
        }
      }
      if (records.size() > before) {
        data.workloads.push_back(w);
        data.workload_lines.push_back(static_cast<int64_t>(data.workloads.size()));
      }
    }
    for (database::Record& r : records) {
      data.records.push_back(std::move(r));
      data.record_lines.push_back(
          static_cast<int64_t>(data.workloads.size() + data.records.size()));
    }
  }
  // The file is read and checked before the shipped logs are opened: a bad one changes nothing.
  const std::string path = shipped_path(p, true);
  database::Database shipped = database::Database::open(path);
  const database::ImportSummary summary = database::import_jsonl(shipped, data);
  // Readers of the shipped file (a fresh clone, an install) need no -wal or -shm beside it.
  shipped.use_rollback_journal();
  print_summary(p, path, summary);
  return 0;
}

}  // namespace tensortune::cli

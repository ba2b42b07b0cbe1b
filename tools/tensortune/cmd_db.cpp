// SPDX-License-Identifier: Apache-2.0
// `tensortune db ACTION`: queries and maintains the tuning database (list, stats, best, history,
// export, import, prune, vacuum).
#include "commands.h"
#include "db_schedule.h"
#include "output_file.h"
#include "report.h"
#include "tensortune/database/database.h"
#include "tensortune/database/jsonl_io.h"
#include "tensortune/support/error.h"
#include "tensortune/support/file.h"
#include "tensortune/support/json.h"
#include "tensortune/target/target.h"
#include "tensortune/te/operators.h"
#include "tensortune/te/workload.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace tensortune::cli {
namespace {

constexpr const char* kActions =
    "list, stats, best, history, export, import, copy, prune, vacuum, shipped, "
    "shipped-import, shipped-update";

support::Json record_json(const database::Record& r, double flop_count) {
  support::Json out = support::Json::object();
  out["id"] = r.id;
  out["target"] = r.target.target;
  out["fingerprint"] = r.target.fingerprint;
  out["status"] = r.status;
  out["error"] = r.error;
  // The one time of a record (Record::seconds): confirmed side by side, else its stored median.
  out["seconds"] = r.seconds();
  out["gflops"] = record_gflops(r, flop_count);
  out["time"] = time_kind(r);
  out["median_seconds"] = r.median_seconds;
  // `best` orders by rank_seconds: the side-by-side order on the stored medians' scale.
  out["confirmed_seconds"] = r.confirmed_seconds;
  out["confirm_spread"] = r.confirm_spread;
  out["rank_seconds"] = r.rank_seconds;
  out["schedule"] = r.schedule;
  out["knobs"] = r.knobs;
  out["timestamp"] = r.timestamp;
  return out;
}

/// The key of --workload SPEC (or --key KEY, for workloads this build cannot declare).
std::string workload_key(const ArgParser::Parsed& p) {
  if (p.has("key")) {
    return p.get("key");
  }
  if (!p.has("workload"))
    throw UsageError("give --workload SPEC or --key KEY", "db");
  return te::make_workload(p.get("workload")).key();
}

/// best / history: the records of one workload on every target identity (or those whose target
/// string is --target), fastest first for best, in order for history.
int show_records(const ArgParser::Parsed& p, bool best) {
  database::Database db = database::Database::open(database_path(p), true);
  std::string key = workload_key(p);
  std::optional<database::WorkloadInfo> w = db.workload(key);
  TT_USER_CHECK(w) << "db: no workload '" << key << "' in '" << database_label(p) << "'";
  auto k = p.get_int("k", 5, 1, 1000000);
  support::Json list = support::Json::array();
  // Records are stored under the canonical text of the target as written (driver::target_key).
  std::string wanted = p.has("target") ? target::Target::parse(p.get("target")).to_string() : "";
  for (const database::TargetKey& t : db.targets()) {
    if (p.has("target") && t.target != wanted) {
      continue;
    }
    std::vector<database::Record> records =
        best ? replaying_best(db, *w, t, k) : db.history(key, t);
    for (const database::Record& r : records) {
      list.push_back(record_json(r, w->flop_count));
    }
  }
  if (p.has("json")) {
    support::Json out = support::Json::object();
    out["workload"] = w->name;
    out["workload_key"] = key;
    out["records"] = std::move(list);
    std::cout << out.dump() << "\n";
    return 0;
  }
  std::cout << w->name << " (" << key << ")\n";
  for (const support::Json& r : list.as_array()) {
    const bool ok = r.at("status").as_string() == "Ok";
    std::cout << fmt::format("  #{:<7} {:<15} {:>10.4f} ms {:>8.1f} GFLOP/s  {:<11}  {}\n",
                             r.at("id").as_int(), r.at("status").as_string(),
                             r.at("seconds").as_double() * 1e3, r.at("gflops").as_double(),
                             ok ? r.at("time").as_string() : "", r.at("target").as_string());
  }
  return 0;
}

int stats(const ArgParser::Parsed& p) {
  database::Database db = database::Database::open(database_path(p), true);
  support::Json list = support::Json::array();
  for (const database::WorkloadStats& s : db.stats()) {
    std::optional<database::Record> best;
    if (s.best_seconds > 0) {  // the best that still replays, as db best and report name it
      std::vector<database::Record> b =
          replaying_best(db, *db.workload(s.workload_key), s.target, 1);
      if (!b.empty())
        best = std::move(b[0]);
    }
    const double best_seconds = best ? best->seconds() : 0;
    support::Json entry = support::Json::object();
    entry["workload"] = s.workload_name;
    entry["workload_key"] = s.workload_key;
    entry["target"] = s.target.target;
    entry["fingerprint"] = s.target.fingerprint;
    entry["records"] = s.records;
    entry["ok"] = s.ok;
    entry["best_seconds"] = best_seconds;
    entry["best_gflops"] = best ? record_gflops(*best, s.flop_count) : 0.0;
    entry["best_record_id"] = best ? best->id : 0;
    entry["best_time"] = best ? time_kind(*best) : "";
    support::Json by = support::Json::object();
    for (const auto& [status, n] : s.by_status) {
      by[status] = n;
    }
    entry["by_status"] = std::move(by);
    list.push_back(std::move(entry));
  }
  if (p.has("json")) {
    support::Json out = support::Json::object();
    out["db"] = database_label(p);
    out["records"] = db.count_records();
    out["workloads"] = std::move(list);
    support::Json runs = support::Json::array();
    for (const database::TuningRun& run : db.runs()) {
      support::Json r = support::Json::object();
      r["id"] = run.id;
      r["workload_key"] = run.workload_key;
      r["target"] = run.target.target;
      r["trials"] = run.trials;
      r["ok"] = run.ok_trials;
      r["state"] = run.ended != 0 ? "finished" : "unfinished (killed?)";
      runs.push_back(std::move(r));
    }
    out["runs"] = std::move(runs);
    std::cout << out.dump() << "\n";
    return 0;
  }
  std::cout << database_label(p) << ": " << db.count_records() << " records\n";
  // Workloads of one name but different keys (a 3->8 and an 8->8 convolution) are told apart.
  std::vector<te::NamedKey> named;
  for (const support::Json& e : list.as_array())
    named.push_back({e.at("workload").as_string(), e.at("workload_key").as_string()});
  const std::vector<std::string> shown = te::distinct_names(named);
  size_t row = 0;
  for (const support::Json& e : list.as_array()) {
    std::string counts;
    for (const auto& [status, n] : e.at("by_status").as_object()) {
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n.as_int(), status);
    }
    const int64_t id = e.at("best_record_id").as_int();
    std::cout << fmt::format(
        "  {:<40} {:>6} records, best {:>8.1f} GFLOP/s {}  [{}]  {}\n", shown[row++],
        e.at("records").as_int(), e.at("best_gflops").as_double(),
        id > 0 ? fmt::format("({:.4f} ms, record {}, {})", e.at("best_seconds").as_double() * 1e3,
                             id, e.at("best_time").as_string())
               : std::string(),
        counts, e.at("target").as_string());
  }
  std::cout << render_unfinished_runs(db);
  return 0;
}

int export_db(const ArgParser::Parsed& p) {
  if (!p.has("out"))
    throw UsageError("export: give --out FILE.jsonl", "db");
  const std::string path = p.get("out");
  const bool to_stdout = path == "-";
  if (to_stdout && p.has("json"))
    throw UsageError("export: --json and --out - would both write to standard output", "db");
  check_not_database(path, database_path(p), "db export");
  database::Database db = database::Database::open(database_path(p), true);
  AtomicFile out(path, "db export", true);
  std::vector<std::string> unreadable;
  int64_t lines = database::export_jsonl(db, out.stream(), &unreadable);
  out.commit();
  // Every readable record is exported: export is how a damaged database is rescued.
  for (const std::string& why : unreadable)
    std::cerr << "tensortune: warning: db export: skipped " << why << "\n";
  TT_USER_CHECK(unreadable.empty())
      << "db export: " << unreadable.size() << " record" << (unreadable.size() == 1 ? "" : "s")
      << " could not be read and " << (unreadable.size() == 1 ? "was" : "were")
      << " not exported (see the warnings above); the other " << lines << " lines are in " << path;
  if (p.has("json")) {
    support::Json j = support::Json::object();
    j["out"] = path;
    j["lines"] = lines;
    std::cout << j.dump() << "\n";
  }
  std::cerr << "db export: " << lines << " lines to " << path << "\n";
  return 0;
}

/// Every record's target string must be one `tune` could have written: a target that parses and
/// is written the way the database writes it (else no --target could ever select it).
void check_targets(const database::ImportData& data) {
  std::map<std::string, std::string> checked;  // target -> why not ("" = fine)
  for (size_t i = 0; i < data.records.size(); ++i) {
    const std::string& text = data.records[i].target.target;
    auto it = checked.find(text);
    if (it == checked.end()) {
      std::string why;
      try {
        const std::string canonical = target::Target::parse(text).to_string();
        if (canonical != text)
          why = "is not written as the database writes it ('" + canonical + "')";
      } catch (const UserError& e) {
        why = std::string("does not parse: ") + e.what();
      }
      it = checked.emplace(text, why).first;
    }
    if (!it->second.empty())
      throw UserError(data.name + ":" + std::to_string(data.record_lines[i]) + ": target '" + text +
                      "' " + it->second + "; nothing was imported");
  }
}

int import_db(const ArgParser::Parsed& p, const std::string& file) {
  if (file.empty())
    throw UsageError("import: give the file to import (db import --db PATH FILE)", "db");
  // A regular file under a cap: /dev/zero or a FIFO is refused, not read until memory runs out.
  support::check_regular_file(file, support::kMaxImportFileBytes, "db import: file");
  std::ifstream in(file);
  TT_USER_CHECK(in.good()) << "db import: cannot read '" << file << "'";
  // The whole file is read and checked before the database is opened (and so created or
  // migrated): a bad file changes nothing.
  const database::ImportData data = database::read_jsonl(in, file);
  check_targets(data);
  database::Database db =
      database::Database::open(database_path(p), false, database::Database::Check::Full);
  database::ImportSummary s = database::import_jsonl(db, data);
  if (p.has("json")) {
    support::Json out = support::Json::object();
    out["workloads"] = s.workloads;
    out["imported"] = s.imported;
    out["skipped"] = s.skipped;
    std::cout << out.dump() << "\n";
  } else {
    std::cout << fmt::format("imported {} records ({} already present) and {} workloads\n",
                             s.imported, s.skipped, s.workloads);
  }
  return 0;
}

/// Copies every workload and record of `from` into `to` (created when new) in one transaction,
/// through the checks an import makes: all or nothing, records already there skipped.
int copy_db(const ArgParser::Parsed& p, const std::vector<std::string>& words) {
  if (words.size() != 2)
    throw UsageError("copy: give the source and the destination (db copy SRC DST)", "db");
  const std::string& from = words[0];
  const std::string& to = words[1];
  const std::string from_name = database::display_name(from);
  const std::string to_name = database::display_name(to);
  check_database_exists(from, "db copy");
  std::error_code ec;
  TT_USER_CHECK(from != to && !(std::filesystem::exists(to, ec) &&
                                std::filesystem::equivalent(from, to, ec) && !ec))
      << "db copy: '" << from_name << "' is both the source and the destination";
  std::stringstream lines;
  {
    const database::Database source = database::Database::open(from, true);
    std::vector<std::string> unreadable;
    database::export_jsonl(source, lines, &unreadable);
    TT_USER_CHECK(unreadable.empty())
        << "db copy: " << unreadable.size() << " record(s) of '" << from_name
        << "' cannot be read (first: " << unreadable.front()
        << "); nothing was copied ('db export' rescues the others)";
  }
  const database::ImportData data = database::read_jsonl(lines, from_name);
  check_targets(data);
  database::Database dest = database::Database::open(to, false, database::Database::Check::Full);
  const database::ImportSummary s = database::import_jsonl(dest, data);
  if (p.has("json")) {
    support::Json out = support::Json::object();
    out["from"] = from_name;
    out["to"] = to_name;
    out["workloads"] = s.workloads;
    out["copied"] = s.imported;
    out["skipped"] = s.skipped;
    std::cout << out.dump() << "\n";
  } else {
    std::cout << fmt::format(
        "copied {} records ({} already present) and {} workloads from {} to {}\n", s.imported,
        s.skipped, s.workloads, from_name, to_name);
  }
  return 0;
}

}  // namespace

ArgParser db_parser() {
  ArgParser parser(
      "db",
      "db ACTION --db PATH [--workload SPEC | --key KEY] [--target T] [--k N] [--out FILE] "
      "[FILE] [--json] | db copy SRC DST",
      std::string("Queries and maintains a tuning database. ACTION is one of: ") + kActions +
          ". best and history take --workload (or --key), optionally --target and --k; export "
          "takes --out FILE.jsonl; import takes the file to read; copy takes two databases (files "
          "or postgresql:// URLs) and copies every record of the first into the second, all or "
          "nothing; prune keeps the best --k per workload and target.");
  parser
      .option("db", "PATH",
              "the database: a file (default tuning_logs/tensortune.db, as tune) or "
              "postgresql://USER@HOST:PORT/DBNAME")
      .option("workload", "SPEC", kWorkloadHelp)
      .option("key", "KEY", "a workload key, instead of --workload")
      .option("target", "T", "only records of this target (as written to tune, e.g. native)")
      .option("k", "N",
              "records per workload and target, at least 1 (best: default 5; prune: required)")
      .option("out", "FILE",
              "export: the JSON-lines file to write, replaced whole ('-': standard output); a "
              "link, directory, device, FIFO or socket is refused. A record that cannot be "
              "read is skipped with a warning, and export then exits 1 after writing the rest")
      .flag("json", "print one JSON document");
  return parser;
}

int run_db(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::cout << db_parser().help_text();
    return 0;
  }
  // The action is the first word; -v / -vv given before it (db -vv list) are kept for the parser.
  size_t first = 0;
  while (first + 1 < args.size() && verbosity_of(args[first]) > 0)
    ++first;
  const std::string& action = args[first];
  std::vector<std::string> rest(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(first));
  rest.insert(rest.end(), args.begin() + static_cast<std::ptrdiff_t>(first) + 1, args.end());
  if (action == "shipped" || action == "shipped-import" || action == "shipped-update") {
    return run_db_shipped(action, rest);
  }
  std::vector<std::string> words;
  if (action == "import" || action == "copy") {
    // The words that are neither options nor options' values: import's file, copy's databases.
    for (size_t i = 0; i < rest.size();) {
      const std::string& word = rest[i];
      bool is_flag = word == "--json" || word == "-h" || word == "--help" || word == "-v" ||
                     word == "-vv" || word.find('=') != std::string::npos;
      if (word.rfind("-", 0) == 0) {
        i += is_flag ? 1 : 2;
      } else {
        words.push_back(word);
        rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
  }
  std::optional<ArgParser::Parsed> p = parse_command_line(db_parser(), rest);
  if (!p) {
    return 0;
  }
  if (action == "list" || action == "stats") {
    return stats(*p);
  }
  if (action == "best" || action == "history") {
    return show_records(*p, action == "best");
  }
  if (action == "export") {
    return export_db(*p);
  }
  if (action == "import") {
    if (words.size() > 1)
      throw UsageError("import: one file at a time, not '" + words[1] + "'", "db");
    return import_db(*p, words.empty() ? std::string() : words[0]);
  }
  if (action == "copy") {
    return copy_db(*p, words);
  }
  if (action == "prune" || action == "vacuum") {
    const std::string path = database_path(*p);
    if (action == "prune" && !p->has("k"))
      throw UsageError("prune: give --k N (the records kept per workload and target)", "db");
    // --k 0 would delete every record: like best, it is a usage error, not an "empty it" switch.
    const int64_t k = action == "prune" ? p->get_int("k", 1, 1, INT64_MAX) : 0;
    // Maintenance never creates a database: a mistyped path is an error, not a new empty file.
    check_database_exists(path, "db " + action);
    database::Database db = database::Database::open(path, false, database::Database::Check::Full);
    support::Json j = support::Json::object();
    j["db"] = db.name();
    if (action == "vacuum") {
      db.vacuum();
      // A compacted file stands alone, to copy or to ship; a file another process has open
      // stays in WAL, and any later writer turns WAL on again anyway.
      try {
        db.use_rollback_journal();
      } catch (const UserError&) {
      }
      j["vacuumed"] = true;
    } else {
      j["pruned"] = db.prune(k);
    }
    if (p->has("json"))
      std::cout << j.dump() << "\n";
    else if (action == "vacuum")
      std::cout << "vacuumed " << db.name() << "\n";
    else
      std::cout << "pruned " << j.at("pruned").as_int() << " records\n";
    return 0;
  }
  throw UsageError("unknown db action '" + action + "' (one of: " + kActions + ")", "db");
}

}  // namespace tensortune::cli

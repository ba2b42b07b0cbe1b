// SPDX-License-Identifier: Apache-2.0
// `tensortune report`: one self-contained HTML report of a tuning database (optionally against a
// second one) and a plain-text summary on the terminal.
#include "commands.h"
#include "output_file.h"
#include "report.h"
#include "tensortune/support/error.h"
#include "tensortune/support/file.h"
#include "tensortune/support/json.h"
#include "tensortune/target/target.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace tensortune::cli {

ArgParser report_parser() {
  ArgParser parser(
      "report",
      "report --db PATH [--out report.html] [--workload SPEC|KEY ...] [--target TEXT] "
      "[--record ID] [--compare OTHER.db] [--json]",
      "Writes one self-contained HTML file (inline SVG, no network) with, per workload and "
      "target: the best GFLOP/s against trials and against tuning time, the distribution of "
      "measured candidates, errors by class, and the best schedule beside the default and a "
      "chosen record (steps, loop nest, GFLOP/s, % of peak); the same workload on another "
      "target or in --compare's database side by side. Prints a text summary.");
  parser.option("db", "PATH", "tuning database to report on (default tuning_logs/tensortune.db)")
      .option("out", "FILE",
              "HTML file to write (default: only the text summary); replaced whole, and "
              "refused when it is a link, directory, device, FIFO or socket")
      .option("workload", "SPEC", "workload spec or key to include (default: all)", {}, false, true)
      .option("target", "TEXT", "only targets whose string contains TEXT")
      .option("record", "ID", "a record to show beside the best and the default")
      .option("compare", "PATH", "a second database compared side by side")
      .flag("json", "print {db, out, workloads: [{workload, target, trials, ok, best_gflops}]}");
  return parser;
}

namespace {

database::Database open_existing(const std::string& path) {
  check_database_exists(path, "report");
  return database::Database::open(path, true);
}

}  // namespace

int run_report(const std::vector<std::string>& args) {
  std::optional<ArgParser::Parsed> parsed = parse_command_line(report_parser(), args);
  if (!parsed)
    return 0;
  const ArgParser::Parsed& p = *parsed;
  ReportOptions options;
  options.workloads = p.get_all("workload");
  options.target_filter = p.get("target");
  if (!options.target_filter.empty()) {
    try {  // "native" is stored as the host's llvm target: match that too
      options.target_exact = target::Target::parse(options.target_filter).to_string();
    } catch (const UserError&) {  // a fragment such as "znver4": substring only
    }
  }
  options.record_id = p.get_int("record", 0, 0, INT64_MAX);
  if (p.has("out")) {
    check_not_database(p.get("out"), database_path(p), "report");
    support::check_output_path(p.get("out"), "report");  // before any work is done
    if (p.has("compare"))
      check_not_database(p.get("out"), p.get("compare"), "report");
  }
  const database::Database db = open_existing(database_path(p));
  const std::vector<ReportEntry> entries = collect_entries(db, options);
  std::vector<ReportEntry> compare;
  if (p.has("compare")) {
    const database::Database other = open_existing(p.get("compare"));
    ReportOptions o = options;
    o.workloads.clear();
    compare = collect_entries(other, o);
  }
  std::optional<database::Record> chosen;
  if (options.record_id > 0) {
    chosen = db.record(options.record_id);
    TT_USER_CHECK(chosen.has_value())
        << "report: no record " << options.record_id << " in '" << database_label(p) << "'";
    const bool shown = std::any_of(entries.begin(), entries.end(), [&](const ReportEntry& e) {
      return e.workload.key == chosen->workload_key;
    });
    TT_USER_CHECK(shown) << "report: record " << options.record_id << " is of workload '"
                         << chosen->workload_key
                         << "', which this report does not include (see --workload, --target)";
  }
  if (p.has("out")) {
    const std::string html = render_html(entries, compare, options, chosen);
    AtomicFile out(p.get("out"), "report");
    out.stream() << html;
    out.commit();
  }
  if (p.has("json")) {
    support::Json j = support::Json::object();
    j["db"] = database_label(p);
    j["out"] = p.get("out");
    support::Json list = support::Json::array();
    for (const ReportEntry& e : entries) {
      support::Json w = support::Json::object();
      w["workload"] = e.workload.name;
      w["workload_key"] = e.workload.key;
      w["target"] = e.target.target;
      w["trials"] = static_cast<int64_t>(e.history.size());
      w["ok"] = e.ok();
      const database::Record* b = e.best();
      w["best_gflops"] = b ? e.gflops(*b) : 0.0;
      w["best_seconds"] = b ? b->seconds() : 0.0;
      w["best_record_id"] = b ? b->id : 0;
      w["best_time"] = b ? time_kind(*b) : "";
      w["peak_gflops"] = e.peak_gflops;
      list.push_back(std::move(w));
    }
    j["workloads"] = std::move(list);
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << render_text(entries, compare) << render_unfinished_runs(db);
  if (p.has("out"))
    std::cout << "report written to " << p.get("out") << "\n";
  return 0;
}

}  // namespace tensortune::cli

// SPDX-License-Identifier: Apache-2.0
// JSON-lines export and all-or-nothing import of the tuning database (see jsonl_io.h).
#include "tensortune/database/jsonl_io.h"

#include "tensortune/support/error.h"
#include "tensortune/support/hash.h"
#include "tensortune/support/json.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace tensortune::database {
namespace {

using support::Json;

Json workload_line(const WorkloadInfo& w) {
  Json line = Json::object();
  line["kind"] = "workload";
  line["format"] = kRecordFormat;
  line["key"] = w.key;
  line["name"] = w.name;
  line["op"] = w.op;
  line["spec"] = w.spec;
  line["canonical_text"] = w.canonical_text;
  line["flop_count"] = w.flop_count;
  return line;
}

Json record_line(const Record& r) {
  Json line = Json::object();
  line["kind"] = "record";
  line["format"] = kRecordFormat;
  line["workload"] = r.workload_key;
  line["target"] = r.target.target;
  line["fingerprint"] = r.target.fingerprint;
  line["schedule"] = r.schedule;
  line["knobs"] = r.knobs;
  line["status"] = r.status;
  line["error"] = r.error;
  Json repeats = Json::array();
  for (double v : r.repeats) {
    repeats.push_back(v);
  }
  line["repeats"] = std::move(repeats);
  line["median_seconds"] = r.median_seconds;
  line["build_seconds"] = r.build_seconds;
  line["run_seconds"] = r.run_seconds;
  line["wall_seconds"] = r.wall_seconds;
  line["seed"] = r.seed;
  line["tool_version"] = r.tool_version;
  line["git_revision"] = r.git_revision;
  line["timestamp"] = r.timestamp;
  if (r.confirmed_seconds > 0) {  // a record never confirmed has neither field
    line["confirmed_seconds"] = r.confirmed_seconds;
    line["rank_seconds"] = r.rank_seconds;
    if (r.confirm_rounds > 0) {  // how sure the confirmation is (absent from older exports)
      line["confirm_spread"] = r.confirm_spread;
      line["confirm_rounds"] = r.confirm_rounds;
    }
  }
  if (!r.confirm_error.empty())  // it stays out of best on the machine it moves to
    line["confirm_error"] = r.confirm_error;
  return line;
}

const std::string& text(const Json& line, const char* field) {
  return line.at(field).as_string((std::string("field '") + field + "'").c_str());
}

double number(const Json& line, const char* field) {
  return line.at(field).as_double((std::string("field '") + field + "'").c_str());
}

int64_t integer(const Json& line, const char* field) {
  return line.at(field).as_int((std::string("field '") + field + "'").c_str());
}

WorkloadInfo parse_workload(const Json& line) {
  WorkloadInfo w;
  w.key = text(line, "key");
  w.name = text(line, "name");
  w.op = text(line, "op");
  w.spec = text(line, "spec");
  w.canonical_text = text(line, "canonical_text");
  w.flop_count = number(line, "flop_count");
  TT_USER_CHECK(!w.key.empty()) << "a workload with an empty key";
  const std::string expected = w.name + "_" + support::hash_hex(w.canonical_text);
  TT_USER_CHECK(w.key == expected)
      << "workload key '" << w.key << "' is not its name and the hash of its canonical text ('"
      << expected << "')";
  TT_USER_CHECK(std::isfinite(w.flop_count) && w.flop_count > 0)
      << "workload '" << w.key << "' has a FLOP count of " << w.flop_count
      << " (it must be positive)";
  return w;
}

Record parse_record(const Json& line) {
  Record r;
  r.workload_key = text(line, "workload");
  r.target.target = text(line, "target");
  r.target.fingerprint = text(line, "fingerprint");
  r.schedule = text(line, "schedule");
  r.knobs = text(line, "knobs");
  r.status = text(line, "status");
  r.error = text(line, "error");
  for (const Json& v : line.at("repeats").as_array("field 'repeats'")) {
    r.repeats.push_back(v.as_double("a repeat"));
  }
  r.median_seconds = number(line, "median_seconds");
  r.build_seconds = number(line, "build_seconds");
  r.run_seconds = number(line, "run_seconds");
  r.wall_seconds = number(line, "wall_seconds");
  r.seed = integer(line, "seed");
  r.tool_version = text(line, "tool_version");
  r.git_revision = text(line, "git_revision");
  r.timestamp = integer(line, "timestamp");
  static const std::set<std::string> kStatuses = {"Ok",           "CompileError", "CompileTimeout",
                                                  "RuntimeError", "RunTimeout",   "WrongResult"};
  TT_USER_CHECK(kStatuses.count(r.status) != 0) << "unknown status '" << r.status << "'";
  TT_USER_CHECK(!r.target.target.empty()) << "a record without a target";
  TT_USER_CHECK(!r.ok() || r.median_seconds > 0) << "an Ok record without a positive median";
  if (line.contains("confirmed_seconds")) {
    r.confirmed_seconds = number(line, "confirmed_seconds");
    r.rank_seconds = number(line, "rank_seconds");
    TT_USER_CHECK(r.ok() && r.confirmed_seconds > 0 && r.rank_seconds > 0)
        << "a confirmation needs an Ok record and positive confirmed_seconds and rank_seconds";
    if (line.contains("confirm_rounds")) {
      r.confirm_spread = number(line, "confirm_spread");
      r.confirm_rounds = integer(line, "confirm_rounds");
      TT_USER_CHECK(r.confirm_spread >= 0 && r.confirm_rounds > 0)
          << "a confirmation's spread must be >= 0 and its rounds > 0";
    }
  }
  if (line.contains("confirm_error")) {
    r.confirm_error = text(line, "confirm_error");
    TT_USER_CHECK(r.ok() && !r.confirm_error.empty() && r.confirmed_seconds == 0)
        << "a failed confirmation needs an Ok record without confirmed_seconds, and a reason";
  }
  return r;
}

}  // namespace

int64_t export_jsonl(const Database& db, std::ostream& out, std::vector<std::string>* unreadable) {
  int64_t lines = 0;
  for (const WorkloadInfo& w : db.workloads()) {
    out << workload_line(w).dump() << "\n";
    ++lines;
  }
  for (const Record& r : db.all_records(unreadable)) {
    out << record_line(r).dump() << "\n";
    ++lines;
  }
  out.flush();
  TT_USER_CHECK(out.good()) << "db export: writing failed";
  return lines;
}

ImportData read_jsonl(std::istream& in, const std::string& name) {
  ImportData data;
  data.name = name;
  std::string line_text;
  int64_t line_number = 0;
  while (std::getline(in, line_text)) {
    ++line_number;
    if (line_text.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    try {
      Json line = Json::parse(line_text);
      TT_USER_CHECK(line.is_object()) << "a line must be a JSON object";
      int64_t format = integer(line, "format");
      TT_USER_CHECK(format == kRecordFormat)
          << "format version " << format << " is not supported (this tensortune reads "
          << kRecordFormat << ")";
      const std::string& kind = text(line, "kind");
      if (kind == "workload") {
        data.workloads.push_back(parse_workload(line));
        data.workload_lines.push_back(line_number);
      } else if (kind == "record") {
        data.records.push_back(parse_record(line));
        data.record_lines.push_back(line_number);
      } else {
        throw UserError("unknown kind '" + kind + "' (expected workload or record)");
      }
    } catch (const UserError& e) {
      throw UserError(name + ":" + std::to_string(line_number) + ": " + e.what() +
                      "; nothing was imported");
    }
  }
  TT_USER_CHECK(!in.bad()) << name << ": read error; nothing was imported";
  return data;
}

ImportSummary import_jsonl(Database& db, const ImportData& data) {
  auto fail = [&](int64_t line, const std::string& what) {
    throw UserError(data.name + ":" + std::to_string(line) + ": " + what +
                    "; nothing was imported");
  };
  std::map<std::string, int64_t> first_line;  // workload key -> the line that declares it
  std::vector<WorkloadInfo> fresh;
  for (size_t i = 0; i < data.workloads.size(); ++i) {
    const WorkloadInfo& w = data.workloads[i];
    const int64_t line = data.workload_lines[i];
    first_line.emplace(w.key, line);
    if (std::optional<WorkloadInfo> stored = db.workload(w.key)) {
      const bool same = stored->name == w.name && stored->op == w.op &&
                        std::abs(stored->flop_count - w.flop_count) <=
                            1e-9 * std::max(std::abs(stored->flop_count), 1.0);
      if (!same)
        fail(line, "workload '" + w.key + "' differs from the one the database holds (name '" +
                       stored->name + "', operator '" + stored->op + "', " +
                       std::to_string(stored->flop_count) + " FLOP)");
    } else {
      fresh.push_back(w);
    }
  }
  for (size_t i = 0; i < data.records.size(); ++i) {
    const std::string& key = data.records[i].workload_key;
    auto declared = first_line.find(key);
    const bool before = declared != first_line.end() && declared->second < data.record_lines[i];
    if (!before && !db.workload(key))
      fail(data.record_lines[i], "record of unknown workload '" + key +
                                     "' (its workload line must come first, or be in the "
                                     "database)");
  }
  ImportSummary summary;
  summary.workloads = static_cast<int64_t>(data.workloads.size());
  summary.skipped = db.merge(fresh, data.records);
  summary.imported = static_cast<int64_t>(data.records.size()) - summary.skipped;
  return summary;
}

ImportSummary import_jsonl(Database& db, std::istream& in, const std::string& name) {
  return import_jsonl(db, read_jsonl(in, name));
}

}  // namespace tensortune::database

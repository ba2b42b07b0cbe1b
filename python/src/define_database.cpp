// SPDX-License-Identifier: Apache-2.0
// The tuning database from Python: records, workloads and statistics as plain dicts (wrapped in
// dataclasses by tensortune/database.py), export and import as JSON lines.
#include "bindings.h"
#include "tensortune/database/database.h"
#include "tensortune/database/jsonl_io.h"
#include "tensortune/support/error.h"
#include "tensortune/support/file.h"
#include "tensortune/target/target.h"

#include <fstream>
#include <memory>
#include <pybind11/stl.h>
#include <sstream>

namespace tensortune::python {
namespace {

py::list record_list(const std::vector<database::Record>& records) {
  py::list out;
  for (const database::Record& r : records) {
    out.append(record_dict(r));
  }
  return out;
}

py::dict workload_dict(const database::WorkloadInfo& w) {
  py::dict d;
  d["key"] = w.key;
  d["name"] = w.name;
  d["canonical_text"] = w.canonical_text;
  d["flops"] = w.flop_count;
  d["op"] = w.op;
  d["spec"] = w.spec;
  return d;
}

/// The database and its path, shared by the Python object.
class PyDatabase {
 public:
  PyDatabase(const std::string& path, bool read_only)
      : db_(database::Database::open(path, read_only)) {}

  /// The target identities whose canonical target string is `target` as written ("" = all), as
  /// `tensortune db best --target` selects them.
  std::vector<database::TargetKey> targets(const std::string& target) const {
    const std::string wanted = target.empty() ? "" : target::Target::parse(target).to_string();
    std::vector<database::TargetKey> out;
    for (const database::TargetKey& t : db_.targets()) {
      if (wanted.empty() || t.target == wanted) {
        out.push_back(t);
      }
    }
    return out;
  }

  py::list best(const std::string& key, const std::string& target, int64_t k) const {
    TT_USER_CHECK(k >= 1) << "best: k must be at least 1, got " << k;
    std::vector<database::Record> all;
    for (const database::TargetKey& t : targets(target)) {
      for (database::Record& r : db_.best(key, t, k)) {
        all.push_back(std::move(r));
      }
    }
    return record_list(all);
  }

  py::list history(const std::string& key, const std::string& target) const {
    std::vector<database::Record> all;
    for (const database::TargetKey& t : targets(target)) {
      for (database::Record& r : db_.history(key, t)) {
        all.push_back(std::move(r));
      }
    }
    return record_list(all);
  }

  py::list stats() const {
    py::list out;
    for (const database::WorkloadStats& s : db_.stats()) {
      py::dict d;
      d["workload_key"] = s.workload_key;
      d["workload"] = s.workload_name;
      d["target"] = s.target.target;
      d["fingerprint"] = s.target.fingerprint;
      d["records"] = s.records;
      d["ok"] = s.ok;
      py::dict by_status;
      for (const auto& [status, count] : s.by_status) {
        by_status[py::str(status)] = count;
      }
      d["by_status"] = by_status;
      d["best_seconds"] = s.best_seconds;
      d["best_gflops"] = s.best_seconds > 0 ? s.flop_count / s.best_seconds / 1e9 : 0.0;
      d["best_record_id"] = s.best_record_id;
      d["best_confirmed"] = s.best_confirmed;
      out.append(d);
    }
    return out;
  }

  py::list workloads() const {
    py::list out;
    for (const database::WorkloadInfo& w : db_.workloads()) {
      out.append(workload_dict(w));
    }
    return out;
  }

  py::list records() const { return record_list(db_.all_records()); }

  int64_t export_jsonl(const std::string& path) const {
    TT_USER_CHECK(path != db_.path()) << "db export: '" << path << "' is the database itself";
    std::ostringstream out;
    const int64_t lines = database::export_jsonl(db_, out);
    support::write_file_atomically(path, out.str(), "db export");
    return lines;
  }

  py::dict import_jsonl(const std::string& path) {
    support::check_regular_file(path, support::kMaxImportFileBytes, "db import: file");
    std::ifstream in(path);
    TT_USER_CHECK(in.good()) << "db import: cannot read '" << path << "'";
    const database::ImportSummary s = database::import_jsonl(db_, in, path);
    py::dict d;
    d["workloads"] = s.workloads;
    d["imported"] = s.imported;
    d["skipped"] = s.skipped;
    return d;
  }

  const database::Database& db() const { return db_; }

 private:
  database::Database db_;
};

}  // namespace

py::dict record_dict(const database::Record& r) {
  py::dict d;
  d["id"] = r.id;
  d["workload_key"] = r.workload_key;
  d["target"] = r.target.target;
  d["fingerprint"] = r.target.fingerprint;
  d["schedule"] = r.schedule;
  d["knobs"] = r.knobs;
  d["status"] = r.status;
  d["error"] = r.error;
  d["repeats"] = r.repeats;
  // The one time every surface shows (Record::seconds): confirmed where measured side by side.
  d["seconds"] = r.seconds();
  d["confirmed"] = r.confirmed();
  d["median_seconds"] = r.median_seconds;
  d["build_seconds"] = r.build_seconds;
  d["run_seconds"] = r.run_seconds;
  d["wall_seconds"] = r.wall_seconds;
  d["seed"] = r.seed;
  d["tool_version"] = r.tool_version;
  d["git_revision"] = r.git_revision;
  d["timestamp"] = r.timestamp;
  d["run_id"] = r.run_id;
  d["confirmed_seconds"] = r.confirmed_seconds;
  d["rank_seconds"] = r.rank_seconds;
  d["confirm_error"] = r.confirm_error;
  return d;
}

void define_database(py::module_& m) {
  py::class_<PyDatabase>(m, "_Database")
      .def(py::init<const std::string&, bool>(), py::arg("path"), py::arg("read_only"))
      .def_property_readonly("path", [](const PyDatabase& d) { return d.db().path(); })
      .def_property_readonly("schema_version",
                             [](const PyDatabase& d) { return d.db().schema_version(); })
      .def("best", &PyDatabase::best)
      .def("history", &PyDatabase::history)
      .def("stats", &PyDatabase::stats)
      .def("workloads", &PyDatabase::workloads)
      .def("records", &PyDatabase::records)
      .def("count", [](const PyDatabase& d) { return d.db().count_records(); })
      .def("export_jsonl", &PyDatabase::export_jsonl)
      .def("import_jsonl", &PyDatabase::import_jsonl);
}

}  // namespace tensortune::python

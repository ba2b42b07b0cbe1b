// SPDX-License-Identifier: Apache-2.0
// JSON-lines export/import: a sorted, stable export; an exact round trip; re-imports skip what is
// present; and every malformed case stops the import with its line number, writing nothing.
#include "database/record_rows.h"
#include "db_test_util.h"
#include "tensortune/database/jsonl_io.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <sstream>

namespace tensortune::database {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

/// A database with two workloads, two targets and a mix of statuses.
void fill_db(Database& db) {
  WorkloadInfo a = workload("matmul", 64);
  WorkloadInfo b = workload("conv2d", 8);
  db.put_workload(a);
  db.put_workload(b);
  Record odd = record(a, cpu(), 3, 1.0 / 3.0);  // not exactly representable in decimal
  odd.error = "line one\nline \"two\" \t with \\ escapes";
  const std::vector<int64_t> ids =
      db.add_records({record(b, cpu("other"), 2, 5e-4), record(a, cpu(), 1, 2e-3),
                      record(a, cpu(), 2, 0, "WrongResult"), odd});
  db.confirm({ids[1], ids[3]}, {2.2e-3, 0.3}, 1700000100);  // travels with its records
}

std::string export_text(const Database& db) {
  std::ostringstream out;
  export_jsonl(db, out);
  return out.str();
}

TEST(Jsonl, ExportIsSortedStableAndRoundTripsExactly) {
  TestDb dir("jsonl");
  Database db = Database::open(dir.where("a"));
  fill_db(db);
  std::string first = export_text(db);
  EXPECT_EQ(first, export_text(db));
  // Workloads first, by key; every line a compact JSON object with sorted keys.
  EXPECT_EQ(first.rfind("{\"canonical_text\":\"compute conv2d_8x8_float32\"", 0), 0U) << first;
  EXPECT_EQ(std::count(first.begin(), first.end(), '\n'), 2 + 4);

  Database copy = Database::open(dir.where("b"));
  std::istringstream in(first);
  ImportSummary s = import_jsonl(copy, in, "export.jsonl");
  EXPECT_EQ(s.workloads, 2);
  EXPECT_EQ(s.imported, 4);
  EXPECT_EQ(s.skipped, 0);
  EXPECT_EQ(export_text(copy), first);
  const Record best = copy.best(workload("matmul", 64).key, cpu(), 1)[0];
  EXPECT_DOUBLE_EQ(best.median_seconds, 2e-3);
  EXPECT_DOUBLE_EQ(best.confirmed_seconds, 2.2e-3);
  EXPECT_NE(first.find("\"rank_seconds\":"), std::string::npos);

  std::istringstream again(first);
  ImportSummary twice = import_jsonl(copy, again, "export.jsonl");
  EXPECT_EQ(twice.imported, 0);
  EXPECT_EQ(twice.skipped, 4);
  EXPECT_EQ(copy.count_records(), 4);
}

TEST(Jsonl, EveryMalformedCaseFailsWithItsLineAndImportsNothing) {
  TestDb dir("malformed");
  Database source = Database::open(dir.where("a"));
  fill_db(source);
  std::string good = export_text(source);
  std::string workload_line = good.substr(0, good.find('\n') + 1);
  std::string matmul_line = good.substr(good.find('\n') + 1);
  matmul_line = matmul_line.substr(0, matmul_line.find('\n') + 1);
  std::string record_line = good.substr(good.rfind('\n', good.size() - 2) + 1);
  auto replace = [](std::string s, const std::string& from, const std::string& to) {
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  struct Case {
    std::string name, text, message;
  };
  std::string head = workload_line + matmul_line;
  std::vector<Case> cases = {
      {"bad JSON", head + "{\"kind\":\"record\",\n", "t.jsonl:3:"},
      {"missing field", head + replace(record_line, "\"seed\":7,", ""), "'seed'"},
      {"unknown format", head + replace(record_line, "\"format\":1", "\"format\":7"),
       "format version 7 is not supported"},
      {"wrong type", head + replace(record_line, "\"seed\":7", "\"seed\":\"seven\""),
       "field 'seed'"},
      {"unknown status", head + replace(record_line, "\"status\":\"Ok\"", "\"status\":\"Fast\""),
       "unknown status 'Fast'"},
      {"unknown workload", record_line, "record of unknown workload"},
      {"negative confirmation",
       head + replace(record_line, "\"rank_seconds\":", "\"rank_seconds\":-"),
       "a confirmation needs"},
      {"unknown kind", head + "{\"format\":1,\"kind\":\"model\"}\n", "unknown kind 'model'"},
      {"not an object", head + "[1,2]\n", "must be a JSON object"},
  };
  for (const Case& c : cases) {
    Database db = Database::open(dir.where("target"));
    int64_t before = db.count_records();
    std::istringstream in(c.text);
    try {
      import_jsonl(db, in, "t.jsonl");
      ADD_FAILURE() << c.name << ": accepted";
    } catch (const UserError& e) {
      std::string message = e.what();
      EXPECT_EQ(message.rfind("t.jsonl:", 0), 0U) << c.name << ": " << message;
      EXPECT_NE(message.find(c.message), std::string::npos) << c.name << ": " << message;
      EXPECT_NE(message.find("nothing was imported"), std::string::npos) << message;
    }
    EXPECT_EQ(db.count_records(), before) << c.name;
    EXPECT_TRUE(db.workloads().empty()) << c.name;
  }
}

/// SQLite's plan of `sql` on the database at `path`, its details joined by "; ".
std::string query_plan(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, ("EXPLAIN QUERY PLAN " + sql).c_str(), -1, &st, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  std::string plan;
  while (sqlite3_step(st) == SQLITE_ROW)
    plan += std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 3))) + "; ";
  sqlite3_finalize(st);
  sqlite3_close(db);
  return plan;
}

TEST(Jsonl, ManyRecordsOfOneScheduleImportByIndexProbes) {
  // Records that share one schedule (one configuration measured again and again, on many
  // machines) made import quadratic: each duplicate check scanned every record of the schedule.
  TestDb dir("jsonl-same");
  Database db = Database::open(dir.where("t"));
  const WorkloadInfo mm = workload("matmul", 64);
  std::vector<Record> records;
  for (int i = 0; i < 3000; ++i) {
    Record r = record(mm, cpu(), 4, 1e-3);
    r.seed = i % 1000;
    r.timestamp = 1700000000 + i / 1000;
    records.push_back(r);
  }
  records.push_back(records[1234]);  // the same measurement twice in one file: stored once
  std::stringstream lines;
  {
    TestDb source_dir("jsonl-same-source");
    Database source = Database::open(source_dir.where("t"));
    source.put_workload(mm);
    source.add_records(records);
    export_jsonl(source, lines);
  }
  const ImportSummary first = import_jsonl(db, lines, "same.jsonl");
  EXPECT_EQ(first.imported, 3000);
  EXPECT_EQ(first.skipped, 1);
  EXPECT_EQ(db.count_records(), 3000);
  lines.clear();
  lines.seekg(0);
  const ImportSummary again = import_jsonl(db, lines, "same.jsonl");
  EXPECT_EQ(again.imported, 0);
  EXPECT_EQ(again.skipped, 3001);
  // The duplicate check is one probe of an index on all five columns of a record's identity,
  // whatever the number of records sharing the schedule (SQLite's plan; PostgreSQL has the same
  // index, and its planner picks it for a selective probe).
  if (is_server_url(dir.where("t")))
    return;
  const std::string plan = query_plan(dir.where("t"), detail::kSameRecord);
  EXPECT_NE(plan.find("INDEX records_by_identity (workload_id=? AND target_id=? AND schedule=? "
                      "AND seed=? AND timestamp=?)"),
            std::string::npos)
      << plan;
}

}  // namespace
}  // namespace tensortune::database

// SPDX-License-Identifier: Apache-2.0
// Integrity and schema checks before writing (see checks.h).
#include "database/checks.h"

#include "database/schema.h"
#include "tensortune/support/error.h"

#include <sqlite3.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace tensortune::database::detail {
namespace {

constexpr const char* kAdvice =
    "; nothing was written. Restore a copy, or try 'tensortune db export' to rescue what "
    "still reads";

/// The tables of `conn` and their columns.
std::vector<std::pair<std::string, std::set<std::string>>> tables(Connection& conn) {
  std::vector<std::pair<std::string, std::set<std::string>>> out;
  if (conn.dialect() == Dialect::Postgres) {
    Statement st(conn,
                 "SELECT table_name, column_name FROM information_schema.columns WHERE "
                 "table_schema = current_schema() ORDER BY table_name");
    while (st.step()) {
      if (out.empty() || out.back().first != st.get_text(0))
        out.emplace_back(st.get_text(0), std::set<std::string>{});
      out.back().second.insert(st.get_text(1));
    }
    return out;
  }
  {
    Statement names(conn,
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                    "'sqlite_%' ORDER BY name");
    while (names.step())
      out.emplace_back(names.get_text(0), std::set<std::string>{});
  }
  for (auto& [name, columns] : out) {
    Statement info(conn, "SELECT name FROM pragma_table_info('" + name + "')");
    while (info.step())
      columns.insert(info.get_text(0));
  }
  return out;
}

}  // namespace

void check_integrity(Connection& conn, bool thorough) {
  sqlite3* db = conn.sqlite_handle();
  if (db == nullptr)
    return;
  const std::string& path = conn.name();
  // A damaged page can fail the pragma itself (SQLITE_CORRUPT) instead of making it report.
  const char* sql = thorough ? "PRAGMA integrity_check(5)" : "PRAGMA quick_check(5)";
  sqlite3_stmt* st = nullptr;
  std::string findings;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, nullptr);
  while (rc == SQLITE_OK || rc == SQLITE_ROW) {
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW)
      break;
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    std::string line = text != nullptr ? text : "";
    std::replace(line.begin(), line.end(), '\n', ' ');
    const std::string banner = "*** in database main *** ";
    if (line.rfind(banner, 0) == 0)
      line = line.substr(banner.size());
    if (line != "ok")
      findings += (findings.empty() ? "" : "; ") + line;
  }
  if (rc != SQLITE_DONE && findings.empty())
    findings = sqlite3_errmsg(db);
  sqlite3_finalize(st);
  if (findings.size() > 300)  // the first findings name the damage; the rest is its echo
    findings = findings.substr(0, 300) + "...";
  TT_USER_CHECK(findings.empty()) << "database '" << path << "' is damaged (SQLite's "
                                  << (thorough ? "integrity_check" : "quick_check")
                                  << " says: " << findings << ")" << kAdvice;
}

void check_schema(Connection& conn) {
  // The expected schema is what the migrations build in an empty database: no second list to
  // keep in step with them.
  const std::unique_ptr<Connection> expected = open_sqlite(":memory:", false);
  migrate(*expected, schema_version_count());
  const auto want = tables(*expected);
  const auto have = tables(conn);
  const std::string& path = conn.name();
  for (const auto& [name, columns] : want) {
    auto it =
        std::find_if(have.begin(), have.end(), [&](const auto& t) { return t.first == name; });
    TT_USER_CHECK(it != have.end())
        << "database '" << path << "' has no table '" << name << "', which schema version "
        << schema_version_count() << " has" << kAdvice;
    for (const std::string& column : columns) {
      TT_USER_CHECK(it->second.count(column) != 0)
          << "database '" << path << "': table '" << name << "' has no column '" << column
          << "', which schema version " << schema_version_count() << " has" << kAdvice;
    }
  }
}

}  // namespace tensortune::database::detail

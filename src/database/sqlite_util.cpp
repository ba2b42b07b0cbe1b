// SPDX-License-Identifier: Apache-2.0
// Statement and Transaction over the SQLite C API (see sqlite_util.h).
#include "database/sqlite_util.h"

#include "database/schema.h"

#include <string>

namespace tensortune::database::detail {

namespace {

/// The start of a statement, for messages: a whole query is hundreds of characters of SQL that
/// bury the one line that matters.
std::string brief(const std::string& sql) {
  constexpr size_t kShown = 48;
  std::string text;
  for (char c : sql.substr(0, kShown)) {
    if (c == '\n' || c == ' ') {
      if (!text.empty() && text.back() != ' ')
        text += ' ';
    } else {
      text += c;
    }
  }
  return sql.size() > kShown ? text + "..." : text;
}

std::string file_of(sqlite3* db) {
  const char* file = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
  return file != nullptr ? file : "?";
}

}  // namespace

void check(sqlite3* db, int rc, const char* what) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) {
    return;
  }
  throw UserError("database '" + file_of(db) + "': " + brief(what) + ": " +
                  (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
}

void exec(sqlite3* db, const std::string& sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string text = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw UserError("database '" + file_of(db) + "': " + text + " (in: " + brief(sql) + ")");
  }
}

Statement::Statement(sqlite3* db, const char* sql) : db_(db), sql_(sql) {
  const int rc = sqlite3_prepare_v2(db_, sql, -1, &stmt_, nullptr);
  const std::string message = rc == SQLITE_OK ? "" : sqlite3_errmsg(db_);
  // A query of this tensortune that does not prepare names a table or column the file lacks
  // ("no such column: r.knobs"): that, not the query, is what the user needs to read.
  if (message.rfind("no such table", 0) == 0 || message.rfind("no such column", 0) == 0) {
    throw UserError("database '" + file_of(db_) + "' does not have the tables of schema version " +
                    std::to_string(schema_version_count()) + " it claims: " + message +
                    " (the file was changed by another program)");
  }
  check(db_, rc, sql);
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Statement& Statement::bind(int index, int64_t value) {
  check(db_, sqlite3_bind_int64(stmt_, index, value), sql_);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  check(db_, sqlite3_bind_double(stmt_, index, value), sql_);
  return *this;
}

Statement& Statement::bind(int index, const std::string& value) {
  check(db_,
        sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                          SQLITE_TRANSIENT),
        sql_);
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  check(db_, rc, sql_);
  return rc == SQLITE_ROW;
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::get_int(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::get_double(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::get_text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  int bytes = sqlite3_column_bytes(stmt_, column);
  return text == nullptr
             ? std::string()
             : std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(bytes));
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

Transaction::Transaction(sqlite3* db) : db_(db) {
  exec(db_, "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (!done_) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

void Transaction::commit() {
  exec(db_, "COMMIT");
  done_ = true;
}

}  // namespace tensortune::database::detail

// SPDX-License-Identifier: Apache-2.0
// Statement and Transaction over the SQLite C API (see sqlite_util.h).
#include "database/sqlite_util.h"

namespace tensortune::database::detail {

void check(sqlite3* db, int rc, const char* what) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) {
    return;
  }
  const char* file = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
  throw UserError(std::string("database '") + (file != nullptr ? file : "?") + "': " + what +
                  ": " + (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
}

void exec(sqlite3* db, const std::string& sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string text = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw UserError("database: " + text + " (in: " + sql.substr(0, 80) + ")");
  }
}

Statement::Statement(sqlite3* db, const char* sql) : db_(db), sql_(sql) {
  check(db_, sqlite3_prepare_v2(db_, sql, -1, &stmt_, nullptr), sql);
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
  return text == nullptr ? std::string()
                         : std::string(reinterpret_cast<const char*>(text),
                                       static_cast<size_t>(bytes));
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

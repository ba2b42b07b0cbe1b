// SPDX-License-Identifier: Apache-2.0
// Private to src/database: a prepared statement with RAII, typed binds and column reads, and
// errors that name the SQL and SQLite's message.
#pragma once

#include "tensortune/support/error.h"

#include <cstdint>
#include <sqlite3.h>
#include <string>

namespace tensortune::database::detail {

/// Throws UserError "database 'PATH': WHAT: <sqlite message>" unless rc is one of the ok codes.
void check(sqlite3* db, int rc, const char* what);

/// Runs one or more statements without results.
void exec(sqlite3* db, const std::string& sql);

class Statement {
 public:
  Statement(sqlite3* db, const char* sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, const std::string& value);
  /// Advances; true while a row is available.
  bool step();
  /// Runs to completion (for statements without rows).
  void run();
  void reset();

  int64_t get_int(int column) const;
  double get_double(int column) const;
  std::string get_text(int column) const;
  bool is_null(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  const char* sql_;
};

/// BEGIN IMMEDIATE ... COMMIT, rolled back when destroyed without commit().
class Transaction {
 public:
  explicit Transaction(sqlite3* db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  sqlite3* db_;
  bool done_ = false;
};

}  // namespace tensortune::database::detail

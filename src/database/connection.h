// SPDX-License-Identifier: Apache-2.0
// Private to src/database: one connection to a tuning database, on either backend (an SQLite file
// or a PostgreSQL server), with RAII statements and write transactions over it. The queries are
// written once, in the SQL both engines accept; a connection translates what must differ
// (placeholders) and reports errors that name the database and the statement.
#pragma once

#include "tensortune/support/error.h"

#include <cstdint>
#include <memory>
#include <string>

struct sqlite3;

namespace tensortune::database::detail {

enum class Dialect { SQLite, Postgres };

/// A statement prepared on a connection: binds (1-based), then steps through its rows.
class Cursor {
 public:
  virtual ~Cursor() = default;
  virtual void bind_int(int index, int64_t value) = 0;
  virtual void bind_double(int index, double value) = 0;
  virtual void bind_text(int index, const std::string& value) = 0;
  /// Runs the statement on the first call after a reset; true while a row is available.
  virtual bool step() = 0;
  /// Ends the current run and clears the binds.
  virtual void reset() = 0;
  virtual int64_t get_int(int column) const = 0;
  virtual double get_double(int column) const = 0;
  virtual std::string get_text(int column) const = 0;
  virtual bool is_null(int column) const = 0;
};

/// A connection failed (the server restarted, the network went down) before the statement or
/// transaction that throws it reached the database: nothing of it was applied, so it may be
/// retried once the connection is back.
class ConnectionLost : public UserError {
 public:
  using UserError::UserError;
};

/// The server aborted the transaction to resolve a conflict with another one (a deadlock, a
/// serialization failure): nothing of it was applied, so it may be run again.
class TransactionConflict : public UserError {
 public:
  using UserError::UserError;
};

class Connection {
 public:
  virtual ~Connection() = default;
  virtual Dialect dialect() const = 0;
  /// The database as messages name it: a file path, or a URL without its password.
  const std::string& name() const { return name_; }
  virtual std::unique_ptr<Cursor> prepare(const std::string& sql) = 0;
  /// Runs one or more statements without parameters or results.
  virtual void exec(const std::string& sql) = 0;
  /// Starts a write transaction. Exclusive ones run one at a time, as SQLite's BEGIN IMMEDIATE
  /// makes them, so that reads inside one see no other writer's work. A shared one (the queue's
  /// claims and completions, which lock the rows they change) runs beside others on PostgreSQL.
  virtual void begin(bool exclusive = true) = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;
  /// Rows inserted, updated or deleted by the last statement run.
  virtual int64_t changes() const = 0;
  /// Sends `channel` a notification when the current transaction commits (PostgreSQL NOTIFY;
  /// nothing on SQLite).
  virtual void notify(const std::string& channel) = 0;
  /// Waits up to `seconds` for a notification on `channel` (listening from the first call on);
  /// true when one came. SQLite, which has none, sleeps and returns false.
  virtual bool wait_notify(const std::string& channel, double seconds) = 0;
  /// The SQLite handle, or nullptr on another backend (for the file checks only SQLite needs).
  virtual sqlite3* sqlite_handle() { return nullptr; }

 protected:
  explicit Connection(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

/// True for "postgresql://..." and "postgres://..." (the URLs libpq takes).
bool is_postgres_url(const std::string& where);

/// Opens an SQLite file (see Database::open for the checks); the schema is not touched.
std::unique_ptr<Connection> open_sqlite(const std::string& path, bool read_only);
/// Connects to a PostgreSQL server; the schema is not touched. `read_only` makes every
/// transaction of the session read-only.
std::unique_ptr<Connection> open_postgres(const std::string& url, bool read_only);

/// `url` with its password left out (user:secret@ -> user@, password=... -> password=***).
std::string redact_url(const std::string& url);

/// The start of a statement, for messages: a whole query is hundreds of characters of SQL that
/// bury the one line that matters.
std::string brief_sql(const std::string& sql);

/// A statement with typed binds and column reads over Cursor.
class Statement {
 public:
  Statement(Connection& conn, const std::string& sql) : cursor_(conn.prepare(sql)) {}

  Statement& bind(int index, int64_t value) {
    cursor_->bind_int(index, value);
    return *this;
  }
  Statement& bind(int index, double value) {
    cursor_->bind_double(index, value);
    return *this;
  }
  Statement& bind(int index, const std::string& value) {
    cursor_->bind_text(index, value);
    return *this;
  }
  bool step() { return cursor_->step(); }
  /// Runs to completion (for statements without rows).
  void run() {
    while (step()) {
    }
  }
  void reset() { cursor_->reset(); }
  int64_t get_int(int column) const { return cursor_->get_int(column); }
  double get_double(int column) const { return cursor_->get_double(column); }
  std::string get_text(int column) const { return cursor_->get_text(column); }
  bool is_null(int column) const { return cursor_->is_null(column); }

 private:
  std::unique_ptr<Cursor> cursor_;
};

inline void exec(Connection& conn, const std::string& sql) {
  conn.exec(sql);
}

/// A write transaction, rolled back when destroyed without commit().
class Transaction {
 public:
  explicit Transaction(Connection& conn, bool exclusive = true) : conn_(conn) {
    conn_.begin(exclusive);
  }
  ~Transaction() {
    if (!done_)
      conn_.rollback();
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    done_ = true;  // a failed COMMIT has ended the transaction too
    conn_.commit();
  }

 private:
  Connection& conn_;
  bool done_ = false;
};

}  // namespace tensortune::database::detail

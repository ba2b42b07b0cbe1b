// SPDX-License-Identifier: Apache-2.0
// The SQLite backend of Connection: opening a file (WAL, busy timeout, the refusal of foreign
// files) and statements over the SQLite C API.
#include "database/connection.h"
#include "database/schema.h"

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

namespace tensortune::database::detail {

std::string brief_sql(const std::string& sql) {
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

namespace {

class SqliteConnection;

void check(sqlite3* db, const std::string& name, int rc, const std::string& what) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) {
    return;
  }
  throw UserError("database '" + name + "': " + brief_sql(what) + ": " +
                  (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
}

void exec_on(sqlite3* db, const std::string& name, const std::string& sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string text = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw UserError("database '" + name + "': " + text + " (in: " + brief_sql(sql) + ")");
  }
}

class SqliteCursor final : public Cursor {
 public:
  SqliteCursor(sqlite3* db, const std::string& name, const std::string& sql)
      : db_(db), name_(name), sql_(sql) {
    const int rc = sqlite3_prepare_v2(db_, sql_.c_str(), -1, &stmt_, nullptr);
    const std::string message = rc == SQLITE_OK ? "" : sqlite3_errmsg(db_);
    // A query of this tensortune that does not prepare names a table or column the file lacks
    // ("no such column: r.knobs"): that, not the query, is what the user needs to read.
    if (message.rfind("no such table", 0) == 0 || message.rfind("no such column", 0) == 0) {
      throw UserError("database '" + name_ + "' does not have the tables of schema version " +
                      std::to_string(schema_version_count()) + " it claims: " + message +
                      " (the file was changed by another program)");
    }
    check(db_, name_, rc, sql_);
  }
  ~SqliteCursor() override { sqlite3_finalize(stmt_); }
  SqliteCursor(const SqliteCursor&) = delete;
  SqliteCursor& operator=(const SqliteCursor&) = delete;

  void bind_int(int index, int64_t value) override {
    check(db_, name_, sqlite3_bind_int64(stmt_, index, value), sql_);
  }
  void bind_double(int index, double value) override {
    check(db_, name_, sqlite3_bind_double(stmt_, index, value), sql_);
  }
  void bind_text(int index, const std::string& value) override {
    check(db_, name_,
          sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                            SQLITE_TRANSIENT),
          sql_);
  }
  bool step() override {
    int rc = sqlite3_step(stmt_);
    check(db_, name_, rc, sql_);
    return rc == SQLITE_ROW;
  }
  void reset() override {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  int64_t get_int(int column) const override { return sqlite3_column_int64(stmt_, column); }
  double get_double(int column) const override { return sqlite3_column_double(stmt_, column); }
  std::string get_text(int column) const override {
    const unsigned char* text = sqlite3_column_text(stmt_, column);
    int bytes = sqlite3_column_bytes(stmt_, column);
    return text == nullptr
               ? std::string()
               : std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(bytes));
  }
  bool is_null(int column) const override {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
  }

 private:
  sqlite3* db_;
  const std::string& name_;
  std::string sql_;
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteConnection final : public Connection {
 public:
  SqliteConnection(std::string path, sqlite3* db) : Connection(std::move(path)), db_(db) {}
  ~SqliteConnection() override { sqlite3_close_v2(db_); }
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  Dialect dialect() const override { return Dialect::SQLite; }
  std::unique_ptr<Cursor> prepare(const std::string& sql) override {
    return std::make_unique<SqliteCursor>(db_, name(), sql);
  }
  void exec(const std::string& sql) override { exec_on(db_, name(), sql); }
  void begin(bool /*exclusive*/) override { exec_on(db_, name(), "BEGIN IMMEDIATE"); }
  void notify(const std::string& /*channel*/) override {}
  bool wait_notify(const std::string& /*channel*/, double seconds) override {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    return false;
  }
  void commit() override {
    try {
      exec_on(db_, name(), "COMMIT");
    } catch (...) {
      rollback();  // a failed COMMIT (busy, I/O) leaves the transaction open
      throw;
    }
  }
  void rollback() noexcept override {
    if (sqlite3_get_autocommit(db_) == 0)
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  int64_t changes() const override { return sqlite3_changes(db_); }
  sqlite3* sqlite_handle() override { return db_; }

 private:
  sqlite3* db_;
};

/// Switches the connection to WAL. Processes that create one database at once race here: one
/// that read the empty file before another switched it asks for the exclusive lock while the
/// other's WAL connection holds a shared one, and SQLite answers SQLITE_BUSY at once, without
/// running the busy handler. The next try reads the header again and finds WAL already set, so
/// busy answers are retried for as long as the busy timeout would have waited.
void enable_wal(sqlite3* db, const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    int rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
    if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline) {
      TT_USER_CHECK(rc == SQLITE_OK)
          << "database '" << path << "': cannot switch to WAL mode: " << sqlite3_errmsg(db);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

/// `path` as an SQLite URI that opens it immutable (no locks, no -shm file).
std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      static const char* const kHex = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[(static_cast<unsigned char>(c) >> 4) & 0xF];
      uri += kHex[static_cast<unsigned char>(c) & 0xF];
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}

std::unique_ptr<Connection> connect(const std::string& path, bool read_only, bool immutable) {
  TT_USER_CHECK(!path.empty()) << "database: no path given";
  // SQLite says only "disk I/O error" (or "unable to open") for a folder.
  TT_USER_CHECK(!std::filesystem::is_directory(path))
      << "database '" << path << "' is a directory, not a database file";
  if (!read_only) {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) {
      std::filesystem::create_directories(parent, ec);
    }
    TT_USER_CHECK(!ec) << "database '" << path << "': cannot create directory '" << parent.string()
                       << "': " << ec.message();
  } else {
    TT_USER_CHECK(std::filesystem::exists(path)) << "database '" << path << "' does not exist";
  }
  sqlite3* db = nullptr;
  int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const std::string uri = immutable ? immutable_uri(path) : path;
  int rc = sqlite3_open_v2(
      uri.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX | (immutable ? SQLITE_OPEN_URI : 0), nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    throw UserError("database '" + path + "': cannot open: " + message);
  }
  auto conn = std::make_unique<SqliteConnection>(path, db);
  sqlite3_busy_timeout(db, 60000);
  conn->exec("PRAGMA foreign_keys = ON");
  // Reading the schema fails here, clearly, when the file is not an SQLite database.
  int64_t tables = 0;
  {
    Statement count(*conn, "SELECT count(*) FROM sqlite_master");
    count.step();
    tables = count.get_int(0);
  }  // finalized: no read transaction stays open
  int version = stored_version(*conn);
  TT_USER_CHECK(version > 0 || tables == 0)
      << "database '" << path << "' is an SQLite file but not a tensortune database";
  TT_USER_CHECK(version <= schema_version_count())
      << "database '" << path << "' has schema version " << version
      << ", newer than this tensortune understands (" << schema_version_count()
      << "); upgrade tensortune";
  if (!read_only) {
    // WAL: readers never block the writer, and a killed writer loses at most its open
    // transaction. synchronous=NORMAL is durable across process crashes in WAL mode.
    enable_wal(db, path);
    conn->exec("PRAGMA synchronous = NORMAL");
  }
  return conn;
}

}  // namespace

/// Opens the file and sets the connection up; the schema is not touched. A WAL database read
/// from a folder this process cannot write (a read-only mount, another user's folder) cannot
/// get the -shm file an SQLite reader needs, so a reader that fails there and finds no -wal
/// file with content opens it immutable instead: nothing there can be written by this process,
/// and a writer elsewhere would have created the -shm file, which the first try would use.
std::unique_ptr<Connection> open_sqlite(const std::string& path, bool read_only) {
  try {
    return connect(path, read_only, false);
  } catch (const UserError&) {
    std::error_code ec;
    const auto wal = std::filesystem::file_size(path + "-wal", ec);
    if (!read_only || (!ec && wal > 0) || !std::filesystem::is_regular_file(path, ec))
      throw;
    try {
      return connect(path, true, true);
    } catch (const UserError&) {
    }
    throw;  // the first error is the one to show
  }
}

}  // namespace tensortune::database::detail

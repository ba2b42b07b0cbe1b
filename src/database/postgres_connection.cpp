// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL backend of Connection, over libpq: statements run with text parameters, write
// transactions take one advisory lock (SQLite's single writer, which the queries assume), and
// a connection lost outside a transaction is re-established and the statement run again.
#include "database/connection.h"
#include "database/schema.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <libpq-fe.h>
#include <optional>
#include <set>
#include <string>
#include <sys/select.h>
#include <thread>
#include <vector>

namespace tensortune::database::detail {

bool is_postgres_url(const std::string& where) {
  return where.rfind("postgresql://", 0) == 0 || where.rfind("postgres://", 0) == 0;
}

std::string redact_url(const std::string& url) {
  std::string out = url;
  // user:password@host -> user@host (only in the authority, before the first '/' after "//").
  const size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    const size_t start = scheme + 3;
    size_t end = out.find_first_of("/?", start);
    if (end == std::string::npos)
      end = out.size();
    const size_t at = out.rfind('@', end);
    if (at != std::string::npos && at >= start) {
      const size_t colon = out.find(':', start);
      if (colon != std::string::npos && colon < at)
        out.erase(colon, at - colon);
    }
  }
  // ?password=secret&... -> ?password=***&...
  for (size_t p = out.find("password="); p != std::string::npos; p = out.find("password=", p + 1)) {
    const size_t value = p + 9;
    const size_t end = out.find('&', value);
    out.replace(value, (end == std::string::npos ? out.size() : end) - value, "***");
  }
  return out;
}

namespace {

/// The advisory lock every write transaction takes ("tens" in ASCII).
constexpr int64_t kWriterLock = 0x74656e73;
/// How long a lost connection is tried again before the error reaches the caller: a server
/// restart takes seconds.
constexpr int kReconnectSeconds = 60;

std::string trimmed(const char* message) {
  std::string s = message != nullptr ? message : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

/// SQL written with SQLite's '?' placeholders, with PostgreSQL's $1, $2, ... instead (outside
/// quoted strings and identifiers).
std::string numbered_placeholders(const std::string& sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int next = 0;
  char quote = 0;
  for (char c : sql) {
    if (quote != 0) {
      if (c == quote)
        quote = 0;
      out += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      out += c;
    } else if (c == '?') {
      out += '$' + std::to_string(++next);
    } else {
      out += c;
    }
  }
  return out;
}

void ignore_notice(void* /*arg*/, const char* /*message*/) {}

class PgConnection;

class PgCursor final : public Cursor {
 public:
  PgCursor(PgConnection& conn, const std::string& sql)
      : conn_(conn), sql_(numbered_placeholders(sql)), brief_(brief_sql(sql)) {}
  ~PgCursor() override { PQclear(result_); }
  PgCursor(const PgCursor&) = delete;
  PgCursor& operator=(const PgCursor&) = delete;

  void bind_int(int index, int64_t value) override { set(index, std::to_string(value)); }
  void bind_double(int index, double value) override {
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", value);
    std::string s = text;
    if (s == "inf")
      s = "Infinity";
    else if (s == "-inf")
      s = "-Infinity";
    else if (s == "nan" || s == "-nan")
      s = "NaN";
    set(index, s);
  }
  void bind_text(int index, const std::string& value) override {
    TT_USER_CHECK(value.find('\0') == std::string::npos)
        << "database: PostgreSQL text cannot hold a NUL character (in " << brief_ << ")";
    set(index, value);
  }
  bool step() override;
  void reset() override {
    PQclear(result_);
    result_ = nullptr;
    row_ = -1;
    params_.clear();
  }
  int64_t get_int(int column) const override {
    return std::strtoll(PQgetvalue(result_, row_, column), nullptr, 10);
  }
  double get_double(int column) const override {
    return std::strtod(PQgetvalue(result_, row_, column), nullptr);
  }
  std::string get_text(int column) const override {
    return std::string(PQgetvalue(result_, row_, column),
                       static_cast<size_t>(PQgetlength(result_, row_, column)));
  }
  bool is_null(int column) const override { return PQgetisnull(result_, row_, column) != 0; }

 private:
  void set(int index, std::string value) {
    TT_CHECK(index >= 1) << "database: parameter index " << index;
    if (params_.size() < static_cast<size_t>(index))
      params_.resize(static_cast<size_t>(index));
    params_[static_cast<size_t>(index - 1)] = std::move(value);
  }

  PgConnection& conn_;
  std::string sql_;
  std::string brief_;
  std::vector<std::optional<std::string>> params_;
  PGresult* result_ = nullptr;
  int row_ = -1;
};

class PgConnection final : public Connection {
 public:
  PgConnection(const std::string& url, bool read_only)
      : Connection(redact_url(url)), url_(url), read_only_(read_only) {
    connect();
  }
  ~PgConnection() override { PQfinish(conn_); }
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  Dialect dialect() const override { return Dialect::Postgres; }
  std::unique_ptr<Cursor> prepare(const std::string& sql) override {
    return std::make_unique<PgCursor>(*this, sql);
  }
  void exec(const std::string& sql) override {
    PGresult* r = run(sql, {});
    PQclear(r);
  }
  void begin(bool exclusive) override {
    in_transaction_ = false;
    exec("BEGIN");
    in_transaction_ = true;
    if (exclusive)
      exec("SELECT pg_advisory_xact_lock(" + std::to_string(kWriterLock) + ")");
  }
  void notify(const std::string& channel) override { exec("NOTIFY " + channel); }
  bool wait_notify(const std::string& channel, double seconds) override {
    if (listening_.insert(channel).second)
      exec("LISTEN " + channel);
    const std::chrono::steady_clock::time_point deadline =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(seconds));
    for (;;) {
      PQconsumeInput(conn_);
      bool woken = false;
      while (PGnotify* n = PQnotifies(conn_)) {
        woken = woken || channel == n->relname;
        PQfreemem(n);
      }
      if (woken)
        return true;
      const std::chrono::steady_clock::duration left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero())
        return false;
      const int fd = PQsocket(conn_);
      if (fd < 0) {  // broken: the next statement reconnects
        std::this_thread::sleep_for(
            std::min<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(200)));
        return false;
      }
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(left).count();
      timeval tv{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
      fd_set fds;
      FD_ZERO(&fds);
      FD_SET(fd, &fds);
      if (::select(fd + 1, &fds, nullptr, nullptr, &tv) < 0 && errno != EINTR)
        return false;
    }
  }
  void commit() override {
    try {
      exec("COMMIT");
    } catch (const ConnectionLost& e) {
      // The server may or may not have committed: nothing may retry this blindly.
      in_transaction_ = false;
      throw UserError(std::string(e.what()) +
                      " (while committing: whether the transaction was stored is unknown)");
    } catch (...) {
      rollback();
      throw;
    }
    in_transaction_ = false;
  }
  void rollback() noexcept override {
    if (in_transaction_ && PQstatus(conn_) == CONNECTION_OK)
      PQclear(PQexec(conn_, "ROLLBACK"));
    in_transaction_ = false;
  }
  int64_t changes() const override { return changes_; }

  /// Runs `sql` with `params`; the result of a statement that succeeded. Outside a transaction
  /// a lost connection is re-established and the statement run again; inside one it throws
  /// ConnectionLost (the server has rolled the transaction back).
  PGresult* run(const std::string& sql, const std::vector<std::optional<std::string>>& params) {
    for (int attempt = 0;; ++attempt) {
      if (!in_transaction_)
        ensure_connected();
      std::vector<const char*> values;
      values.reserve(params.size());
      for (const auto& p : params)
        values.push_back(p ? p->c_str() : nullptr);
      // Without parameters, PQexec: it also runs several statements (the migrations).
      PGresult* r = params.empty()
                        ? PQexec(conn_, sql.c_str())
                        : PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                       values.data(), nullptr, nullptr, 0);
      const ExecStatusType status = PQresultStatus(r);
      if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
        const char* n = PQcmdTuples(r);
        changes_ = (n != nullptr && *n != '\0') ? std::strtoll(n, nullptr, 10) : 0;
        return r;
      }
      std::string message =
          trimmed(r != nullptr ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : nullptr);
      if (message.empty())
        message = trimmed(PQerrorMessage(conn_));
      const std::string state = r != nullptr && PQresultErrorField(r, PG_DIAG_SQLSTATE) != nullptr
                                    ? PQresultErrorField(r, PG_DIAG_SQLSTATE)
                                    : "";
      PQclear(r);
      // A query of this tensortune that names a table or column the database lacks: that, not
      // the query, is what the user needs to read.
      if (state == "40P01" || state == "40001") {
        in_transaction_ = false;
        PQclear(PQexec(conn_, "ROLLBACK"));
        throw TransactionConflict("database '" + name() + "': " + brief_sql(sql) + ": " + message);
      }
      if (state == "42P01" || state == "42703")
        throw UserError("database '" + name() + "' does not have the tables of schema version " +
                        std::to_string(schema_version_count()) + " it claims: " + message +
                        " (the database was changed by another program)");
      if (PQstatus(conn_) == CONNECTION_BAD) {
        if (in_transaction_ || attempt > 0) {
          in_transaction_ = false;
          throw ConnectionLost("database '" + name() + "': connection lost: " + message);
        }
        continue;  // not in a transaction: reconnect and run it again
      }
      throw UserError("database '" + name() + "': " + brief_sql(sql) + ": " + message);
    }
  }

 private:
  void connect() {
    // URL values override these defaults: a dead server or a cut link is noticed in seconds
    // rather than after the system's TCP timeouts (minutes).
    const char* const keys[] = {"connect_timeout",
                                "keepalives_idle",
                                "keepalives_interval",
                                "keepalives_count",
                                "tcp_user_timeout",
                                "application_name",
                                "dbname",
                                nullptr};
    const char* const values[] = {"10",    "10",         "5",          "3",
                                  "30000", "tensortune", url_.c_str(), nullptr};
    conn_ = PQconnectdbParams(keys, values, 1);
    if (PQstatus(conn_) != CONNECTION_OK) {
      std::string message = trimmed(PQerrorMessage(conn_));
      PQfinish(conn_);
      conn_ = nullptr;
      throw ConnectionLost("database '" + name() + "': cannot connect: " + message);
    }
    setup();
  }

  void setup() {
    PQsetNoticeProcessor(conn_, ignore_notice, nullptr);
    if (read_only_)
      exec("SET default_transaction_read_only = on");
    for (const std::string& channel : listening_)  // a new session listens to nothing
      exec("LISTEN " + channel);
  }

  /// Waits for the server (up to kReconnectSeconds) when the connection broke.
  void ensure_connected() {
    if (conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK)
      return;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(kReconnectSeconds);
    for (;;) {
      if (conn_ == nullptr) {
        try {
          connect();
          return;
        } catch (const ConnectionLost&) {
          if (std::chrono::steady_clock::now() > deadline)
            throw;
        }
      } else {
        PQreset(conn_);
        if (PQstatus(conn_) == CONNECTION_OK) {
          setup();
          return;
        }
        if (std::chrono::steady_clock::now() > deadline)
          throw ConnectionLost("database '" + name() +
                               "': cannot reconnect: " + trimmed(PQerrorMessage(conn_)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }

  std::string url_;
  bool read_only_;
  PGconn* conn_ = nullptr;
  bool in_transaction_ = false;
  int64_t changes_ = 0;
  std::set<std::string> listening_;
};

bool PgCursor::step() {
  if (result_ == nullptr) {
    result_ = conn_.run(sql_, params_);
    row_ = -1;
  }
  ++row_;
  return row_ < PQntuples(result_);
}

}  // namespace

std::unique_ptr<Connection> open_postgres(const std::string& url, bool read_only) {
  auto conn = std::make_unique<PgConnection>(url, read_only);
  // A database that holds other tables but not tensortune's version table is someone else's.
  Statement probe(*conn,
                  "SELECT to_regclass('tensortune_schema') IS NOT NULL, "
                  "to_regclass('records') IS NOT NULL");
  probe.step();
  const bool ours = probe.get_text(0) == "t";
  TT_USER_CHECK(ours || probe.get_text(1) != "t")
      << "database '" << conn->name() << "' has a table 'records' but is not a tensortune database";
  const int version = stored_version(*conn);
  TT_USER_CHECK(version <= schema_version_count())
      << "database '" << conn->name() << "' has schema version " << version
      << ", newer than this tensortune understands (" << schema_version_count()
      << "); upgrade tensortune";
  return conn;
}

}  // namespace tensortune::database::detail

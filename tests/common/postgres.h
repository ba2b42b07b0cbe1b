// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL server of a test run (the CTest fixture "postgres" starts it with
// scripts/pg_server.sh), and plain SQL on it the way another client would run it.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <libpq-fe.h>
#include <stdexcept>
#include <string>

namespace tensortune::test {

/// "postgresql://USER@HOST:PORT", or "" when the test runs without a server: the variable
/// TT_TEST_POSTGRES, or the url file in the folder TT_TEST_POSTGRES_STATE names (written once the
/// fixture's server runs).
inline std::string postgres_server() {
  if (const char* url = std::getenv("TT_TEST_POSTGRES"))
    return url;
  const char* state = std::getenv("TT_TEST_POSTGRES_STATE");
  if (state == nullptr)
    return "";
  std::ifstream in(std::string(state) + "/url");
  std::string url;
  std::getline(in, url);
  if (url.empty())
    throw std::runtime_error(std::string("no PostgreSQL server: ") + state +
                             "/url is missing (did the postgres.start fixture fail?)");
  return url;
}

/// The role that must give its password, and its password, as scripts/pg_server.sh creates them.
constexpr const char* kSecretRole = "tt_secret";
constexpr const char* kSecretPassword = "s3cret-Pw";

/// Runs `sql` (statements without results) on the database at `url`.
inline void exec_postgres(const std::string& url, const std::string& sql) {
  PGconn* conn = PQconnectdb(url.c_str());
  ASSERT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  PGresult* r = PQexec(conn, sql.c_str());
  EXPECT_EQ(PQresultStatus(r), PGRES_COMMAND_OK) << PQresultErrorMessage(r) << " in " << sql;
  PQclear(r);
  PQfinish(conn);
}

/// Makes `database` (a name on the server) owned by kSecretRole (which scripts/pg_server.sh
/// creates with the server: roles are shared by the tests running side by side).
inline void give_to_secret_role(const std::string& database) {
  exec_postgres(postgres_server() + "/postgres",
                "ALTER DATABASE " + database + " OWNER TO " + kSecretRole);
}

}  // namespace tensortune::test

// SPDX-License-Identifier: Apache-2.0
// What only the PostgreSQL backend has: credentials (from the URL or a password file) that never
// appear in a message, a server's database that is someone else's, a server that cannot be
// reached, and a server restarted under a writer, which reconnects and loses nothing.
#include "db_test_util.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sys/stat.h>
#include <thread>

namespace tensortune::database {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

#define TT_POSTGRES_ONLY()                                           \
  do {                                                               \
    if (postgres_server().empty())                                   \
      GTEST_SKIP() << "runs in the PostgreSQL variant (postgres.*)"; \
  } while (0)

std::string pg_error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

/// "postgresql://USER@HOST:PORT" -> "HOST:PORT".
std::string host_port(const std::string& server) {
  return server.substr(server.find('@') + 1);
}

constexpr const char* kSecret = test::kSecretPassword;

/// A database owned by the role that must give its password.
std::string secret_database(TestDb& dbs) {
  const std::string where = dbs.where("secret");
  const std::string db = where.substr(where.rfind('/') + 1);
  test::give_to_secret_role(db);
  return db;
}

TEST(Postgres, PasswordsNeverAppearInNamesOrMessages) {
  TT_POSTGRES_ONLY();
  TestDb dbs("secret");
  const std::string db = secret_database(dbs);
  const std::string url = "postgresql://tt_secret:" + std::string(kSecret) + "@" +
                          host_port(postgres_server()) + "/" + db;
  Database opened = Database::open(url);
  opened.put_workload(workload("matmul", 8));
  EXPECT_EQ(opened.workloads().size(), 1U);
  EXPECT_EQ(opened.name().find(kSecret), std::string::npos) << opened.name();
  EXPECT_NE(opened.name().find("tt_secret@"), std::string::npos) << opened.name();
  EXPECT_EQ(display_name(url), opened.name());
  EXPECT_EQ(opened.path(), url);  // to open it again
  // A failing statement names the database, without the password.
  const std::string missing =
      pg_error_of([&] { opened.add_records({record(workload("conv", 8), cpu(), 1, 1e-3)}); });
  EXPECT_NE(missing.find("unknown workload"), std::string::npos) << missing;
  EXPECT_EQ(missing.find(kSecret), std::string::npos) << missing;
  // A wrong password, in the URL or as a parameter, is refused without being echoed.
  const std::string wrong =
      "postgresql://tt_secret:Wr0ng-guess@" + host_port(postgres_server()) + "/" + db;
  const std::string refused = pg_error_of([&] { Database::open(wrong); });
  EXPECT_NE(refused.find("cannot connect"), std::string::npos) << refused;
  EXPECT_NE(refused.find("password authentication failed"), std::string::npos) << refused;
  EXPECT_EQ(refused.find("Wr0ng-guess"), std::string::npos) << refused;
  const std::string param =
      "postgresql://tt_secret@" + host_port(postgres_server()) + "/" + db + "?password=Wr0ng-guess";
  const std::string refused_param = pg_error_of([&] { Database::open(param); });
  EXPECT_NE(refused_param.find("password=***"), std::string::npos) << refused_param;
  EXPECT_EQ(refused_param.find("Wr0ng-guess"), std::string::npos) << refused_param;
}

TEST(Postgres, APasswordFileGivesTheCredentials) {
  TT_POSTGRES_ONLY();
  TestDb dbs("passfile");
  const std::string db = secret_database(dbs);
  const std::string url = "postgresql://tt_secret@" + host_port(postgres_server()) + "/" + db;
  const std::string passfile = dbs.file("pgpass");
  std::ofstream(passfile) << host_port(postgres_server()) << ":" << db << ":tt_secret:" << kSecret
                          << "\n";
  ASSERT_EQ(::chmod(passfile.c_str(), 0600), 0);
  const char* before = std::getenv("PGPASSFILE");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("PGPASSFILE", passfile.c_str(), 1);
  std::string error = pg_error_of([&] { Database::open(url).put_workload(workload("matmul", 8)); });
  ::setenv("PGPASSFILE", "/nonexistent/pgpass", 1);
  const std::string without = pg_error_of([&] { Database::open(url); });
  if (saved.empty())
    ::unsetenv("PGPASSFILE");
  else
    ::setenv("PGPASSFILE", saved.c_str(), 1);
  EXPECT_EQ(error, "");
  EXPECT_NE(without.find("cannot connect"), std::string::npos) << without;
}

TEST(Postgres, SomeoneElsesDatabaseIsRefused) {
  TT_POSTGRES_ONLY();
  TestDb dbs("foreign");
  const std::string where = dbs.where("shop");
  exec_sql(where, "CREATE TABLE records(order_id INTEGER, amount INTEGER)");
  const std::string message = pg_error_of([&] { Database::open(where); });
  EXPECT_NE(message.find("has a table 'records' but is not a tensortune database"),
            std::string::npos)
      << message;
}

TEST(Postgres, AnUnreachableServerIsNamedQuickly) {
  TT_POSTGRES_ONLY();
  // Port 1 on loopback: nothing listens, the connection is refused at once.
  const auto start = std::chrono::steady_clock::now();
  const std::string message =
      pg_error_of([&] { Database::open("postgresql://tensortune@127.0.0.1:1/tt"); });
  EXPECT_NE(message.find("database 'postgresql://tensortune@127.0.0.1:1/tt': cannot connect"),
            std::string::npos)
      << message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(Postgres, AServerRestartedUnderAWriterLosesAndDoublesNothing) {
  TT_POSTGRES_ONLY();
  // A private server: restarting the shared one would break the tests running beside this one.
  TestDb scratch("restart");
  const std::string state = scratch.file("server");
  const std::string script = std::string(TT_TEST_SOURCE_DIR) + "/scripts/pg_server.sh";
  ASSERT_EQ(std::system(("bash " + script + " start " + state + " >/dev/null").c_str()), 0);
  std::string server;
  std::getline(std::ifstream(state + "/url"), server);
  ASSERT_FALSE(server.empty());
  exec_sql(server + "/postgres", "CREATE DATABASE restarted");
  const std::string where = server + "/restarted";
  const WorkloadInfo mm = workload("matmul", 64);
  Database db = Database::open(where);
  db.put_workload(mm);
  constexpr int kBatches = 40;
  int stored = 0;
  // The server goes down for about two seconds while the batches are written.
  std::thread restart([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(std::system(("bash " + script + " restart " + state + " 2 >/dev/null").c_str()), 0);
  });
  for (int b = 0; b < kBatches; ++b) {
    std::vector<Record> batch;
    for (int i = 0; i < 8; ++i)
      batch.push_back(record(mm, cpu(), b * 8 + i + 1, 1e-3 + i * 1e-6));
    try {
      db.add_records(batch);
      ++stored;
    } catch (const UserError& e) {
      ADD_FAILURE() << "batch " << b << ": " << e.what();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  restart.join();
  EXPECT_EQ(stored, kBatches);
  EXPECT_EQ(db.count_records(), kBatches * 8);
  EXPECT_EQ(db.measured_schedules(mm.key, cpu()).size(), static_cast<size_t>(kBatches * 8));
  std::system(("bash " + script + " stop " + state + " >/dev/null").c_str());
}

}  // namespace
}  // namespace tensortune::database

// SPDX-License-Identifier: Apache-2.0
// The command line on a PostgreSQL database, against the throwaway server of the CTest fixture
// "postgres": tune into it, read it back, copy records to an SQLite file and back (all or
// nothing, duplicates skipped), and never print a password. Then the measurement queue with
// real worker processes: one killed with SIGKILL mid-job, and a server restarted mid-run, each
// with every trial stored exactly once.
#include "cli_runner.h"
#include "common/postgres.h"
#include "tensortune/support/json.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <libpq-fe.h>
#include <set>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace tensortune::e2e {
namespace {

std::string server() {
  return test::postgres_server();
}

void admin(const std::string& sql) {
  test::exec_postgres(server() + "/postgres", sql);
}

/// A new, empty database on the server, dropped at the end of the test.
class ServerDb {
 public:
  explicit ServerDb(const std::string& stem)
      : name_("tt_cli_" + stem + "_" + std::to_string(::getpid())) {
    admin("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    admin("CREATE DATABASE " + name_);
  }
  ~ServerDb() { admin("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)"); }
  ServerDb(const ServerDb&) = delete;
  ServerDb& operator=(const ServerDb&) = delete;
  const std::string& name() const { return name_; }
  std::string url() const { return server() + "/" + name_; }

 private:
  std::string name_;
};

support::Json stats_of(const std::string& db) {
  const CliResult r = run_cli("db stats --json --db '" + db + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return support::Json::parse(r.out);
}

constexpr const char* kTune =
    "tune --workload matmul:M=32,N=32,K=32 --target native --trials 8 --batch 4 --tuner random "
    "--confirm 0 --progress none ";

TEST(PostgresCli, TunesIntoTheServerAndCopiesToAFileAndBack) {
  ASSERT_FALSE(server().empty()) << "the postgres fixture did not start";
  ServerDb first("first");
  ServerDb second("second");
  const CliResult tuned = run_cli(std::string(kTune) + "--db '" + first.url() + "'");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  EXPECT_NE(tuned.out.find("records in " + first.url()), std::string::npos) << tuned.out;
  const support::Json on_server = stats_of(first.url());
  ASSERT_EQ(on_server.at("workloads").as_array("workloads").size(), 1U) << on_server.dump();
  const support::Json& w = on_server.at("workloads").as_array("workloads")[0];
  EXPECT_EQ(w.at("records").as_int(), 8);

  const std::string file = temp_path("copy.db");
  const CliResult to_file = run_cli("db copy '" + first.url() + "' '" + file + "'");
  ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
  EXPECT_NE(to_file.out.find("copied 8 records (0 already present) and 1 workloads"),
            std::string::npos)
      << to_file.out;
  const CliResult back = run_cli("db copy --json '" + file + "' '" + second.url() + "'");
  ASSERT_EQ(back.exit_code, 0) << back.err;
  const support::Json copied = support::Json::parse(back.out);
  EXPECT_EQ(copied.at("copied").as_int(), 8);
  EXPECT_EQ(copied.at("skipped").as_int(), 0);
  // A second copy finds every record there already.
  const CliResult again = run_cli("db copy --json '" + file + "' '" + second.url() + "'");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(support::Json::parse(again.out).at("skipped").as_int(), 8);
  // The same best, with the same time, on all three.
  const std::string best = "db best --json --k 1 --workload matmul:M=32,N=32,K=32 --target native";
  const CliResult a = run_cli(best + " --db '" + first.url() + "'");
  const CliResult b = run_cli(best + " --db '" + file + "'");
  const CliResult c = run_cli(best + " --db '" + second.url() + "'");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  ASSERT_EQ(c.exit_code, 0) << c.err;
  auto first_record = [](const CliResult& r) {
    return support::Json::parse(r.out).at("records").as_array("records").at(0);
  };
  EXPECT_EQ(first_record(a).at("schedule").dump(), first_record(b).at("schedule").dump());
  EXPECT_EQ(first_record(a).at("seconds").as_double(), first_record(b).at("seconds").as_double());
  EXPECT_EQ(first_record(b).at("seconds").as_double(), first_record(c).at("seconds").as_double());
}

TEST(PostgresCli, ABadCopyChangesNothingAndSaysWhy) {
  ASSERT_FALSE(server().empty()) << "the postgres fixture did not start";
  ServerDb dest("dest");
  const CliResult missing =
      run_cli("db copy '" + temp_path("absent.db") + "' '" + dest.url() + "'");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
  const CliResult same = run_cli("db copy '" + dest.url() + "' '" + dest.url() + "'");
  EXPECT_EQ(same.exit_code, 1);
  EXPECT_NE(same.err.find("is both the source and the destination"), std::string::npos) << same.err;
  const CliResult usage = run_cli("db copy '" + dest.url() + "'");
  EXPECT_EQ(usage.exit_code, 2) << usage.err;
  const CliResult unreachable =
      run_cli("db stats --db postgresql://tensortune@127.0.0.1:1/nothing");
  EXPECT_EQ(unreachable.exit_code, 1);
  EXPECT_NE(unreachable.err.find("cannot connect"), std::string::npos) << unreachable.err;
}

TEST(PostgresCli, APasswordInTheUrlIsNeverPrinted) {
  ASSERT_FALSE(server().empty()) << "the postgres fixture did not start";
  ServerDb db("secret");
  const std::string secret = test::kSecretPassword;
  test::give_to_secret_role(db.name());
  const std::string host = server().substr(server().find('@') + 1);
  const std::string url = "postgresql://tt_secret:" + secret + "@" + host + "/" + db.name();
  const CliResult tuned = run_cli(std::string(kTune) + "--json --db '" + url + "'");
  // PostgreSQL 15: the public schema belongs to the database's owner, who may create tables.
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  const CliResult stats = run_cli("db stats --db '" + url + "'");
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  const CliResult missing = run_cli("db best --workload matmul:M=8,N=8,K=8 --db '" + url + "'");
  for (const CliResult* r : {&tuned, &stats, &missing}) {
    EXPECT_EQ(r->out.find(secret), std::string::npos) << r->out;
    EXPECT_EQ(r->err.find(secret), std::string::npos) << r->err;
  }
  EXPECT_NE(stats.out.find("tt_secret@" + host), std::string::npos) << stats.out;
}

/// The records of `db` (a URL): how many, and how many distinct schedules; {-1, 0} while the
/// database has no tables or workload yet.
std::pair<int64_t, size_t> records_of(const std::string& db) {
  const CliResult r = run_cli(
      "db history --json --workload matmul:M=32,N=32,K=32 --target native "
      "--db '" +
      db + "'");
  if (r.exit_code != 0)
    return {-1, 0};
  std::set<std::string> schedules;
  int64_t n = 0;
  const support::Json out = support::Json::parse(r.out);  // outlives the loop over its records
  for (const support::Json& rec : out.at("records").as_array("records")) {
    ++n;
    schedules.insert(rec.at("schedule").as_string());
  }
  return {n, schedules.size()};
}

/// Starts a queue worker for the native target on `db`.
Background start_worker(const std::string& db, const std::string& name) {
  return start_cli({"worker", "--db", db, "--target", "native", "--lease", "3", "--idle-exit", "20",
                    "--name", name});
}

/// The id of the job `name` runs now (0 = none), from `tensortune workers --json`.
int64_t running_job(const std::string& db, const std::string& name) {
  const CliResult r = run_cli("workers --json --db '" + db + "'");
  if (r.exit_code != 0)  // before the first worker created the tables
    return 0;
  const support::Json out = support::Json::parse(r.out);
  for (const support::Json& w : out.at("workers").as_array("workers")) {
    if (w.at("name").as_string() == name)
      return w.at("job").as_int();
  }
  return 0;
}

TEST(PostgresCli, AWorkerKilledMidJobLosesNothingAndDoublesNothing) {
  ASSERT_FALSE(server().empty()) << "the postgres fixture did not start";
  ServerDb db("killed");
  Background victim = start_worker(db.url(), "victim");
  Background steady = start_worker(db.url(), "steady");
  Background tuner =
      start_cli({"tune", "--workload", "matmul:M=32,N=32,K=32", "--target", "native", "--trials",
                 "24", "--batch", "6", "--tuner", "random", "--confirm", "0", "--progress", "none",
                 "--measure-on", "queue", "--db", db.url()});
  // Kill the victim while it holds a job.
  int64_t held = 0;
  for (int i = 0; i < 600 && held == 0; ++i) {
    held = running_job(db.url(), "victim");
    if (held == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(held, 0) << "the victim never held a job";
  ASSERT_EQ(::kill(victim.pid, SIGKILL), 0);
  EXPECT_EQ(wait_cli(victim), 128 + SIGKILL);
  EXPECT_EQ(wait_cli(tuner), 0) << read_text(tuner.err_path);
  ::kill(steady.pid, SIGTERM);
  EXPECT_EQ(wait_cli(steady), 0) << read_text(steady.err_path);
  const auto [records, schedules] = records_of(db.url());
  EXPECT_EQ(records, 24);
  EXPECT_EQ(schedules, 24U);
  // The held job was redone by the steady worker after the victim's lease expired.
  const CliResult q = run_cli("workers --json --db '" + db.url() + "'");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  const support::Json listing = support::Json::parse(q.out);
  const support::Json queue = listing.at("queue").as_array("queue").at(0);
  EXPECT_EQ(queue.at("done").as_int(), 24);
  EXPECT_EQ(queue.at("queued").as_int() + queue.at("running").as_int(), 0);
}

TEST(PostgresCli, TunersAndWorkersOutliveAServerRestart) {
  ASSERT_FALSE(server().empty()) << "the postgres fixture did not start";
  // A private server: restarting the fixture's would cut the tests running beside this one.
  const std::string state = temp_path("pg");
  const std::string script = std::string(TT_SOURCE_DIR) + "/scripts/pg_server.sh";
  ASSERT_EQ(std::system(("bash " + script + " start " + state + " >/dev/null").c_str()), 0);
  std::string base;
  std::getline(std::ifstream(state + "/url"), base);
  const std::string db = base + "/postgres";
  Background a = start_worker(db, "a");
  Background b = start_worker(db, "b");
  Background tuner = start_cli({"tune", "--workload", "matmul:M=32,N=32,K=32", "--target", "native",
                                "--trials", "24", "--batch", "6", "--tuner", "random", "--confirm",
                                "0", "--progress", "none", "--measure-on", "queue", "--db", db});
  // Once some records are stored, the server goes down for 3 s.
  for (int i = 0; i < 600 && records_of(db).first < 4; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(std::system(("bash " + script + " restart " + state + " 3 >/dev/null").c_str()), 0);
  EXPECT_EQ(wait_cli(tuner), 0) << read_text(tuner.err_path);
  ::kill(a.pid, SIGTERM);
  ::kill(b.pid, SIGTERM);
  EXPECT_EQ(wait_cli(a), 0) << read_text(a.err_path);
  EXPECT_EQ(wait_cli(b), 0) << read_text(b.err_path);
  const auto [records, schedules] = records_of(db);
  EXPECT_EQ(records, 24);
  EXPECT_EQ(schedules, 24U);
  std::system(("bash " + script + " stop " + state + " >/dev/null").c_str());
}

TEST(PostgresCli, AHostileJobRowIsDataThatFailsOnReplayAndRunsNothing) {
  ASSERT_FALSE(server().empty()) << "the postgres fixture did not start";
  ServerDb db("hostile");
  // One local trial puts the workload and the target in the database.
  const CliResult seeded = run_cli(
      "tune --workload matmul:M=32,N=32,K=32 --target native --trials 1 --tuner random "
      "--confirm 0 --progress none --db '" +
      db.url() + "'");
  ASSERT_EQ(seeded.exit_code, 0) << seeded.err;
  const std::string planted = temp_path("pwned");
  const std::string key_of = "(SELECT key FROM workloads LIMIT 1)";
  const std::string options =
      "'{\"threads\":2,\"build_timeout_s\":10,\"run_timeout_s\":10,\"timing\":{}}'";
  auto insert = [&](const std::string& schedule_sql, const std::string& options_sql) {
    test::exec_postgres(
        db.url(),
        "INSERT INTO jobs(workload_id, target_id, schedule, options, created) SELECT "
        "(SELECT id FROM workloads LIMIT 1), (SELECT id FROM targets LIMIT 1), " +
            schedule_sql + ", " + options_sql + ", 1");
  };
  // A step that is no schedule primitive, asking for a command.
  insert("'{\"steps\":[{\"kind\":\"system\",\"cmd\":\"touch " + planted +
             "\"}],\"version\":1,\"workload_key\":\"' || " + key_of + " || '\"}'",
         options);
  // A schedule of another workload.
  insert("'{\"steps\":[],\"version\":1,\"workload_key\":\"conv2d_x\"}'", options);
  // Options out of range, and options that are not JSON.
  insert("'{\"steps\":[],\"version\":1,\"workload_key\":\"' || " + key_of + " || '\"}'",
         "'{\"threads\":99999,\"build_timeout_s\":10,\"run_timeout_s\":10,\"timing\":{}}'");
  insert("'{\"steps\":[],\"version\":1,\"workload_key\":\"' || " + key_of + " || '\"}'",
         "'rm -rf /'");
  const CliResult worked =
      run_cli("worker --db '" + db.url() + "' --target native --max-jobs 4 --idle-exit 10");
  ASSERT_EQ(worked.exit_code, 0) << worked.err;
  EXPECT_NE(worked.err.find("4 jobs stored"), std::string::npos) << worked.err;
  const CliResult history = run_cli(
      "db history --json --workload matmul:M=32,N=32,K=32 --target "
      "native --db '" +
      db.url() + "'");
  ASSERT_EQ(history.exit_code, 0) << history.err;
  const support::Json out = support::Json::parse(history.out);
  int failed = 0;
  for (const support::Json& r : out.at("records").as_array("records")) {
    if (r.at("status").as_string() == "Ok")
      continue;
    ++failed;
    EXPECT_EQ(r.at("status").as_string(), "CompileError");
    EXPECT_NE(r.at("error").as_string().find("the job does not replay here"), std::string::npos)
        << r.at("error").as_string();
  }
  EXPECT_EQ(failed, 4);
  EXPECT_FALSE(std::ifstream(planted).good()) << "a job row ran a command";
}

/// A "machine" of its own: a network namespace joined to this one by a veth pair, host side
/// HOST_IP, namespace side NS_IP (a /30 of 10.231.0.0/16 picked by the process id). Removed
/// when it goes out of scope. Only addresses the test made are used.
class Namespace {
 public:
  Namespace() {
    const int n = static_cast<int>(::getpid() % 250);
    name_ = "tt-ns-" + std::to_string(::getpid());
    host_if_ = "tth" + std::to_string(::getpid());
    host_ip_ = "10.231." + std::to_string(n) + ".1";
    ns_ip_ = "10.231." + std::to_string(n) + ".2";
    const std::string ns_if = "ttn" + std::to_string(::getpid());
    ok_ = sh("ip netns add " + name_) &&
          sh("ip link add " + host_if_ + " type veth peer name " + ns_if) &&
          sh("ip link set " + ns_if + " netns " + name_) &&
          sh("ip addr add " + host_ip_ + "/30 dev " + host_if_) &&
          sh("ip link set " + host_if_ + " up") &&
          sh("ip netns exec " + name_ + " ip addr add " + ns_ip_ + "/30 dev " + ns_if) &&
          sh("ip netns exec " + name_ + " ip link set " + ns_if + " up") &&
          sh("ip netns exec " + name_ + " ip link set lo up");
  }
  ~Namespace() {
    sh("ip link del " + host_if_);
    sh("ip netns del " + name_);
  }
  Namespace(const Namespace&) = delete;
  Namespace& operator=(const Namespace&) = delete;
  bool ok() const { return ok_; }
  const std::string& name() const { return name_; }
  const std::string& host_ip() const { return host_ip_; }
  /// Cuts the link (down) or restores it (up), as a pulled cable would.
  bool link(bool up) { return sh("ip link set " + host_if_ + (up ? " up" : " down")); }

  /// Starts `tensortune ARGS...` inside the namespace, output to files.
  Background start(const std::vector<std::string>& args) const {
    Background b;
    b.out_path = temp_path("ns_stdout.txt");
    b.err_path = temp_path("ns_stderr.txt");
    std::vector<std::string> argv = {"ip", "netns", "exec", name_, TT_TENSORTUNE_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    b.pid = ::fork();
    if (b.pid == 0) {
      if (!std::freopen(b.out_path.c_str(), "w", stdout) ||
          !std::freopen(b.err_path.c_str(), "w", stderr))
        ::_exit(127);
      std::vector<char*> raw;
      for (std::string& a : argv)
        raw.push_back(a.data());
      raw.push_back(nullptr);
      ::execvp("ip", raw.data());
      ::_exit(127);
    }
    return b;
  }

 private:
  static bool sh(const std::string& command) {
    return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
  }
  std::string name_, host_if_, host_ip_, ns_ip_;
  bool ok_ = false;
};

TEST(PostgresCli, AWorkerCutOffLongerThanItsLeaseHasItsJobRedoneAndItsLateResultDiscarded) {
  if (::geteuid() != 0 || std::system("ip netns list >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "network namespaces need root and iproute2";
  Namespace ns;
  ASSERT_TRUE(ns.ok()) << "could not build the namespace and its veth pair";
  // A private server that listens on loopback and on the veth's host side.
  const std::string state = temp_path("pg");
  const std::string script = std::string(TT_SOURCE_DIR) + "/scripts/pg_server.sh";
  ASSERT_EQ(std::system(("bash " + script + " start " + state + " 127.0.0.1," + ns.host_ip() +
                         " >/dev/null")
                            .c_str()),
            0);
  std::string base;
  std::getline(std::ifstream(state + "/url"), base);
  const std::string port = base.substr(base.rfind(':') + 1);
  const std::string db = base + "/postgres";
  const std::string remote_db =
      "postgresql://tensortune@" + ns.host_ip() + ":" + port + "/postgres";
  Background remote = ns.start({"worker", "--db", remote_db, "--target", "native", "--lease", "3",
                                "--idle-exit", "30", "--name", "remote"});
  Background tuner = start_cli({"tune",
                                "--workload",
                                "matmul:M=32,N=32,K=32",
                                "--target",
                                "native",
                                "--trials",
                                "12",
                                "--batch",
                                "6",
                                "--tuner",
                                "random",
                                "--confirm",
                                "0",
                                "--progress",
                                "none",
                                "--measure-on",
                                "queue",
                                "--lease",
                                "3",
                                "--db",
                                db});
  int64_t held = 0;
  for (int i = 0; i < 1200 && held == 0; ++i) {
    held = running_job(db, "remote");
    if (held == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_NE(held, 0) << "the remote worker never held a job: " << read_text(remote.err_path);
  ASSERT_TRUE(ns.link(false));
  // A local worker takes over once the remote one's lease has expired.
  Background local = start_worker(db, "local");
  std::this_thread::sleep_for(std::chrono::seconds(8));
  ASSERT_TRUE(ns.link(true));
  EXPECT_EQ(wait_cli(tuner), 0) << read_text(tuner.err_path);
  ::kill(local.pid, SIGTERM);
  ::kill(remote.pid, SIGTERM);
  EXPECT_EQ(wait_cli(local), 0) << read_text(local.err_path);
  wait_cli(remote);
  const auto [records, schedules] = records_of(db);
  EXPECT_EQ(records, 12);
  EXPECT_EQ(schedules, 12U);
  const CliResult w = run_cli("workers --json --db '" + db + "'");
  ASSERT_EQ(w.exit_code, 0) << w.err;
  const support::Json listing = support::Json::parse(w.out);
  int64_t discarded = 0, done = 0;
  for (const support::Json& one : listing.at("workers").as_array("workers")) {
    done += one.at("done").as_int();
    if (one.at("name").as_string() == "remote")
      discarded = one.at("discarded").as_int();
  }
  EXPECT_EQ(done, 12);
  EXPECT_GE(discarded, 1) << read_text(remote.err_path);
  std::system(("bash " + script + " stop " + state + " >/dev/null").c_str());
}

/// The records of workload `spec` in `db`: how many, and how many distinct schedules.
std::pair<int64_t, size_t> records_of_spec(const std::string& db, const std::string& spec) {
  const CliResult r =
      run_cli("db history --json --workload " + spec + " --target native --db '" + db + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0)
    return {-1, 0};
  const support::Json out = support::Json::parse(r.out);
  std::set<std::string> schedules;
  int64_t n = 0;
  for (const support::Json& rec : out.at("records").as_array("records")) {
    ++n;
    schedules.insert(rec.at("schedule").as_string());
  }
  return {n, schedules.size()};
}

TEST(PostgresCli, TwoTunersAndFourWorkersAccountForEveryTrialExactlyOnce) {
  ASSERT_FALSE(server().empty()) << "the postgres fixture did not start";
  // 40 s in CI; TT_SOAK_SECONDS=600 for the ten-minute run.
  const char* env = std::getenv("TT_SOAK_SECONDS");
  const int seconds = env != nullptr ? std::atoi(env) : 40;
  ServerDb db("soak");
  std::vector<Background> workers;
  for (int w = 0; w < 4; ++w)
    workers.push_back(start_worker(db.url(), "w" + std::to_string(w)));
  const std::vector<std::string> specs = {"matmul:M=64,N=64,K=64", "matmul:M=48,N=40,K=56"};
  std::vector<Background> tuners;
  for (size_t t = 0; t < specs.size(); ++t) {
    tuners.push_back(start_cli({"tune",
                                "--workload",
                                specs[t],
                                "--target",
                                "native",
                                "--time-budget",
                                std::to_string(seconds) + "s",
                                "--batch",
                                "4",
                                "--tuner",
                                "random",
                                "--seed",
                                std::to_string(t),
                                "--confirm",
                                "0",
                                "--progress",
                                "none",
                                "--measure-on",
                                "queue",
                                "--lease",
                                "3",
                                "--priority",
                                std::to_string(t),
                                "--json",
                                "--db",
                                db.url()}));
  }
  // Halfway, one worker dies without a word and another takes its place.
  std::this_thread::sleep_for(std::chrono::seconds(seconds / 2));
  ASSERT_EQ(::kill(workers[0].pid, SIGKILL), 0);
  EXPECT_EQ(wait_cli(workers[0]), 128 + SIGKILL);
  workers[0] = start_worker(db.url(), "w4");
  int64_t measured = 0;
  for (const Background& t : tuners) {
    ASSERT_EQ(wait_cli(t), 0) << read_text(t.err_path);
    measured += support::Json::parse(read_text(t.out_path)).at("measured").as_int();
  }
  for (const Background& w : workers)
    ::kill(w.pid, SIGTERM);
  for (const Background& w : workers)
    EXPECT_EQ(wait_cli(w), 0) << read_text(w.err_path);
  int64_t records = 0;
  for (const std::string& spec : specs) {
    const auto [n, distinct] = records_of_spec(db.url(), spec);
    EXPECT_EQ(static_cast<size_t>(n), distinct) << spec << ": a schedule stored twice";
    records += n;
  }
  EXPECT_GT(measured, 0);
  EXPECT_EQ(records, measured) << "every trial a tuner counted is one record, and no other";
  const CliResult q = run_cli("workers --json --db '" + db.url() + "'");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  const support::Json listing = support::Json::parse(q.out);
  int64_t ended = 0;
  for (const support::Json& one : listing.at("queue").as_array("queue")) {
    EXPECT_EQ(one.at("queued").as_int(), 0);
    EXPECT_EQ(one.at("running").as_int(), 0);
    ended += one.at("done").as_int() + one.at("errors").as_int();
  }
  EXPECT_EQ(ended, records) << "every job ended with exactly one record";
  std::cout << "soak: " << seconds
            << " s, 2 tuners, 4 workers (one killed and replaced): " << measured << " trials, "
            << records << " records, " << ended << " jobs ended\n";
}

}  // namespace
}  // namespace tensortune::e2e

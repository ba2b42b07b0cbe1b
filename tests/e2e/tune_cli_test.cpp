// SPDX-License-Identifier: Apache-2.0
// `tensortune tune` and `tensortune report` as a user runs them: JSON output, resume, SIGTERM,
// kill -9 during a run (integrity, nothing committed lost, the rerun resumes) and bad input. The
// report's tests are in report_cli_test.cpp.
#include "cli_runner.h"
#include "tensortune/database/database.h"
#include "tensortune/support/json.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <thread>

namespace tensortune {
namespace {

using e2e::run_cli;
using e2e::temp_path;

constexpr const char* kWorkload = "matmul:M=32,N=32,K=32";
constexpr const char* kTarget = "llvm -cores=1";

std::string tune_args(const std::string& db, int trials, int batch) {
  return std::string("tune --workload ") + kWorkload + " --target '" + kTarget + "' --db '" + db +
         "' --trials " + std::to_string(trials) + " --batch " + std::to_string(batch) +
         " --tuner random --progress lines";
}

int64_t count_records(const std::string& db) {
  if (!std::filesystem::exists(db))
    return 0;
  try {
    return database::Database::open(db, true).count_records();
  } catch (const std::exception&) {
    return 0;  // the file exists but the schema is not created yet
  }
}

std::string integrity_check(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
    return "open failed";
  std::string result;
  sqlite3_exec(
      db, "PRAGMA integrity_check",
      [](void* out, int, char** values, char**) {
        *static_cast<std::string*>(out) += values[0] ? values[0] : "";
        return 0;
      },
      &result, nullptr);
  sqlite3_close(db);
  return result;
}

/// Polls until the database holds at least `n` records (or 60 s pass).
bool wait_for_records(const std::string& db, int64_t n) {
  for (int i = 0; i < 600; ++i) {
    if (count_records(db) >= n)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

/// Starts a tune job in the background that only a signal ends (random tuner, batches of 4).
e2e::Background start_endless_tune(const std::string& db) {
  return e2e::start_cli({"tune", "--workload", kWorkload, "--target", kTarget, "--db", db,
                         "--trials", "100000", "--batch", "4", "--tuner", "random", "--progress",
                         "lines"});
}

TEST(TuneCli, TunesIntoTheDatabaseAndReportsJson) {
  const std::string db = temp_path("tune.db");
  const e2e::CliResult r = run_cli(tune_args(db, 8, 4) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const support::Json j = support::Json::parse(r.out);
  EXPECT_EQ(j.at("trials").as_int(), 8);
  EXPECT_EQ(j.at("measured").as_int(), 8);
  EXPECT_GT(j.at("best").at("gflops").as_double(), 0);
  EXPECT_GT(j.at("best").at("seconds").as_double(), 0);
  const int64_t best_id = j.at("best").at("record_id").as_int();
  EXPECT_NE(r.err.find("round"), std::string::npos);  // plain progress lines off a terminal
  const database::Database d = database::Database::open(db, true);
  EXPECT_EQ(d.count_records(), 8);
  EXPECT_TRUE(d.record(best_id).has_value());
  // The five best were measured again side by side; the best named is the database's best.
  const std::vector<database::Record> ok =
      d.best(j.at("workload_key").as_string(), d.targets().at(0), 100);
  EXPECT_EQ(j.at("best").at("confirmed").as_int(), std::min<int64_t>(5, ok.size()));
  EXPECT_EQ(ok.at(0).id, best_id);
  // The same command again resumes: nothing left to measure.
  const e2e::CliResult again = run_cli(tune_args(db, 8, 4) + " --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(support::Json::parse(again.out).at("measured").as_int(), 0);
  EXPECT_EQ(support::Json::parse(again.out).at("best").at("record_id").as_int(), best_id);
}

TEST(TuneCli, CacheFlushIsRecordedWithTheRunsOptions) {
  const std::string db = temp_path("flush.db");
  const e2e::CliResult r =
      run_cli(tune_args(db, 4, 4) + " --cache-flush --timing-budget 0 --single-call-factor 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const database::Database d = database::Database::open(db, true);
  ASSERT_EQ(d.runs().size(), 1U);
  EXPECT_TRUE(support::Json::parse(d.runs()[0].options).at("cache_flush").as_bool());
  // The batch was timed in the default three rounds.
  EXPECT_EQ(support::Json::parse(d.runs()[0].options).at("measure_rounds").as_int(), 3);
  for (const database::Record& record : d.all_records()) {
    // Every one of the five repeats timed (one call each, the caches flushed before it): 2, 2
    // and 1 in the three rounds.
    EXPECT_EQ(record.repeats.size(), 5U);
  }
  const std::string warm_db = temp_path("warm.db");
  const e2e::CliResult warm = run_cli(tune_args(warm_db, 1, 1));
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  const database::Database w = database::Database::open(warm_db, true);
  EXPECT_FALSE(support::Json::parse(w.runs()[0].options).at("cache_flush").as_bool());
  // --measure-rounds must be at least 1.
  const e2e::CliResult zero =
      run_cli(tune_args(temp_path("zero.db"), 1, 1) + " --measure-rounds 0");
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
  EXPECT_NE(zero.err.find("measure-rounds"), std::string::npos) << zero.err;
}

TEST(TuneCli, CtrlCToTheWholeJobStoresNoCandidateAsAFailure) {
  // A terminal's Ctrl-C reaches every process of the job, the measurer's workers too: they must
  // finish the candidate in hand (killed, it was stored as a failure, never measured again).
  const std::string db = temp_path("ctrlc.db");
  const e2e::Background p = start_endless_tune(db);
  ASSERT_TRUE(wait_for_records(db, 8));
  kill(-p.pid, SIGINT);
  EXPECT_EQ(e2e::wait_cli(p), 128 + SIGINT) << e2e::read_text(p.err_path);
  const database::Database d = database::Database::open(db, true);
  EXPECT_EQ(d.count_records() % 4, 0);
  for (const database::Record& r : d.all_records())
    EXPECT_TRUE(r.ok()) << r.status << ": " << r.error;
}

TEST(TuneCli, SigtermStopsAfterSavingTheBatchInFlight) {
  const std::string db = temp_path("term.db");
  const e2e::Background p = start_endless_tune(db);
  ASSERT_TRUE(wait_for_records(db, 4));
  kill(p.pid, SIGTERM);
  // Saved, but not done: the exit code says which signal stopped it.
  EXPECT_EQ(e2e::wait_cli(p), 128 + SIGTERM) << e2e::read_text(p.err_path);
  EXPECT_NE(e2e::read_text(p.err_path).find("stopping after the batch"), std::string::npos);
  EXPECT_NE(e2e::read_text(p.out_path).find("stopped on request"), std::string::npos);
  const database::Database d = database::Database::open(db, true);
  EXPECT_EQ(d.count_records() % 4, 0);  // whole batches only
  ASSERT_EQ(d.runs().size(), 1u);
  EXPECT_GT(d.runs()[0].ended, 0);
  EXPECT_EQ(d.runs()[0].trials, d.count_records());
}

TEST(TuneCli, KillNineLosesNothingCommittedAndTheRerunResumes) {
  const std::string db = temp_path("kill.db");
  const e2e::Background p = start_endless_tune(db);
  ASSERT_TRUE(wait_for_records(db, 8));
  const int64_t committed = count_records(db);
  kill(p.pid, SIGKILL);
  EXPECT_EQ(e2e::wait_cli(p), 128 + SIGKILL);
  EXPECT_EQ(integrity_check(db), "ok");
  const int64_t after = count_records(db);
  EXPECT_GE(after, committed);
  {
    // The run row counted every stored batch as it was stored; it never ended.
    const database::Database d = database::Database::open(db, true);
    ASSERT_EQ(d.runs().size(), 1u);
    EXPECT_EQ(d.runs()[0].trials, after);
    EXPECT_EQ(d.runs()[0].ended, 0);
    const e2e::CliResult stats = run_cli("db stats --db '" + db + "'");
    EXPECT_NE(stats.out.find("unfinished (killed?), " + std::to_string(after) + " trials"),
              std::string::npos)
        << stats.out;
  }
  // The rerun resumes: it measures exactly what the budget still allows, nothing twice.
  const e2e::CliResult r = run_cli(tune_args(db, static_cast<int>(after + 4), 4) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(support::Json::parse(r.out).at("measured").as_int(), 4);
  const database::Database d = database::Database::open(db, true);
  std::set<std::string> knobs;
  for (const database::Record& rec : d.all_records())
    knobs.insert(rec.knobs);
  EXPECT_EQ(static_cast<int64_t>(knobs.size()), d.count_records());
}

TEST(TuneCli, ConcurrentJobsOfOneWorkloadShareTheBudgetAndMeasureNoScheduleTwice) {
  // Each job used to measure the whole --trials, the same schedules as the others.
  const std::string db = temp_path("shared.db");
  ASSERT_EQ(run_cli(tune_args(db, 1, 1)).exit_code, 0);  // created, so no job races to make it
  std::vector<e2e::Background> jobs;
  for (int i = 0; i < 3; ++i) {
    jobs.push_back(e2e::start_cli({"tune", "--workload", kWorkload, "--target", kTarget, "--db", db,
                                   "--trials", "24", "--batch", "8", "--tuner", "random",
                                   "--progress", "none", "--confirm", "0"}));
  }
  for (const e2e::Background& job : jobs)
    EXPECT_EQ(e2e::wait_cli(job), 0) << e2e::read_text(job.err_path);
  const database::Database d = database::Database::open(db, true);
  EXPECT_EQ(d.count_records(), 24);
  std::set<std::string> schedules;
  for (const database::Record& r : d.all_records())
    EXPECT_TRUE(schedules.insert(r.schedule).second) << "stored twice: " << r.schedule;
  int64_t measured = 0;
  for (const database::TuningRun& run : d.runs())
    measured += run.trials;
  EXPECT_EQ(measured, 24);  // nothing measured and then dropped as a duplicate
}

TEST(TuneCli, BadInputGetsOneLineAndANonZeroExit) {
  const std::string db = temp_path("bad.db");
  struct Case {
    std::string args, needle;
    int code;
  };
  const std::vector<Case> cases{
      {"tune --workload nosuchop:M=1 --target native --db '" + db + "'", "nosuchop", 1},
      {"tune --workload 'matmul:M=0,N=4,K=4' --target native --db '" + db + "'", "M", 1},
      {"tune --workload matmul:M=4,N=4,K=4 --target 'llvm -speed=9' --db '" + db + "'", "speed", 1},
      {"tune --workload matmul:M=4,N=4,K=4 --target native --tuner annealing --db '" + db + "'",
       "tuner", 2},
      {"tune --workload matmul:M=4,N=4,K=4 --target native --trials -3 --db '" + db + "'", "trials",
       2},
      {"tune --target native --db '" + db + "'", "workload", 2},
      {"tune --workload matmul:M=4,N=4,K=4 --target native --confirm -1 --db '" + db + "'",
       "confirm", 2},
  };
  for (const Case& c : cases) {
    const e2e::CliResult r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, c.code) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find("tensortune: error:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << r.err;
  }
  EXPECT_EQ(count_records(db), 0);
}

TEST(TuneCli, AWorkloadThatCannotBeLoweredFailsBeforeWritingAnything) {
  // Indices past int32: one fails in flatten_storage, the other in the loop nest, where every
  // candidate was dropped as invalid and the job ended "exhausted" with exit 0. (A matmul of
  // 2147483647^3 is refused earlier still, when its placeholders are declared.)
  const std::vector<std::pair<std::string, std::string>> cases{
      {"matmul:M=70000,N=70000,K=70000", "2^31 - 1 elements"},
      {"pad:N=1,C=1,H=4,W=4,pad=30000", "2^31 - 1 elements"},
  };
  for (const auto& [spec, needle] : cases) {
    const std::string db = temp_path("unlowerable.db");
    const e2e::CliResult r = run_cli("tune --workload '" + spec + "' --target '" + kTarget +
                                     "' --db '" + db + "' --trials 4 --batch 4 --tuner random");
    EXPECT_EQ(r.exit_code, 1) << spec << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("cannot be lowered"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    const e2e::CliResult show =
        run_cli("show --workload '" + spec + "' --target '" + kTarget + "' --emit ir");
    EXPECT_EQ(show.exit_code, 1);
    EXPECT_NE(show.err.find(needle), std::string::npos) << show.err;
    const database::Database d = database::Database::open(db, true);
    EXPECT_TRUE(d.workloads().empty());
    EXPECT_TRUE(d.runs().empty());
  }
  // Tensors of more than 2^48 elements are refused when declared, before a database is opened.
  for (const char* spec :
       {"matmul:M=2147483647,N=2147483647,K=2147483647", "pad:N=1,C=1,H=4,W=4,pad=2147483647"}) {
    const std::string db = temp_path("undeclarable.db");
    const e2e::CliResult r = run_cli("tune --workload '" + std::string(spec) + "' --target '" +
                                     kTarget + "' --db '" + db + "' --trials 4");
    EXPECT_EQ(r.exit_code, 1) << spec << "\n" << r.err;
    EXPECT_NE(r.err.find("more than 2^48 elements"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(db)) << spec;
  }
}

/// The lines of `db` exported, plus its first record again as an older tensortune could have
/// written it: a median of 1 ns, and a split of an axis the workload does not have.
std::string lines_with_a_stale_record(const std::string& db) {
  const std::string lines = temp_path("stale.jsonl");
  EXPECT_EQ(run_cli("db export --db '" + db + "' --out '" + lines + "'").exit_code, 0);
  std::istringstream in(e2e::read_text(lines));
  std::string line, out;
  while (std::getline(in, line)) {
    const support::Json j = support::Json::parse(line);
    if (j.at("kind").as_string() != "record") {
      out += line + "\n";
      continue;
    }
    support::Json stale = support::Json::object();
    for (const auto& [key, value] : j.as_object()) {
      if (key != "confirmed_seconds" && key != "rank_seconds")
        stale[key] = value;
    }
    support::Json schedule = support::Json::parse(j.at("schedule").as_string());
    schedule["steps"] = support::Json::parse(
        R"([{"kind": "split", "stage": "C", "axis": "zz", "factor": 4, "nparts": false}])");
    stale["schedule"] = schedule.dump();
    stale["knobs"] = "{}";
    stale["median_seconds"] = 1e-9;
    stale["repeats"] = support::Json::parse("[1e-9]");
    stale["timestamp"] = int64_t{1};
    return out + stale.dump() + "\n";
  }
  return out;
}

TEST(TuneCli, ARecordThatDoesNotReplayIsNeverNamedBest) {
  const std::string db = temp_path("stale.db");
  ASSERT_EQ(run_cli(tune_args(db, 4, 4)).exit_code, 0);
  const std::string stale = temp_path("stale-import.jsonl");
  e2e::write_text(stale, lines_with_a_stale_record(db));
  ASSERT_EQ(run_cli("db import --db '" + db + "' '" + stale + "'").exit_code, 0);
  const int64_t bad = count_records(db);  // the last one stored
  const std::string warning = "record #" + std::to_string(bad) + " of matmul_32x32x32_float32 " +
                              "does not replay onto its workload";
  // The surfaces that name a best skip it, saying so.
  const e2e::CliResult best =
      run_cli(std::string("db best --db '") + db + "' --workload " + kWorkload + " --k 1 --json");
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_NE(support::Json::parse(best.out).at("records").as_array().at(0).at("id").as_int(), bad);
  EXPECT_NE(best.err.find(warning), std::string::npos) << best.err;
  const e2e::CliResult report = run_cli("report --db '" + db + "'");
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(report.out.find("record " + std::to_string(bad)), std::string::npos) << report.out;
  EXPECT_NE(report.err.find(warning), std::string::npos) << report.err;
  const e2e::CliResult stats = run_cli("db stats --db '" + db + "' --json");
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  const double gflops = support::Json::parse(stats.out)
                            .at("workloads")
                            .as_array()
                            .at(0)
                            .at("best_gflops")
                            .as_double();
  EXPECT_LT(gflops, 10000) << "65536 GFLOP/s is the stale record's 1 ns";
  // tune's confirmation cannot measure it: it stores a failed confirmation and names another.
  const e2e::CliResult tuned = run_cli(tune_args(db, 8, 4) + " --json");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  const support::Json j = support::Json::parse(tuned.out);
  EXPECT_NE(j.at("best").at("record_id").as_int(), bad);
  EXPECT_EQ(j.at("best").at("refuted").as_int(), 1);
  const database::Database d = database::Database::open(db, true);
  EXPECT_NE(d.record(bad)->confirm_error.find("does not replay onto the workload: split"),
            std::string::npos)
      << d.record(bad)->confirm_error;
  for (const database::Record& r : d.best(j.at("workload_key").as_string(), d.targets().at(0), 99))
    EXPECT_NE(r.id, bad);
}

}  // namespace
}  // namespace tensortune

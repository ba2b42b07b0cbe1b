// SPDX-License-Identifier: Apache-2.0
// The tensortune command line as users and scripts see it: help, output of show and bench, and
// the exit codes and messages of mistakes (docs/style.md section 4; docs/cli.md, "Conventions").
#include "cli_runner.h"
#include "tensortune/database/database.h"
#include "tensortune/support/hash.h"
#include "tensortune/support/json.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace tensortune {
namespace {

using e2e::CliResult;
using e2e::read_text;
using e2e::run_cli;
using e2e::temp_path;
using e2e::write_text;

constexpr const char* kSmallMatmul = "--workload matmul:M=16,N=16,K=16 --target native";

/// A schedule file for matmul 16x16x16 with a few steps, keyed with the key `show` reports.
std::string write_small_schedule() {
  CliResult keyed = run_cli(std::string("show ") + kSmallMatmul + " --emit steps --json");
  EXPECT_EQ(keyed.exit_code, 0) << keyed.err;
  std::string key = support::Json::parse(keyed.out).at("workload_key").as_string();
  std::string path = temp_path("schedule.json");
  write_text(path, R"({"version": 1, "workload_key": ")" + key + R"(", "steps": [
    {"kind": "split", "stage": "C", "axis": "j", "factor": 4, "nparts": false},
    {"kind": "reorder", "stage": "C", "order": ["k", "j.i"]},
    {"kind": "parallel", "stage": "C", "axis": "i"},
    {"kind": "vectorize", "stage": "C", "axis": "j.i"}]})");
  return path;
}

TEST(Cli, HelpExitsZeroForTheProgramAndEveryCommand) {
  for (const char* args : {"--help", "-h", "show --help", "bench --help", "show -h", "help bench",
                           "db --help", "db stats --help"}) {
    CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
    EXPECT_NE(r.out.find("usage: tensortune"), std::string::npos) << args;
    EXPECT_TRUE(r.err.empty()) << args << ": " << r.err;
  }
  EXPECT_NE(run_cli("bench --help").out.find("--min-repeat-ms"), std::string::npos);
  EXPECT_NE(run_cli("show --help").out.find("--emit"), std::string::npos);
}

TEST(Cli, VersionPrintsTheVersion) {
  CliResult r = run_cli("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("tensortune ", 0), 0U) << r.out;
}

TEST(Cli, ShowPrintsStepsLoopIrAndLlvmIr) {
  CliResult steps = run_cli(std::string("show ") + kSmallMatmul + " --emit steps");
  EXPECT_EQ(steps.exit_code, 0) << steps.err;
  EXPECT_NE(steps.out.find("default schedule"), std::string::npos) << steps.out;

  CliResult ir = run_cli(std::string("show ") + kSmallMatmul + " --emit ir");
  EXPECT_EQ(ir.exit_code, 0) << ir.err;
  EXPECT_NE(ir.out.find("func matmul_16x16x16_float32("), std::string::npos) << ir.out;
  EXPECT_NE(ir.out.find("for (k, 0, 16)"), std::string::npos) << ir.out;

  CliResult llvm = run_cli(std::string("show ") + kSmallMatmul + " --emit=llvm");
  EXPECT_EQ(llvm.exit_code, 0) << llvm.err;
  EXPECT_NE(llvm.out.find("define"), std::string::npos);
  EXPECT_NE(llvm.out.find("@matmul_16x16x16_float32"), std::string::npos);
}

TEST(Cli, ShowAppliesAScheduleFile) {
  std::string path = write_small_schedule();
  CliResult steps =
      run_cli(std::string("show ") + kSmallMatmul + " --schedule '" + path + "' --emit steps");
  EXPECT_EQ(steps.exit_code, 0) << steps.err;
  EXPECT_NE(steps.out.find("split C.j by 4"), std::string::npos) << steps.out;
  CliResult ir =
      run_cli(std::string("show ") + kSmallMatmul + " --schedule '" + path + "' --emit ir");
  EXPECT_EQ(ir.exit_code, 0) << ir.err;
  EXPECT_NE(ir.out.find("parallel"), std::string::npos) << ir.out;
  std::remove(path.c_str());
}

TEST(Cli, BenchJsonReportsPositiveTimesAndRates) {
  CliResult r = run_cli(
      "bench --workload matmul:M=64,N=64,K=64 --target native --repeat 3 --min-repeat-ms 1 "
      "--threads 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  support::Json json = support::Json::parse(r.out);
  EXPECT_EQ(json.at("workload").as_string(), "matmul_64x64x64_float32");
  EXPECT_EQ(json.at("target").as_string(), "llvm");
  EXPECT_GT(json.at("seconds").as_double(), 0);
  EXPECT_GT(json.at("gflops").as_double(), 0);
  EXPECT_GT(json.at("peak_gflops").as_double(), 0);
  EXPECT_GE(json.at("number").as_int(), 1);
  ASSERT_EQ(json.at("repeats").size(), 3U);
  for (const support::Json& seconds : json.at("repeats").as_array()) {
    EXPECT_GT(seconds.as_double(), 0);
  }
  EXPECT_DOUBLE_EQ(json.at("flop").as_double(), 2.0 * 64 * 64 * 64);
}

TEST(Cli, BenchCacheFlushTimesOneCallPerRepeat) {
  CliResult r = run_cli(
      "bench --workload matmul:M=64,N=64,K=64 --target native --repeat 4 --threads 1 "
      "--cache-flush --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  support::Json json = support::Json::parse(r.out);
  EXPECT_EQ(json.at("number").as_int(), 1);
  EXPECT_EQ(json.at("repeats").size(), 4U);
  EXPECT_GT(json.at("seconds").as_double(), 0);
}

TEST(Cli, BenchVerifiesAScheduleFileAgainstTheDefault) {
  std::string path = write_small_schedule();
  CliResult r = run_cli(std::string("bench ") + kSmallMatmul + " --schedule '" + path +
                        "' --repeat 1 --min-repeat-ms 1 --threads 2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("matmul_16x16x16_float32: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GFLOP/s"), std::string::npos) << r.out;
  std::remove(path.c_str());
}

TEST(Cli, BenchCompareTimesSchedulesSideBySideInRounds) {
  std::string path = write_small_schedule();
  CliResult r =
      run_cli(std::string("bench ") + kSmallMatmul + " --schedule default --compare '" + path +
              "' --compare default --rounds 3 --repeat 2 --min-repeat-ms 1 "
              "--threads 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  support::Json json = support::Json::parse(r.out);
  EXPECT_EQ(json.at("rounds").as_int(), 3);
  EXPECT_GT(json.at("peak_gflops").as_double(), 0);
  const support::Json& rows = json.at("schedules");
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_EQ(rows.as_array()[0].at("schedule").as_string(), "default");
  EXPECT_EQ(rows.as_array()[1].at("schedule").as_string(), path);
  EXPECT_DOUBLE_EQ(rows.as_array()[0].at("time_ratio").as_double(),
                   1.0);  // the first against itself
  for (const support::Json& row : rows.as_array()) {
    ASSERT_EQ(row.at("rounds").size(), 3U);
    std::vector<double> times;
    for (const support::Json& t : row.at("rounds").as_array()) {
      EXPECT_GT(t.as_double(), 0);
      times.push_back(t.as_double());
    }
    std::sort(times.begin(), times.end());
    EXPECT_DOUBLE_EQ(row.at("seconds").as_double(), times[1]);  // the median of the rounds
    EXPECT_GT(row.at("time_ratio").as_double(), 0);
  }
  EXPECT_DOUBLE_EQ(json.at("seconds").as_double(), rows.as_array()[0].at("seconds").as_double());
  // A wrong schedule is refused before anything is timed; --rounds alone is a usage error.
  write_text(path, R"({"version": 1, "workload_key": "other", "steps": []})");
  CliResult bad = run_cli(std::string("bench ") + kSmallMatmul + " --compare '" + path + "'");
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_NE(bad.err.find("not 'matmul_16x16x16"), std::string::npos) << bad.err;
  EXPECT_TRUE(bad.out.empty()) << bad.out;
  CliResult usage = run_cli(std::string("bench ") + kSmallMatmul + " --rounds 3");
  EXPECT_EQ(usage.exit_code, 2) << usage.err;
  EXPECT_NE(usage.err.find("--rounds needs --compare"), std::string::npos) << usage.err;
  std::remove(path.c_str());
}

TEST(Cli, MalformedWorkloadSpecIsAUserError) {
  for (const char* spec : {"matmul:M=abc,N=4,K=4", "matmul:M=4,N=4", "no_such_op:M=4"}) {
    CliResult r =
        run_cli(std::string("show --workload '") + spec + "' --target native --emit steps");
    EXPECT_EQ(r.exit_code, 1) << spec << ": " << r.err;
    EXPECT_EQ(r.err.rfind("tensortune: error: ", 0), 0U) << spec << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << spec;
  }
}

TEST(Cli, CommandLineMistakesAreUsageErrors) {
  struct Case {
    const char* args;
    const char* expected;
  };
  for (const Case& c :
       {Case{"show --workload matmul:M=4,N=4,K=4 --target native --emit ir "
             "--bogus",
             "unknown option '--bogus'"},
        Case{"show --workload", "needs a value"},
        Case{"show --target native --emit ir", "missing required option"},
        Case{"show --workload matmul:M=4,N=4,K=4 --target native --emit wasm", "expects one of"},
        Case{"bench --workload matmul:M=4,N=4,K=4 --target native --repeat x", "--repeat"},
        Case{"frobnicate",
             "unknown command 'frobnicate' (one of: tune, show, bench, compile, tune-model, "
             "compile-model, run-model, report, db, train-model, ops, worker, workers)"},
        Case{"", "missing command (one of: tune, show, bench, compile, tune-model"},
        Case{"-vx show", "unknown option '-vx'"}}) {
    CliResult r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("tensortune: error: ", 0), 0U) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find("--help"), std::string::npos) << c.args << ": " << r.err;
  }
}

// The program-level -v, -vv, ... read as the subcommands' do (cli::verbosity_of): any number of
// v's, repeated flags adding up, --verbose as -v.
TEST(Cli, ProgramLevelVerbositySpellingsMatchTheSubcommands) {
  for (const char* flags : {"-v", "-vv", "-vvvv", "-v -v", "--verbose"}) {
    CliResult r = run_cli(std::string(flags) +
                          " show --workload matmul:M=4,N=4,K=4 --target native --emit steps");
    EXPECT_EQ(r.exit_code, 0) << flags << ": " << r.err;
    EXPECT_NE(r.out.find("# the default schedule: no steps"), std::string::npos)
        << flags << ": " << r.out;
  }
}

TEST(Cli, ShowEmitsCudaForAGpuTargetOnly) {
  const std::string gpu = "show --workload matmul:M=16,N=16,K=16 --target 'cuda -arch=sm_90' ";
  CliResult cuda = run_cli(gpu + "--emit cuda");
  EXPECT_EQ(cuda.exit_code, 0) << cuda.err;
  EXPECT_NE(cuda.out.find("// kernel matmul_16x16x16_float32_kernel0: grid (1, 1, 1)"),
            std::string::npos)
      << cuda.out;
  EXPECT_NE(cuda.out.find("extern \"C\" __global__ void"), std::string::npos) << cuda.out;
  for (const char* args : {"--emit llvm", "--emit asm"}) {
    CliResult r = run_cli(gpu + args);
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find("needs a CPU target"), std::string::npos) << args << ": " << r.err;
  }
  for (const char* args : {"--emit cuda", "--emit ptx"}) {
    CliResult r = run_cli(std::string("show ") + kSmallMatmul + " " + args);
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find("needs a CUDA target"), std::string::npos) << args << ": " << r.err;
  }
}

TEST(Cli, BadScheduleFilesAreUserErrorsNamingTheFile) {
  std::string malformed = temp_path("malformed.json");
  write_text(malformed, R"({"version": 1, "steps": [)");
  std::string missing = temp_path("missing.json");
  std::string wrong_workload = temp_path("wrong_workload.json");
  write_text(wrong_workload,
             R"({"version": 1, "workload_key": "matmul_8x8x8_float32_0", "steps": []})");
  for (const std::string& path : {malformed, missing, wrong_workload}) {
    CliResult r =
        run_cli(std::string("show ") + kSmallMatmul + " --schedule '" + path + "' --emit ir");
    EXPECT_EQ(r.exit_code, 1) << path << ": " << r.err;
    EXPECT_EQ(r.err.rfind("tensortune: error: ", 0), 0U) << r.err;
    EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  }
  std::remove(malformed.c_str());
  std::remove(wrong_workload.c_str());
}

TEST(Cli, AStepThatDoesNotApplyIsAUserErrorNamingTheFile) {
  CliResult keyed = run_cli(std::string("show ") + kSmallMatmul + " --emit steps --json");
  ASSERT_EQ(keyed.exit_code, 0) << keyed.err;
  std::string key = support::Json::parse(keyed.out).at("workload_key").as_string();
  std::string path = temp_path("bad_step.json");
  write_text(path, R"({"version": 1, "workload_key": ")" + key +
                       R"(", "steps": [{"kind": "split", "stage": "C", "axis": "zz", "factor": 4,
                       "nparts": false}]})");
  CliResult r = run_cli(std::string("bench ") + kSmallMatmul + " --schedule '" + path + "'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("zz"), std::string::npos) << r.err;
  std::remove(path.c_str());
}

/// The key of seeded_database()'s workload: its name and the hash of its canonical text.
const std::string kSeedKey = "matmul_8x8x8_float32_" + support::hash_hex("compute");

/// A database with one workload (kSeedKey), two records on one target and a failure.
std::string seeded_database() {
  std::string path = temp_path("seed.db");
  database::Database db = database::Database::open(path);
  database::WorkloadInfo w;
  w.key = kSeedKey;
  w.name = "matmul_8x8x8_float32";
  w.op = "matmul";
  w.canonical_text = "compute";
  w.flop_count = 1024;
  db.put_workload(w);
  std::vector<database::Record> records(3);
  for (size_t i = 0; i < records.size(); ++i) {
    records[i].workload_key = w.key;
    records[i].target = {"llvm -cores=2", "fp"};
    records[i].schedule = "{\"steps\":[" + std::to_string(i) + "]}";
    records[i].median_seconds = 1e-6 * static_cast<double>(3 - i);
    records[i].repeats = {records[i].median_seconds};
    records[i].timestamp = 1700000000 + static_cast<int64_t>(i);
  }
  records[2].status = "WrongResult";
  records[2].median_seconds = 0;
  records[2].error = "C[0, 0] = nan";
  db.add_records(records);
  return path;
}

TEST(CliDb, StatsBestExportAndImportRoundTrip) {
  std::string a = seeded_database();
  CliResult stats = run_cli("db stats --db '" + a + "' --json");
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  support::Json s = support::Json::parse(stats.out);
  EXPECT_EQ(s.at("records").as_int(), 3);
  EXPECT_EQ(s.at("workloads").as_array().at(0).at("by_status").at("WrongResult").as_int(), 1);
  CliResult best = run_cli("db best --db '" + a + "' --key " + kSeedKey + " --k 1 --json");
  ASSERT_EQ(best.exit_code, 0) << best.err;
  support::Json b = support::Json::parse(best.out);
  ASSERT_EQ(b.at("records").as_array().size(), 1U);
  EXPECT_DOUBLE_EQ(b.at("records").as_array()[0].at("seconds").as_double(), 2e-6);
  EXPECT_DOUBLE_EQ(b.at("records").as_array()[0].at("gflops").as_double(), 1024 / 2e-6 / 1e9);

  std::string first = temp_path("a.jsonl");
  std::string second = temp_path("b.jsonl");
  std::string copy = temp_path("copy.db");
  ASSERT_EQ(run_cli("db export --db '" + a + "' --out '" + first + "'").exit_code, 0);
  CliResult imported = run_cli("db import --db '" + copy + "' '" + first + "' --json");
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(support::Json::parse(imported.out).at("imported").as_int(), 3);
  ASSERT_EQ(run_cli("db export --db '" + copy + "' --out '" + second + "'").exit_code, 0);
  EXPECT_EQ(read_text(first), read_text(second));
  EXPECT_FALSE(read_text(first).empty());
}

TEST(CliDb, BadInputIsAOneLineErrorAndStoredDataSurvives) {
  std::string db = seeded_database();
  CliResult missing = run_cli("db stats --db '" + temp_path("absent.db") + "'");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
  std::string bad = temp_path("bad.jsonl");
  write_text(bad, "{\"format\":1,\"kind\":\"record\",\"workload\":\"nope\"}\n");
  CliResult r = run_cli("db import --db '" + db + "' '" + bad + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(bad + ":1:"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  CliResult after = run_cli("db stats --db '" + db + "' --json");
  EXPECT_EQ(support::Json::parse(after.out).at("records").as_int(), 3);
  EXPECT_EQ(run_cli("db import --db '" + db + "' '" + temp_path("none.jsonl") + "'").exit_code, 1);
  EXPECT_EQ(run_cli("db frobnicate --db '" + db + "'").exit_code, 2);
  EXPECT_EQ(run_cli("db best --db '" + db + "' --workload 'matmul:M=0'").exit_code, 1);
}

/// Makes the root page of `index` in `path` claim 32767 cells, as a torn write could.
void damage_index(const std::string& path, const char* index) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_master WHERE name = ?", -1, &st, nullptr);
  sqlite3_bind_text(st, 1, index, -1, SQLITE_STATIC);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  const int64_t page = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekp((page - 1) * 4096 + 3);
  f.write("\x7f\xff", 2);
}

TEST(CliDb, ADamagedDatabaseIsNamedAndNeverWritten) {
  const std::string db = seeded_database();
  const std::string lines = temp_path("rescue.jsonl");
  ASSERT_EQ(run_cli("db export --db '" + db + "' --out '" + lines + "'").exit_code, 0);
  damage_index(db, "records_by_time");
  const std::string before = read_text(db);
  for (const std::string& action :
       std::vector<std::string>{"prune --k 1", "vacuum", "import '" + lines + "'"}) {
    const CliResult r = run_cli("db " + action + " --db '" + db + "'");
    EXPECT_EQ(r.exit_code, 1) << action << "\n" << r.err;
    EXPECT_NE(r.err.find("tensortune: error: database '" + db + "' is damaged"), std::string::npos)
        << action << "\n"
        << r.err;
    EXPECT_EQ(read_text(db), before) << action;
  }
}

std::string replaced_once(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

int64_t records_in(const std::string& db) {
  CliResult stats = run_cli("db stats --db '" + db + "' --json");
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  return stats.exit_code == 0 ? support::Json::parse(stats.out).at("records").as_int() : -1;
}

TEST(CliDb, NoOutputOverwritesTheDatabaseAndMaintenanceNeverCreatesOne) {
  std::string db = seeded_database();
  // The database, another spelling of it, a link to it, its -wal file: refused, data intact.
  std::string link = temp_path("link.db");
  std::remove(link.c_str());
  ASSERT_EQ(::symlink(db.c_str(), link.c_str()), 0);
  const std::string respelled = replaced_once(db, "/tmp/", "/tmp/./");
  for (const std::string& out : {db, respelled, link, db + "-wal"}) {
    CliResult e = run_cli("db export --db '" + db + "' --out '" + out + "'");
    EXPECT_EQ(e.exit_code, 1) << out;
    EXPECT_NE(e.err.find("would destroy the records"), std::string::npos) << e.err;
    CliResult r = run_cli("report --db '" + db + "' --out '" + out + "'");
    EXPECT_EQ(r.exit_code, 1) << out;
    EXPECT_EQ(records_in(db), 3) << out;
  }
  std::string other = seeded_database();
  EXPECT_EQ(
      run_cli("report --db '" + other + "' --compare '" + db + "' --out '" + db + "'").exit_code,
      1);
  EXPECT_EQ(records_in(db), 3);
  std::remove(link.c_str());

  // prune and vacuum of a path that does not exist: an error, and no file appears.
  std::string typo = temp_path("typo.db");
  std::remove(typo.c_str());
  for (const std::string& action : {std::string("prune --k 5"), std::string("vacuum")}) {
    CliResult r = run_cli("db " + action + " --db '" + typo + "'");
    EXPECT_EQ(r.exit_code, 1) << action;
    EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
    EXPECT_FALSE(std::ifstream(typo).good()) << action;
  }
  // A missing required value is a usage error (exit 2), and changes nothing.
  EXPECT_EQ(run_cli("db prune --db '" + db + "'").exit_code, 2);
  EXPECT_EQ(run_cli("db export --db '" + db + "'").exit_code, 2);
  EXPECT_EQ(run_cli("db best --db '" + db + "'").exit_code, 2);
  EXPECT_EQ(run_cli("db import --db '" + db + "'").exit_code, 2);
  // --k 0 keeps nothing: a usage error for prune as for best, and no record is deleted.
  CliResult prune_zero = run_cli("db prune --k 0 --db '" + db + "'");
  EXPECT_EQ(prune_zero.exit_code, 2) << prune_zero.out;
  EXPECT_NE(prune_zero.err.find("1.."), std::string::npos) << prune_zero.err;
  EXPECT_EQ(run_cli("db best --k 0 --db '" + db + "' --key " + kSeedKey).exit_code, 2);
  EXPECT_EQ(records_in(db), 3);
}

TEST(CliDb, ImportChecksTheWholeFileBeforeTheDatabaseIsOpened) {
  std::string db = seeded_database();
  const std::string workload =
      "{\"canonical_text\":\"compute\",\"flop_count\":1024.0,\"format\":1,\"key\":\"" + kSeedKey +
      "\",\"kind\":\"workload\",\"name\":\"matmul_8x8x8_float32\",\"op\":\"matmul\","
      "\"spec\":\"\"}";
  auto record = [&](const std::string& target) {
    return "{\"build_seconds\":0.0,\"error\":\"\",\"fingerprint\":\"fp\",\"format\":1,\"git_"
           "revision\":"
           "\"\",\"kind\":\"record\",\"knobs\":\"{}\",\"median_seconds\":1e-06,\"repeats\":[1e-06],"
           "\"run_seconds\":0.0,\"schedule\":\"{\\\"steps\\\":[9]}\",\"seed\":0,\"status\":\"Ok\","
           "\"target\":\"" +
           target +
           "\",\"timestamp\":1700000009,\"tool_version\":\"\",\"wall_seconds\":0.0,\"workload\":"
           "\"" +
           kSeedKey + "\"}";
  };
  auto import = [&](const std::string& into, const std::string& text) {
    std::string file = temp_path("in.jsonl");
    write_text(file, text);
    return run_cli("db import --db '" + into + "' '" + file + "'");
  };
  // A good file imports (and a target written as tune writes it, "llvm" for native, is found by
  // report --target native).
  CliResult ok = import(db, workload + "\n" + record("llvm") + "\n");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(records_in(db), 4);
  CliResult report = run_cli("report --db '" + db + "' --target native --json");
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(support::Json::parse(report.out).at("workloads").as_array().size(), 1U) << report.out;

  struct Bad {
    std::string text, says;
  };
  const std::string renamed = replaced_once(workload, "\"name\":\"matmul_8x8x8_float32\"",
                                            "\"name\":\"evil_8x8x8_float32\"");
  const std::string no_flops = replaced_once(workload, "1024.0", "-5.0");
  const std::string other_op = replaced_once(workload, "\"op\":\"matmul\"", "\"op\":\"conv2d\"");
  for (const Bad& bad :
       {Bad{renamed, "is not its name and the hash"}, Bad{no_flops, "must be positive"},
        Bad{other_op, "differs from the one the database holds"},
        Bad{workload + "\n" + record("bogus target!!"), "does not parse"},
        Bad{workload + "\n" + record("  llvm "), "not written as the database"}}) {
    CliResult r = import(db, bad.text + "\n");
    EXPECT_EQ(r.exit_code, 1) << bad.text;
    EXPECT_NE(r.err.find(bad.says), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nothing was imported"), std::string::npos) << r.err;
  }
  EXPECT_EQ(records_in(db), 4);
  // A bad file does not create the database (nor its folder).
  std::string folder = temp_path("never");
  CliResult r = import(folder + "/sub/x.db", renamed + "\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(std::ifstream(folder + "/sub/x.db").good());
}

TEST(CliDb, VerbosityBeforeTheActionAndAReportRecordOfAnotherWorkload) {
  std::string db = seeded_database();
  CliResult list = run_cli("db -vv list --db '" + db + "'");
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("3 records"), std::string::npos) << list.out;
  // A record the report would not show (its workload filtered out) is an error, not ignored.
  database::WorkloadInfo other;
  other.name = "relu_4_float32";
  other.op = "relu";
  other.canonical_text = "relu";
  other.key = other.name + "_" + support::hash_hex(other.canonical_text);
  other.flop_count = 4;
  {
    database::Database d = database::Database::open(db);
    d.put_workload(other);
    database::Record r;
    r.workload_key = other.key;
    r.target = {"llvm -cores=2", "fp"};
    r.schedule = "{\"steps\":[]}";
    r.median_seconds = 1e-6;
    r.repeats = {1e-6};
    r.timestamp = 1700000100;
    d.add_records({r});
  }
  CliResult report = run_cli("report --db '" + db + "' --record 1 --workload " + other.key);
  EXPECT_EQ(report.exit_code, 1) << report.err;
  EXPECT_NE(report.err.find("does not include"), std::string::npos) << report.err;
  EXPECT_EQ(run_cli("report --db '" + db + "' --record 1 --workload " + kSeedKey).exit_code, 0);
}

TEST(CliDb, MaintenanceAndExportPrintJsonWhenAsked) {
  std::string db = seeded_database();
  for (const std::string& action : {std::string("prune --k 1"), std::string("vacuum"),
                                    "export --out '" + temp_path("j.jsonl") + "'"}) {
    CliResult r = run_cli("db " + action + " --db '" + db + "' --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const support::Json j = support::Json::parse(r.out);
    EXPECT_TRUE(j.is_object()) << r.out;
  }
  EXPECT_EQ(records_in(db), 1);  // prune --k 1 kept the best
}

// The CUDA driver and NVRTC are loaded with dlopen when a GPU target asks for them: linking either
// would stop the binary from starting on a machine without a driver or without CUDA.
TEST(Cli, BinaryDoesNotLinkTheCudaDriverOrNvrtc) {
  std::string command = std::string("ldd '") + TT_TENSORTUNE_PATH + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string libraries;
  std::array<char, 4096> chunk{};
  size_t n = 0;
  while ((n = fread(chunk.data(), 1, chunk.size(), pipe)) > 0) {
    libraries.append(chunk.data(), n);
  }
  ASSERT_EQ(pclose(pipe), 0) << libraries;
  EXPECT_NE(libraries.find("libc.so"), std::string::npos) << libraries;
  EXPECT_EQ(libraries.find("libcuda"), std::string::npos) << libraries;
  EXPECT_EQ(libraries.find("libnvrtc"), std::string::npos) << libraries;
  EXPECT_EQ(libraries.find("libcudart"), std::string::npos) << libraries;
}

}  // namespace
}  // namespace tensortune

// SPDX-License-Identifier: Apache-2.0
// Zero-shot from the command line: compile without a record says where each schedule came from,
// --no-zero-shot keeps the default, and a model of another feature version is an error when the
// user names it and a warning (prior ranking) when it is the shipped one; tune's time budget.
#include "cli_runner.h"
#include "tensortune/cost_model/features.h"
#include "tensortune/support/json.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tensortune::e2e {
namespace {

const char* kMatmul = "--workload matmul:M=64,N=48,K=32 --target native";

support::Json compile_json(const std::string& extra, const std::string& out) {
  CliResult r = run_cli(std::string("compile ") + kMatmul + " --out '" + out + "' --json " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return support::Json::parse(r.out);
}

/// A copy of the shipped model that claims feature version 1.
std::string old_version_model() {
  const char* root = std::getenv("TT_SOURCE_DIR");
  std::ifstream in(std::string(root != nullptr ? root : ".") + "/tuning_logs/zero_shot/cpu.v" +
                   std::to_string(cost_model::kFeatureVersion) + ".json");
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  const std::string attr =
      "\"tt_feature_version\":\"" + std::to_string(cost_model::kFeatureVersion) + "\"";
  const size_t at = json.find(attr);
  EXPECT_NE(at, std::string::npos);
  if (at != std::string::npos)
    json.replace(at, attr.size(), "\"tt_feature_version\":\"1\"");
  const std::string path = temp_path("old_model.json");
  std::ofstream(path) << json;
  return path;
}

TEST(ZeroShotCli, CompileWithoutARecordUsesTheShippedModelAndSaysSo) {
  const std::string out = temp_path("zs_out");
  const support::Json j = compile_json("", out);
  const support::Json& f = j.at("functions").as_array().at(0);
  EXPECT_EQ(f.at("source").as_string(), "zero-shot");
  EXPECT_EQ(f.at("provenance").as_string(), "zero-shot (cost model)");
  EXPECT_EQ(j.at("untuned").size(), 1U);
  std::filesystem::remove_all(out);
}

TEST(ZeroShotCli, NoZeroShotKeepsTheDefaultSchedule) {
  const std::string out = temp_path("zs_off");
  const support::Json j = compile_json("--no-zero-shot", out);
  EXPECT_EQ(j.at("functions").as_array().at(0).at("source").as_string(), "default");
  std::filesystem::remove_all(out);
}

TEST(ZeroShotCli, AModelOfAnotherFeatureVersionIsRefusedOrFallsBack) {
  const std::string model = old_version_model();
  const std::string out = temp_path("zs_old");
  // Named by the user: an error, nothing written.
  CliResult named = run_cli(std::string("compile ") + kMatmul + " --out '" + out +
                            "' --zero-shot-model '" + model + "'");
  EXPECT_EQ(named.exit_code, 1);
  EXPECT_NE(named.err.find("feature version 1"), std::string::npos) << named.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  // Found as the shipped model: a warning, and the prior ranks the zero-shot schedules.
  ::setenv("TT_ZERO_SHOT_MODEL", model.c_str(), 1);
  CliResult shipped = run_cli(std::string("compile ") + kMatmul + " --out '" + out + "' --json");
  ::unsetenv("TT_ZERO_SHOT_MODEL");
  ASSERT_EQ(shipped.exit_code, 0) << shipped.err;
  EXPECT_NE(shipped.err.find("zero-shot model cannot be used"), std::string::npos) << shipped.err;
  EXPECT_EQ(support::Json::parse(shipped.out)
                .at("functions")
                .as_array()
                .at(0)
                .at("provenance")
                .as_string(),
            "zero-shot (sketch prior)");
  std::filesystem::remove_all(out);
  std::filesystem::remove(model);
}

TEST(ZeroShotCli, BenchScheduleAutoIsWhatCompileBuilds) {
  CliResult r = run_cli(std::string("bench ") + kMatmul + " --schedule auto --json --repeat 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(support::Json::parse(r.out).at("schedule").as_string(), "zero-shot (cost model)");
}

TEST(ShippedLogs, UpdateListAndCompileFromThem) {
  // A tiny tuned database becomes a shipped log; compile then uses its record, with provenance.
  const std::string db = temp_path("own.db");
  const std::string shipped = temp_path("shipped.db");
  ASSERT_EQ(run_cli("tune --workload matmul:M=24,N=24,K=24 --target native --trials 4 --batch 4 "
                    "--confirm 0 --no-zero-shot --db '" +
                    db + "'")
                .exit_code,
            0);
  CliResult update =
      run_cli("db shipped-update --db '" + db + "' --k 2 --shipped '" + shipped + "' --json");
  ASSERT_EQ(update.exit_code, 0) << update.err;
  EXPECT_EQ(support::Json::parse(update.out).at("imported").as_int(), 2);
  // Left in the rollback-journal mode (file format bytes 18 and 19 are 1; WAL makes them 2), so a
  // reader of a shipped copy needs no -wal or -shm file beside it.
  std::ifstream header(shipped, std::ios::binary);
  char bytes[20] = {};
  header.read(bytes, sizeof bytes);
  EXPECT_EQ(bytes[18], 1);
  EXPECT_EQ(bytes[19], 1);
  EXPECT_FALSE(std::filesystem::exists(shipped + "-wal"));
  CliResult list = run_cli("db shipped --shipped '" + shipped + "' --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const support::Json listed = support::Json::parse(list.out);
  const support::Json& t = listed.at("targets").as_array().at(0);
  EXPECT_TRUE(t.at("applies_here").as_bool());
  ::setenv("TT_SHIPPED_LOGS", shipped.c_str(), 1);
  const std::string out = temp_path("shipped_out");
  CliResult c = run_cli("compile --workload matmul:M=24,N=24,K=24 --target native --out '" + out +
                        "' --json");
  CliResult off = run_cli("compile --workload matmul:M=24,N=24,K=24 --target native --out '" + out +
                          "' --json --no-shipped");
  ::unsetenv("TT_SHIPPED_LOGS");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const support::Json built = support::Json::parse(c.out);
  const support::Json& f = built.at("functions").as_array().at(0);
  EXPECT_EQ(f.at("source").as_string(), "shipped");
  EXPECT_NE(f.at("provenance").as_string().find("shipped record #"), std::string::npos);
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(support::Json::parse(off.out).at("functions").as_array().at(0).at("source").as_string(),
            "zero-shot");
  // An import that does not check out changes nothing.
  const std::string bad = temp_path("bad.jsonl");
  std::ofstream(bad) << "{\"kind\": \"record\", \"workload_key\": \"nope\"}\n";
  EXPECT_EQ(run_cli("db shipped-import '" + bad + "' --shipped '" + shipped + "'").exit_code, 1);
  CliResult after = run_cli("db shipped --shipped '" + shipped + "' --json");
  EXPECT_EQ(support::Json::parse(after.out).at("targets").as_array().at(0).at("records").as_int(),
            2);
  for (const std::string& path : {db, shipped, bad, out})
    std::filesystem::remove_all(path);
}

TEST(TimeBudget, TuneWithoutATrialLimitStopsOnTheClockWithEverythingStored) {
  const std::string db = temp_path("budget.db");
  CliResult r = run_cli(
      "tune --workload matmul:M=32,N=32,K=32 --target native --time-budget 2s "
      "--batch 4 --confirm 0 --db '" +
      db + "' --json --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const support::Json j = support::Json::parse(r.out);
  EXPECT_EQ(j.at("stop_reason").as_string(), "the time budget is spent");
  const int64_t trials = j.at("trials").as_int();
  EXPECT_GT(trials, 0);
  // Every measured trial is in the database: a resumed job with a trial budget of exactly that
  // many measures nothing more.
  CliResult again = run_cli("tune --workload matmul:M=32,N=32,K=32 --target native --trials " +
                            std::to_string(trials) + " --confirm 0 --db '" + db + "' --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(support::Json::parse(again.out).at("measured").as_int(), 0);
  std::filesystem::remove(db);
}

TEST(TimeBudget, ABadDurationIsAClearError) {
  for (const char* bad : {"10x", "-5m", "0", "m"}) {
    CliResult r = run_cli(std::string("tune --workload matmul:M=8,N=8,K=8 --target native "
                                      "--time-budget ") +
                          bad + " --db '" + temp_path("bad_budget.db") + "'");
    EXPECT_EQ(r.exit_code, 1) << bad;
    EXPECT_NE(r.err.find("--time-budget"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace tensortune::e2e

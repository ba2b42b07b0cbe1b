// SPDX-License-Identifier: Apache-2.0
// `tensortune tune` and `bench` for a CUDA target as a user runs them: without a device, one
// error line, exit 1 and no database touched; with one (label gpu), a short tuning run that
// stores records, and bench of the best one.
#include "cli_runner.h"
#include "tensortune/database/database.h"
#include "tensortune/runtime/cuda_driver.h"
#include "tensortune/search/zero_shot.h"
#include "tensortune/support/json.h"
#include "tensortune/target/target.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

namespace tensortune {
namespace {

using e2e::run_cli;
using e2e::temp_path;

std::string gpu_tune_args(const std::string& db) {
  return "tune --workload matmul:M=256,N=256,K=256 --target 'cuda -arch=sm_90' --db '" + db +
         "' --trials 4 --batch 4 --tuner random --progress none";
}

TEST(GpuTuneCli, WithoutADeviceOneErrorLineAndNoDatabase) {
  const std::string why = runtime::cuda_unavailable_reason();
  if (why.empty()) {
    GTEST_SKIP() << "a CUDA device is present";
  }
  // A database in a folder that does not exist yet: neither may be created.
  const std::string folder = temp_path("gpu_tune_no_device");
  std::filesystem::remove_all(folder);
  const std::string db = folder + "/gpu.db";
  e2e::CliResult r = run_cli(gpu_tune_args(db));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "tensortune: error: measure: no CUDA device: " + why + "\n");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(std::filesystem::exists(folder));

  // An existing file is left byte for byte as it was.
  const std::string existing = temp_path("gpu_tune_existing.db");
  e2e::write_text(existing, "not a database, and not to be touched\n");
  r = run_cli(gpu_tune_args(existing));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(e2e::read_text(existing), "not a database, and not to be touched\n");

  r = run_cli("bench --workload matmul:M=16,N=16,K=16 --target 'cuda -arch=sm_80' --repeat 1");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "tensortune: error: measure: no CUDA device: " + why + "\n");
}

TEST(GpuTuneCli, TunesAMatmulOnTheDevice) {
  const std::string why = runtime::cuda_unavailable_reason();
  if (!why.empty()) {
    GTEST_SKIP() << "no CUDA device: " << why;
  }
  const std::string db = temp_path("gpu_tune.db");
  std::filesystem::remove(db);
  e2e::CliResult r = run_cli(gpu_tune_args(db) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  support::Json out = support::Json::parse(r.out);
  EXPECT_EQ(out.at("trials").as_int(), 4);
  EXPECT_GT(out.at("best").at("seconds").as_double(), 0);
  EXPECT_TRUE(std::filesystem::exists(db));

  r = run_cli("bench --workload matmul:M=256,N=256,K=256 --target 'cuda -arch=sm_90' --db '" + db +
              "' --schedule best --repeat 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  support::Json bench = support::Json::parse(r.out);
  EXPECT_EQ(bench.at("schedule").as_string().rfind("record", 0), 0U) << r.out;
  EXPECT_GT(bench.at("seconds").as_double(), 0);
  EXPECT_EQ(bench.at("repeats").size(), 3U);
}

// No tuned record may end slower than the zero-shot pick compile uses without it: the model-
// guided tuner measures that pick in its first batch.
TEST(GpuTuneCli, TheFirstBatchMeasuresTheZeroShotPick) {
  const std::string why = runtime::cuda_unavailable_reason();
  if (!why.empty()) {
    GTEST_SKIP() << "no CUDA device: " << why;
  }
  const std::string db = temp_path("gpu_tune_zero_shot.db");
  std::filesystem::remove(db);
  const std::string spec = "matmul:M=512,N=256,K=128";
  const e2e::CliResult r =
      run_cli("tune --workload " + spec + " --target 'cuda -arch=sm_90' --db '" + db +
              "' --trials 4 --batch 4 --tuner xgb --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const te::Workload workload = te::make_workload(spec);
  const std::optional<search::ZeroShotPick> pick =
      search::ZeroShot(nullptr).pick(workload, target::Target::parse("cuda -arch=sm_90"));
  ASSERT_TRUE(pick.has_value());
  const database::Database stored = database::Database::open(db, true);
  bool measured = false;
  for (const database::TargetKey& key : stored.targets()) {
    for (const database::Record& record : stored.history(workload.key(), key)) {
      measured =
          measured || support::Json::parse(record.knobs).dump() == pick->configuration.dump();
    }
  }
  EXPECT_TRUE(measured) << pick->config;
}

}  // namespace
}  // namespace tensortune

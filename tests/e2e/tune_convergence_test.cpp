// SPDX-License-Identifier: Apache-2.0
// bench/tune_convergence's --keep folder: one database per workload, tuner and seed even where two
// workloads share an operator, and a folder already holding one of them is refused before any
// work, the earlier file untouched. (cli_runner's TT_TENSORTUNE_PATH is the bench's executable.)
#include "cli_runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace tensortune {
namespace {

namespace fs = std::filesystem;
using e2e::run_cli;
using e2e::temp_path;

constexpr const char* kTiny =
    " --tuners=random --seeds=0 --trials=4 --checkpoints=4 --remeasure=0 --confirm=0";

TEST(TuneConvergence, KeepsOneDatabasePerWorkloadWhenTwoShareAnOperator) {
  const std::string dir = temp_path("tune_convergence_keep");
  fs::remove_all(dir);
  e2e::CliResult r = run_cli("--workloads 'matmul:M=16,N=16,K=16;matmul:M=32,N=32,K=32;relu:M=8,N=8'" +
                             std::string(kTiny) + " --keep '" + dir + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* file : {"matmul_16x16x16_float32_random_0.db",
                           "matmul_32x32x32_float32_random_0.db", "relu_random_0.db"}) {
    EXPECT_TRUE(fs::exists(fs::path(dir) / file)) << file;
  }
}

TEST(TuneConvergence, AKeepFolderHoldingARunsDatabaseIsRefused) {
  const std::string dir = temp_path("tune_convergence_taken");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string earlier = dir + "/matmul_random_0.db";
  e2e::write_text(earlier, "an earlier run's results");
  e2e::CliResult r =
      run_cli("--workloads 'matmul:M=16,N=16,K=16'" + std::string(kTiny) + " --keep '" + dir + "'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("already holds matmul_random_0.db"), std::string::npos) << r.err;
  EXPECT_EQ(e2e::read_text(earlier), "an earlier run's results");
  EXPECT_TRUE(r.out.empty()) << r.out;  // refused before the peak is measured

  e2e::CliResult twice =
      run_cli("--workloads 'matmul:M=16,N=16,K=16;matmul:M=16,N=16,K=16'" + std::string(kTiny));
  EXPECT_EQ(twice.exit_code, 1) << twice.err;
  EXPECT_NE(twice.err.find("names matmul_16x16x16_float32 twice"), std::string::npos) << twice.err;
}

}  // namespace
}  // namespace tensortune

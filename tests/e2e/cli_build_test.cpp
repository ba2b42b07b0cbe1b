// SPDX-License-Identifier: Apache-2.0
// Builds that could run away (an imported record with a huge pragma_unroll, --build-timeout of
// compile, show and bench) or could not run here (a target with CPU features the host lacks).
#include "cli_runner.h"
#include "tensortune/database/database.h"
#include "tensortune/support/json.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tensortune {
namespace {

using e2e::CliResult;
using e2e::run_cli;
using e2e::temp_path;

constexpr const char* kWorkload = "--workload matmul:M=32,N=32,K=32 --target 'llvm -cores=1'";

/// Seconds `args` took, with its result in `out`.
double timed(const std::string& args, CliResult* out) {
  const auto start = std::chrono::steady_clock::now();
  *out = run_cli(args);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// A database tuned for kWorkload, plus an imported-looking record that claims 1 ns with the
/// tuned schedule and a pragma_unroll of max_step 1e9 on the outermost axis; returns its id.
int64_t plant_huge_unroll(const std::string& db_path) {
  CliResult tuned = run_cli(std::string("tune ") + kWorkload + " --db '" + db_path +
                            "' --trials 2 --batch 2 --tuner random --confirm 0");
  EXPECT_EQ(tuned.exit_code, 0) << tuned.err;
  database::Database db = database::Database::open(db_path);
  std::vector<database::Record> records = db.all_records();
  EXPECT_FALSE(records.empty());
  if (records.empty())
    return 0;
  database::Record r = records.front();
  support::Json schedule = support::Json::parse(r.schedule);
  support::Json step = support::Json::object();
  step["kind"] = "pragma_unroll";
  step["stage"] = "C";
  step["axis"] = "i";
  step["max_step"] = int64_t{1000000000};
  support::Json steps = support::Json::array();
  steps.push_back(step);  // on the root axis, before any split renames it
  for (const support::Json& s : schedule.at("steps").as_array())
    steps.push_back(s);
  schedule["steps"] = steps;
  r.schedule = schedule.dump();
  r.status = "Ok";
  r.median_seconds = 1e-9;
  r.repeats = {1e-9};
  return db.add_records({r}).at(0);
}

TEST(CliBuild, AHugeImportedUnrollCompilesShowsAndBenchesQuickly) {
  const std::string db = temp_path("unroll.db");
  const int64_t id = plant_huge_unroll(db);
  ASSERT_GT(id, 0);
  // Before: compile and bench of this record ran 101 s and took 2.1 GB.
  CliResult r;
  const double compile_s = timed(std::string("compile ") + kWorkload + " --db '" + db +
                                     "' --out '" + temp_path("lib") + "' --json",
                                 &r);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(support::Json::parse(r.out).at("functions").as_array().at(0).at("record_id").as_int(),
            id);
  EXPECT_LT(compile_s, 30);
  const double show_s = timed(std::string("show ") + kWorkload + " --db '" + db + "' --record " +
                                  std::to_string(id) + " --emit asm",
                              &r);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(show_s, 30);
  const double bench_s = timed(std::string("bench ") + kWorkload + " --db '" + db +
                                   "' --schedule best --repeat 1 --min-repeat-ms 1",
                               &r);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(bench_s, 30);
}

TEST(CliBuild, NineLaneMaskedRowsComputeTheReferenceOnAvx2) {
  // A 3x3 conv whose padding is made per input-channel block, each padded row one 9-lane vector
  // under a mask. LLVM 19 lowered such odd-width masked loads wrongly for AVX2 (every right
  // border read the next row's first element); AVX-512 was right. ResNet-18 compiled for a Zen 3
  // was 2.8% off PyTorch through this one kernel.
  const std::string target = "llvm -mcpu=znver3 -cores=2";
  const std::string spec = "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,pad=1,bias=1";
  CliResult key = run_cli("show --workload " + spec + " --target native --emit steps --json");
  ASSERT_EQ(key.exit_code, 0) << key.err;
  const std::string file = temp_path("nine_lanes.json");
  std::ofstream(file) << "{\"version\":1,\"workload_key\":\""
                      << support::Json::parse(key.out).at("schedule").at("workload_key").as_string()
                      << "\",\"steps\":"
                      << R"([
    {"kind":"cache_write","stage":"conv","scope":"local","blocks":[[1,16]]},
    {"kind":"split","stage":"conv","axis":"x","factor":7,"nparts":false},
    {"kind":"split","stage":"conv","axis":"x.i","factor":7,"nparts":false},
    {"kind":"compute_at","stage":"conv.local","target_stage":"conv","target_axis":"x.i.o"},
    {"kind":"split","stage":"conv.local","axis":"n","factor":1,"nparts":false},
    {"kind":"split","stage":"conv.local","axis":"y","factor":1,"nparts":false},
    {"kind":"split","stage":"conv.local","axis":"x","factor":7,"nparts":false},
    {"kind":"split","stage":"conv.local","axis":"rc","factor":8,"nparts":false},
    {"kind":"split","stage":"conv.local","axis":"ry","factor":3,"nparts":false},
    {"kind":"split","stage":"conv.local","axis":"rx","factor":3,"nparts":false},
    {"kind":"reorder","stage":"conv.local","order":["rc.o","ry.o","rx.o","n.o","f","y.o","x.o",
     "rc.i","ry.i","rx.i","n.i","y.i","x.i","f.b"]},
    {"kind":"split","stage":"conv_pad","axis":"l","factor":16,"nparts":false},
    {"kind":"vectorize","stage":"conv_pad","axis":"l.i"},
    {"kind":"compute_at","stage":"conv_pad","target_stage":"conv.local","target_axis":"rx.o"}]})";
  ASSERT_TRUE(std::ofstream(file, std::ios::app).good());
  // bench checks the results against the default schedule's before it times anything.
  CliResult r = run_cli("bench --workload " + spec + " --target '" + target + "' --schedule " +
                        file + " --repeat 1 --min-repeat-ms 1");
  if (r.err.find("uses CPU features this machine lacks") != std::string::npos)
    GTEST_SKIP() << "the host cannot run Zen 3 code: " << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("wrong results"), std::string::npos) << r.err;
  std::filesystem::remove(file);
}

TEST(CliBuild, ABuildOverItsTimeoutIsAUserError) {
  const std::string out = temp_path("timeout_lib");
  for (const std::string& command :
       {std::string("compile ") + kWorkload + " --out '" + out + "'",
        std::string("show ") + kWorkload + " --emit asm",
        std::string("bench ") + kWorkload + " --repeat 1 --min-repeat-ms 1"}) {
    CliResult r = run_cli(command + " --build-timeout 0.001");
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.err;
    EXPECT_NE(r.err.find("the build took longer than 0.001 s (see --build-timeout)"),
              std::string::npos)
        << r.err;
  }
  EXPECT_EQ(run_cli(std::string("show ") + kWorkload + " --emit asm --build-timeout 0").exit_code,
            2);
}

/// True when /proc/cpuinfo's flags include `flag`.
bool cpu_has(const std::string& flag) {
  const std::string info = e2e::read_text("/proc/cpuinfo");
  return info.find(" " + flag + " ") != std::string::npos ||
         info.find(" " + flag + "\n") != std::string::npos;
}

TEST(CliBuild, ATargetWithFeaturesTheHostLacksIsRefusedToRunAndWarnedToBuild) {
  if (!cpu_has("avx2") || cpu_has("amx_tile"))
    GTEST_SKIP() << "needs an x86 host with AVX2 and without AMX";
  // Before: tune ran, and each candidate died of SIGILL with no warning.
  const std::string target = "--target 'llvm -mcpu=graniterapids'";
  const std::string db = temp_path("foreign.db");
  CliResult tune = run_cli("tune --workload matmul:M=8,N=8,K=8 " + target +
                           " --trials 2 --batch 2 --db '" + db + "'");
  EXPECT_EQ(tune.exit_code, 1) << tune.err;
  EXPECT_NE(tune.err.find("uses CPU features this machine lacks (amx-bf16"), std::string::npos)
      << tune.err;
  EXPECT_FALSE(std::filesystem::exists(db));
  CliResult bench = run_cli("bench --workload matmul:M=8,N=8,K=8 " + target);
  EXPECT_EQ(bench.exit_code, 1) << bench.err;
  CliResult show = run_cli("show --emit asm --workload matmul:M=8,N=8,K=8 " + target);
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.err.find("warning: show: target 'llvm -mcpu=graniterapids' uses CPU features"),
            std::string::npos)
      << show.err;
  CliResult native = run_cli("show --emit asm --workload matmul:M=8,N=8,K=8 --target native");
  EXPECT_EQ(native.err, "");
}

}  // namespace
}  // namespace tensortune

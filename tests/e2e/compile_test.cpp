// SPDX-License-Identifier: Apache-2.0
// `tensortune compile` as users run it: the .so it writes is loaded and checked by a separate C
// program that knows nothing of tensortune, it depends on system libraries only, records are
// applied or adapted, and bad input is a one-line error. Also show/bench with --db, and CUDA
// targets (CUDA C, PTX and a launch manifest).
#include "tensortune/driver/compile.h"

#include "cli_runner.h"
#include "common/text.h"
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/database/database.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/json.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

namespace tensortune::e2e {
namespace {
using schedule::Split;
using schedule::Step;
using test::count;

/// Removes the files and folders a test made (a database leaves -wal and -shm beside it).
class Cleanup {
 public:
  Cleanup() = default;
  Cleanup(const Cleanup&) = delete;
  Cleanup& operator=(const Cleanup&) = delete;
  ~Cleanup() {
    for (const std::string& p : paths_) {
      std::error_code ec;
      std::filesystem::remove_all(p, ec);
      std::filesystem::remove(p + "-wal", ec);
      std::filesystem::remove(p + "-shm", ec);
    }
  }
  /// Remembers `path` and returns it.
  const std::string& operator()(const std::string& path) {
    paths_.push_back(path);
    return paths_.back();
  }

 private:
  std::vector<std::string> paths_;
};

/// stdout of a shell command, and its exit code.
std::pair<int, std::string> shell(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return {-1, ""};
  }
  std::array<char, 4096> chunk{};
  for (size_t n; (n = fread(chunk.data(), 1, chunk.size(), pipe)) > 0;) {
    out.append(chunk.data(), n);
  }
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

/// Runs the standalone loader on a matmul kernel with an empty environment.
std::pair<int, std::string> load(
    const std::string& so, const std::string& fn, int m, int n, int k) {
  return shell("env -i '" + std::string(TT_LOAD_KERNEL_PATH) + "' '" + so + "' " + fn + " " +
               std::to_string(m) + " " + std::to_string(n) + " " + std::to_string(k) + " 2>&1");
}

/// The library has no rpath, every NEEDED entry is a system library, and all of them resolve
/// outside the build tree.
void expect_only_system_dependencies(const std::string& so) {
  auto [readelf_rc, dynamic] = shell("readelf -d '" + so + "'");
  ASSERT_EQ(readelf_rc, 0);
  EXPECT_EQ(dynamic.find("RPATH"), std::string::npos) << dynamic;
  EXPECT_EQ(dynamic.find("RUNPATH"), std::string::npos) << dynamic;
  for (size_t at = dynamic.find("(NEEDED)"); at != std::string::npos;
       at = dynamic.find("(NEEDED)", at + 1)) {
    std::string lib = dynamic.substr(dynamic.find('[', at) + 1);
    lib = lib.substr(0, lib.find(']'));
    bool system = lib.rfind("libc.so", 0) == 0 || lib.rfind("libm.so", 0) == 0 ||
                  lib.rfind("libstdc++.so", 0) == 0 || lib.rfind("libgcc_s.so", 0) == 0 ||
                  lib.rfind("libpthread.so", 0) == 0 || lib.rfind("ld-linux", 0) == 0;
    EXPECT_TRUE(system) << lib;
  }
  auto [ldd_rc, resolved] = shell("ldd '" + so + "'");
  EXPECT_EQ(ldd_rc, 0) << resolved;
  EXPECT_EQ(resolved.find("not found"), std::string::npos) << resolved;
  EXPECT_EQ(resolved.find(TT_BUILD_DIR), std::string::npos) << resolved;
}

/// A database file holding `specs`' workloads (and no records).
std::string database_with(const std::vector<std::string>& specs) {
  std::string path = temp_path("tuning.db");
  database::Database db = database::Database::open(path);
  for (const std::string& spec : specs) {
    te::Workload w = te::make_workload(spec);
    db.put_workload({w.key(), w.name(), w.canonical_text(), w.flop_count(),
                     te::parse_workload_spec(spec).name, spec});
  }
  return path;
}

/// Adds an Ok record of `spec` with `steps` on the identity of --target `target`; returns its id.
int64_t add_record(const std::string& db_path,
                   const std::string& spec,
                   const std::vector<Step>& steps,
                   double seconds,
                   const std::string& target = "native") {
  database::Database db = database::Database::open(db_path);
  te::Workload w = te::make_workload(spec);
  database::Record r;
  r.workload_key = w.key();
  r.target = driver::target_key(target::Target::parse(target));
  r.schedule = schedule::to_json(schedule::Schedule{w.key(), steps}).dump();
  r.median_seconds = seconds;
  r.repeats = {seconds};
  r.timestamp = 1700000000;
  return db.add_records({r}).at(0);
}

std::vector<Step> tiled(int64_t factor) {
  return {Split{"C", "i", factor, false}, Split{"C", "j", factor, false},
          schedule::Reorder{"C", {"i.o", "j.o", "k", "i.i", "j.i"}},
          schedule::Annotate{"C", "i.o", ir::ForKind::Parallel},
          schedule::Annotate{"C", "j.i", ir::ForKind::Vectorized}};
}

TEST(CliCompile, WritesALibraryThatAProgramWithoutTensortuneLoadsAndRuns) {
  Cleanup clean;
  std::string db = clean(database_with({}));
  std::string out = clean(temp_path("out"));
  CliResult r = run_cli("compile --workload matmul:M=64,N=48,K=32 --target native --db '" + db +
                        "' --out '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string so = out + "/matmul_64x48x32_float32.so";
  std::string header = read_text(out + "/matmul_64x48x32_float32.h");
  // No record: a zero-shot schedule, which the program below must run correctly.
  EXPECT_NE(r.out.find("matmul_64x48x32_float32: zero-shot ("), std::string::npos) << r.out;
  EXPECT_EQ(count(r.err, "tensortune: warning:"), 1U) << r.err;
  EXPECT_EQ(count(r.err, "matmul_64x48x32_float32"), 1U) << r.err;
  EXPECT_NE(header.find("int32_t matmul_64x48x32_float32(void* const* buffers);"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("buffers[2]  output  float C[64, 48]"), std::string::npos) << header;

  auto [rc, text] = load(so, "matmul_64x48x32_float32", 64, 48, 32);
  EXPECT_EQ(rc, 0) << text;
  expect_only_system_dependencies(so);
}

TEST(CliCompile, AppliesTheBestRecordAndReportsItInJson) {
  Cleanup clean;
  std::string spec = "matmul:M=64,N=48,K=32";
  std::string db = clean(database_with({spec}));
  add_record(db, spec, tiled(4), 2e-5);
  int64_t best = add_record(db, spec, tiled(16), 1e-5);
  std::string out = clean(temp_path("out"));
  CliResult r = run_cli("compile --workload " + spec + " --target native --db '" + db +
                        "' --out '" + out + "' --name my_matmul --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  support::Json json = support::Json::parse(r.out);
  EXPECT_EQ(json.at("library").as_string(), out + "/libmy_matmul.so");
  EXPECT_EQ(json.at("target").as_string(), "llvm");
  const support::Json& f = json.at("functions").as_array().at(0);
  EXPECT_EQ(f.at("name").as_string(), "my_matmul");
  EXPECT_EQ(f.at("source").as_string(), "record");
  EXPECT_EQ(f.at("record_id").as_int(), best);
  EXPECT_EQ(f.at("steps").as_int(), 5);
  EXPECT_EQ(json.at("untuned").size(), 0U);
  EXPECT_EQ(json.at("warnings").size(), 0U);
  // The parallel loop pulls tensortune's runtime (its thread pool) into the library.
  auto [rc, text] = load(out + "/my_matmul.so", "my_matmul", 64, 48, 32);
  EXPECT_EQ(rc, 0) << text;
  auto [nm_rc, symbols] = shell("nm -D --defined-only '" + out + "/my_matmul.so'");
  EXPECT_EQ(nm_rc, 0);
  EXPECT_NE(symbols.find(" T my_matmul"), std::string::npos) << symbols;
  EXPECT_NE(symbols.find(" T my_matmul_set_num_threads"), std::string::npos) << symbols;
  EXPECT_NE(symbols.find(" T my_matmul_get_num_threads"), std::string::npos) << symbols;
  EXPECT_EQ(symbols.find("tt_parallel_for"), std::string::npos) << "the runtime stays private";
  expect_only_system_dependencies(out + "/my_matmul.so");
}

TEST(CliCompile, AdaptsARecordOfAnotherShape) {
  Cleanup clean;
  std::string db = clean(database_with({"matmul:M=64,N=64,K=64"}));
  int64_t id = add_record(db, "matmul:M=64,N=64,K=64", tiled(32), 1e-5);
  std::string out = clean(temp_path("out"));
  CliResult r = run_cli("compile --workload matmul:M=16,N=48,K=20 --target native --db '" + db +
                        "' --out '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string from = "adapted from record #" + std::to_string(id) + " (matmul_64x64x64_float32)";
  EXPECT_NE(r.out.find(from), std::string::npos) << r.out;
  EXPECT_EQ(count(r.err, "tensortune: warning:"), 1U) << r.err;
  auto [rc, text] =
      load(out + "/matmul_16x48x20_float32.so", "matmul_16x48x20_float32", 16, 48, 20);
  EXPECT_EQ(rc, 0) << text;
  // --json lists the warning stderr gave: the workload without a record of its own.
  CliResult j = run_cli("compile --workload matmul:M=16,N=48,K=20 --target native --db '" + db +
                        "' --out '" + out + "' --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const support::Json warnings = support::Json::parse(j.out).at("warnings");
  ASSERT_EQ(warnings.size(), 1U) << j.out;
  EXPECT_NE(warnings.as_array().at(0).as_string().find("matmul_16x48x20_float32"),
            std::string::npos)
      << j.out;
}

// For a CUDA target: CUDA C and PTX per function and a manifest of buffers and launches, the
// schedule from the record tuned for that target.
TEST(CliCompile, CudaTargetWritesSourcePtxAndALaunchManifest) {
  std::string why;
  if (!codegen::nvrtc_available(&why)) {
    GTEST_SKIP() << "NVRTC not available: " << why;
  }
  Cleanup clean;
  const std::string spec = "matmul:M=64,N=48,K=32";
  const std::string target = "cuda -arch=sm_80";
  std::string db = clean(database_with({spec}));
  const std::vector<Step> steps{schedule::Tile{"C", "i", "j", 8, 16},
                                schedule::Annotate{"C", "i.o", ir::ForKind::BlockY},
                                schedule::Annotate{"C", "j.o", ir::ForKind::BlockX},
                                schedule::Annotate{"C", "i.i", ir::ForKind::ThreadY},
                                schedule::Annotate{"C", "j.i", ir::ForKind::ThreadX}};
  int64_t id = add_record(db, spec, steps, 1e-5, target);
  std::string out = clean(temp_path("out"));
  CliResult r = run_cli("compile --workload " + spec + " --target '" + target + "' --db '" + db +
                        "' --out '" + out + "' --name mm --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  support::Json json = support::Json::parse(r.out);
  EXPECT_EQ(json.at("manifest").as_string(), out + "/mm.json");
  const support::Json& f = json.at("functions").as_array().at(0);
  EXPECT_EQ(f.at("source").as_string(), "record");
  EXPECT_EQ(f.at("record_id").as_int(), id);
  EXPECT_EQ(f.at("cuda_source").as_string(), out + "/mm.cu");
  EXPECT_EQ(json.at("untuned").size(), 0U);
  EXPECT_EQ(json.at("warnings").size(), 0U);

  std::ifstream manifest_file(out + "/mm.json");
  std::stringstream manifest_text;
  manifest_text << manifest_file.rdbuf();
  support::Json manifest = support::Json::parse(manifest_text.str());
  EXPECT_EQ(manifest.at("target").as_string(), target);
  const support::Json& m = manifest.at("functions").as_array().at(0);
  EXPECT_EQ(m.at("ptx").as_string(), "mm.ptx");
  const support::Json::Array& buffers = m.at("buffers").as_array();
  ASSERT_EQ(buffers.size(), 3U);
  EXPECT_EQ(buffers[0].at("name").as_string(), "A");
  EXPECT_EQ(buffers[0].at("role").as_string(), "input");
  EXPECT_EQ(buffers[2].at("role").as_string(), "output");
  EXPECT_EQ(buffers[2].at("shape").as_array().at(1).as_int(), 48);
  const support::Json& k = m.at("kernels").as_array().at(0);
  EXPECT_EQ(k.at("grid").dump(), "[3,8,1]");
  EXPECT_EQ(k.at("block").dump(), "[16,8,1]");
  EXPECT_EQ(k.at("params").dump(), "[0,1,2]");
  std::ifstream ptx_file(out + "/mm.ptx");
  std::stringstream ptx;
  ptx << ptx_file.rdbuf();
  EXPECT_NE(ptx.str().find(".entry " + k.at("name").as_string()), std::string::npos) << ptx.str();
  EXPECT_NE(ptx.str().find(".target sm_80"), std::string::npos);
}

TEST(CliCompile, BadInputIsAOneLineError) {
  Cleanup clean;
  std::string db = clean(database_with({}));
  std::string out = clean(temp_path("out"));
  std::string file = clean(temp_path("a_file"));
  write_text(file, "x");
  std::string missing_db = clean(temp_path("missing.db"));
  struct Case {
    std::string args;
    int exit_code;
    std::string expected;
  };
  std::string ok = " --target native --db '" + db + "' --out '" + out + "'";
  for (const Case& c : std::vector<Case>{
           {"compile --workload no_such_op:M=4" + ok, 1, "unknown workload 'no_such_op'"},
           {"compile --workload matmul:M=4,N=4" + ok, 1, "missing key 'K'"},
           {"compile --workload matmul:M=4,N=4,K=4 --target native --db '" + missing_db +
                "' --out '" + out + "'",
            1, "does not exist"},
           {"compile --workload matmul:M=4,N=4,K=4 --target native --out '" + file + "/sub'", 1,
            "output directory"},
           {"compile --workload matmul:M=4,N=4,K=4 --target 'llvm -frob=1' --out '" + out + "'", 1,
            "frob"},
           {"compile --workload matmul:M=4,N=4,K=4 --target 'cuda -arch=sm_8' --out '" + out + "'",
            1, "arch"},
           {"compile --workload matmul:M=4,N=4,K=4 --target native --out '" + out +
                "' --name bad-name",
            1, "bad-name"},
           // Accepted before, and exported a function named main (or tt_model_run).
           {"compile --workload matmul:M=4,N=4,K=4 --target native --out '" + out + "' --name main",
            1, "function name 'main' would collide with the program's entry point"},
           {"compile --workload matmul:M=4,N=4,K=4 --target native --out '" + out +
                "' --name tt_model_run",
            1, "would collide with the model entry point's symbol 'tt_model_run'"},
           {"compile --workload matmul:M=4,N=4,K=4 --target native", 2, "--out"},
           {"compile --workload matmul:M=4,N=4,K=4 --workload relu:M=4,N=4 --target native "
            "--out '" +
                out + "'",
            1, "--name"}}) {
    CliResult r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("tensortune: error: ", 0), 0U) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << c.args << ": " << r.err;
    if (c.exit_code == 1) {
      EXPECT_EQ(count(r.err, "\n"), 1U) << c.args << ": " << r.err;
    }
    EXPECT_TRUE(r.out.empty()) << c.args << ": " << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(missing_db)) << "compile must not create a database";
}

TEST(CliCompile, AMissingRuntimeArchiveIsAClearError) {
  Cleanup clean;
  std::string out = clean(temp_path("out"));
  ::setenv("TT_RUNTIME_ARCHIVE", "/nonexistent/libtt_runtime.a", 1);
  CliResult r =
      run_cli("compile --workload matmul:M=4,N=4,K=4 --target native --out '" + out + "'");
  ::unsetenv("TT_RUNTIME_ARCHIVE");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("tensortune: error: ", 0), 0U) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/libtt_runtime.a"), std::string::npos) << r.err;
}

TEST(CliCompile, ShowAndBenchUseTheDatabase) {
  Cleanup clean;
  std::string spec = "matmul:M=32,N=32,K=16";
  std::string db = clean(database_with({spec}));
  int64_t id = add_record(db, spec, tiled(8), 1e-5);
  std::string base = "--workload " + spec + " --target native --db '" + db + "'";

  CliResult exact = run_cli("show " + base + " --record " + std::to_string(id) + " --emit steps");
  ASSERT_EQ(exact.exit_code, 0) << exact.err;
  EXPECT_NE(exact.out.find("split C.i by 8"), std::string::npos) << exact.out;
  CliResult best = run_cli("show " + base + " --record best --emit steps");
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_EQ(best.out, exact.out);
  EXPECT_NE(best.err.find("record #" + std::to_string(id)), std::string::npos) << best.err;
  CliResult ir = run_cli("show " + base + " --schedule best --emit ir");
  ASSERT_EQ(ir.exit_code, 0) << ir.err;
  EXPECT_NE(ir.out.find("parallel"), std::string::npos) << ir.out;

  CliResult bench =
      run_cli("bench " + base + " --schedule best --repeat 1 --min-repeat-ms 1 --json");
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  EXPECT_EQ(support::Json::parse(bench.out).at("schedule").as_string(),
            "record #" + std::to_string(id));

  // db best --target takes the target as written, like every other command.
  CliResult listed =
      run_cli("db best --db '" + db + "' --workload " + spec + " --target native --json");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(support::Json::parse(listed.out).at("records").as_array().at(0).at("id").as_int(), id);

  CliResult none = run_cli("show " + base + " --record 999 --emit steps");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no record #999"), std::string::npos) << none.err;
  CliResult no_db = run_cli("bench --workload " + spec + " --target native --schedule best");
  EXPECT_EQ(no_db.exit_code, 2);
  EXPECT_NE(no_db.err.find("--db"), std::string::npos) << no_db.err;
  CliResult other = run_cli("show --workload matmul:M=8,N=8,K=8 --target native --db '" + db +
                            "' --record " + std::to_string(id) + " --emit steps");
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.err.find("is for workload"), std::string::npos) << other.err;
}

}  // namespace
}  // namespace tensortune::e2e

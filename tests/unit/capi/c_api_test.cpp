// SPDX-License-Identifier: Apache-2.0
// The C API on real temporary databases: the best record and its provenance, adapted and default
// lookups, in-process kernels checked against the reference, exported libraries with their
// thread-count functions and former names, untuned workloads, and errors as status codes.
#include "tensortune/c_api.h"

#include "common/db_records.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "tensortune/driver/compile.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <filesystem>
#include <string>
#include <thread>

namespace tensortune {
namespace {

using schedule::Annotate;
using schedule::Split;

constexpr const char* kSpec = "matmul:M=32,N=24,K=16";

/// A database with records of kSpec on the host ("llvm") identity; returns the fastest one's id.
int64_t fill(const std::string& path) {
  database::Database db = database::Database::open(path);
  te::Workload w = te::make_workload(kSpec);
  test::register_workload(db, w, "matmul", kSpec);
  database::TargetKey key = driver::target_key(target::Target::parse("llvm"));
  database::Record slow = test::record(w, key, {Split{"C", "j", 4, false}}, 2e-5);
  database::Record fast = test::record(
      w, key, {Split{"C", "j", 8, false}, Annotate{"C", "i", ir::ForKind::Parallel}}, 1e-5);
  fast.tool_version = "0.1.0";
  fast.git_revision = "abc123";
  fast.timestamp = 1700000123;
  return db.add_records({slow, fast}).at(1);
}

/// An open database and a compiler for "llvm", freed at the end of the test.
struct Session {
  explicit Session(const std::string& path, tt_db_mode mode = TT_DB_READ_ONLY) {
    EXPECT_EQ(tt_db_open(path.c_str(), mode, &db), TT_OK) << tt_last_error();
    EXPECT_EQ(tt_compiler_create(db, "llvm", &compiler), TT_OK) << tt_last_error();
  }
  ~Session() {
    tt_compiler_free(compiler);
    tt_db_close(db);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  tt_db* db = nullptr;
  tt_compiler* compiler = nullptr;
};

TEST(CApi, LooksUpTheBestRecordWithItsProvenance) {
  test::TempDir dir("capi_best");
  int64_t best = fill(dir.file("t.db"));
  Session s(dir.file("t.db"));
  int64_t records = 0;
  ASSERT_EQ(tt_db_count_records(s.db, &records), TT_OK);
  EXPECT_EQ(records, 2);
  tt_lookup* lookup = nullptr;
  ASSERT_EQ(tt_lookup_best(s.compiler, kSpec, &lookup), TT_OK) << tt_last_error();
  EXPECT_STREQ(tt_lookup_source(lookup), "record");
  EXPECT_EQ(tt_lookup_record_id(lookup), best);
  EXPECT_EQ(std::string(tt_lookup_describe(lookup)), "record #" + std::to_string(best));
  EXPECT_DOUBLE_EQ(tt_lookup_seconds(lookup), 1e-5);
  EXPECT_STREQ(tt_lookup_workload(lookup), "matmul_32x24x16_float32");
  EXPECT_EQ(tt_lookup_workload_key(lookup), te::make_workload(kSpec).key());
  EXPECT_NE(std::string(tt_lookup_schedule(lookup)).find("\"kind\":\"parallel\""),
            std::string::npos)
      << tt_lookup_schedule(lookup);
  EXPECT_STREQ(tt_lookup_tool_version(lookup), "0.1.0");
  EXPECT_STREQ(tt_lookup_git_revision(lookup), "abc123");
  EXPECT_EQ(tt_lookup_timestamp(lookup), 1700000123);
  EXPECT_EQ(std::string(tt_lookup_device(lookup)),
            driver::target_key(target::Target::parse("llvm")).fingerprint);
  tt_lookup_free(lookup);
  EXPECT_EQ(tt_untuned_count(s.compiler), 0U);
}

TEST(CApi, AdaptsAnotherShapeAndListsWhatIsUntuned) {
  test::TempDir dir("capi_adapt");
  fill(dir.file("t.db"));
  Session s(dir.file("t.db"));
  tt_lookup* adapted = nullptr;
  ASSERT_EQ(tt_lookup_best(s.compiler, "matmul:M=40,N=24,K=16", &adapted), TT_OK);
  EXPECT_STREQ(tt_lookup_source(adapted), "adapted");
  tt_lookup_free(adapted);
  tt_lookup* fallback = nullptr;
  ASSERT_EQ(tt_lookup_best(s.compiler, "relu:M=8,N=8", &fallback), TT_OK);
  EXPECT_STREQ(tt_lookup_source(fallback), "default");
  EXPECT_EQ(tt_lookup_record_id(fallback), 0);
  EXPECT_STREQ(tt_lookup_git_revision(fallback), "");
  tt_lookup_free(fallback);
  ASSERT_EQ(tt_untuned_count(s.compiler), 2U);
  EXPECT_STREQ(tt_untuned_name(s.compiler, 0), "matmul_40x24x16_float32");
  EXPECT_STREQ(tt_untuned_name(s.compiler, 1), "relu_8x8_float32");
  EXPECT_STREQ(tt_untuned_name(s.compiler, 2), "");
}

TEST(CApi, CompilesAKernelThatMatchesTheReference) {
  test::TempDir dir("capi_compile");
  int64_t best = fill(dir.file("t.db"));
  Session s(dir.file("t.db"));
  tt_kernel* kernel = nullptr;
  ASSERT_EQ(tt_compile(s.compiler, kSpec, &kernel), TT_OK) << tt_last_error();
  EXPECT_EQ(std::string(tt_kernel_describe(kernel)), "record #" + std::to_string(best));
  EXPECT_STREQ(tt_kernel_name(kernel), "matmul_32x24x16_float32");
  ASSERT_EQ(tt_kernel_num_buffers(kernel), 3);
  EXPECT_EQ(tt_kernel_num_inputs(kernel), 2);
  EXPECT_STREQ(tt_kernel_buffer_name(kernel, 2), "C");
  EXPECT_STREQ(tt_kernel_buffer_dtype(kernel, 2), "float32");
  EXPECT_EQ(tt_kernel_buffer_ndim(kernel, 2), 2);
  EXPECT_EQ(tt_kernel_buffer_dim(kernel, 2, 0), 32);
  EXPECT_EQ(tt_kernel_buffer_dim(kernel, 2, 1), 24);
  EXPECT_EQ(tt_kernel_buffer_bytes(kernel, 0), 32 * 16 * 4);
  EXPECT_STREQ(tt_kernel_buffer_name(kernel, 3), "");
  EXPECT_EQ(tt_kernel_buffer_dim(kernel, 2, 2), 0);

  te::Workload w = te::make_workload(kSpec);
  testing::HostBuffers buffers(w);
  buffers.fill_inputs(7);
  tt_set_num_threads(2);
  EXPECT_EQ(tt_get_num_threads(), 2);
  ASSERT_EQ(tt_kernel_call(kernel, buffers.args().data()), TT_OK) << tt_last_error();
  EXPECT_TRUE(testing::outputs_match_reference(w, buffers));
  tt_set_num_threads(0);
  tt_kernel_free(kernel);
}

TEST(CApi, ExportsALibraryWithItsThreadCountAndFormerName) {
  test::TempDir dir("capi_export");
  fill(dir.file("t.db"));
  Session s(dir.file("t.db"));
  const char* specs[] = {kSpec, "relu:M=8,N=8"};
  std::string out = dir.file("out");
  ASSERT_EQ(tt_export_library(s.compiler, specs, 2, out.c_str(), "kernels"), TT_OK)
      << tt_last_error();
  EXPECT_TRUE(std::filesystem::is_regular_file(out + "/libkernels.so"));
  EXPECT_TRUE(std::filesystem::is_symlink(out + "/kernels.so"));
  EXPECT_TRUE(std::filesystem::is_regular_file(out + "/kernels.h"));
  // Exported again over the link: the link stays a link.
  ASSERT_EQ(tt_export_library(s.compiler, specs, 2, out.c_str(), "kernels"), TT_OK);
  EXPECT_EQ(std::filesystem::read_symlink(out + "/kernels.so"), "libkernels.so");

  void* lib = dlopen((out + "/kernels.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto set = reinterpret_cast<void (*)(int32_t)>(dlsym(lib, "kernels_set_num_threads"));
  auto get = reinterpret_cast<int32_t (*)()>(dlsym(lib, "kernels_get_num_threads"));
  auto fn = reinterpret_cast<int32_t (*)(void* const*)>(dlsym(lib, "matmul_32x24x16_float32"));
  ASSERT_TRUE(set != nullptr && get != nullptr && fn != nullptr);
  tt_set_num_threads(1);
  set(3);
  EXPECT_EQ(get(), 3);
  EXPECT_EQ(tt_get_num_threads(), 1) << "the library's pool is its own, not this process's";
  tt_set_num_threads(0);
  te::Workload w = te::make_workload(kSpec);
  testing::HostBuffers buffers(w);
  buffers.fill_inputs(3);
  ASSERT_EQ(fn(buffers.args().data()), 0);
  EXPECT_TRUE(testing::outputs_match_reference(w, buffers));
  dlclose(lib);
}

TEST(CApi, ReportsErrorsAsStatusCodesWithAMessage) {
  test::TempDir dir("capi_errors");
  tt_db* db = reinterpret_cast<tt_db*>(&dir);  // overwritten with null on failure
  EXPECT_EQ(tt_db_open(dir.file("absent.db").c_str(), TT_DB_READ_ONLY, &db), TT_ERROR_USER);
  EXPECT_EQ(db, nullptr);
  EXPECT_NE(std::string(tt_last_error()).find("absent.db"), std::string::npos) << tt_last_error();
  EXPECT_EQ(tt_db_open(nullptr, TT_DB_READ_ONLY, &db), TT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tt_db_open(dir.file("x.db").c_str(), 7, &db), TT_ERROR_INVALID_ARGUMENT);

  tt_compiler* compiler = nullptr;
  EXPECT_EQ(tt_compiler_create(nullptr, "no-such-target", &compiler), TT_ERROR_USER);
  EXPECT_EQ(compiler, nullptr);
  ASSERT_EQ(tt_compiler_create(nullptr, "llvm", &compiler), TT_OK);
  tt_lookup* lookup = nullptr;
  EXPECT_EQ(tt_lookup_best(compiler, "no_such_op:M=1", &lookup), TT_ERROR_USER);
  EXPECT_NE(std::string(tt_last_error()).find("no_such_op"), std::string::npos);
  EXPECT_STREQ(tt_status_name(TT_ERROR_USER), "user error");
  const char* specs[] = {"relu:M=4,N=4"};
  EXPECT_EQ(tt_export_library(compiler, specs, 1, dir.file("o").c_str(), "not a name"),
            TT_ERROR_USER);
  EXPECT_EQ(tt_kernel_call(nullptr, nullptr), TT_ERROR_INVALID_ARGUMENT);
  // The message is per thread: another thread's failure does not replace this one.
  std::string mine = tt_last_error();
  std::thread([] {
    EXPECT_EQ(tt_lookup_best(nullptr, nullptr, nullptr), TT_ERROR_INVALID_ARGUMENT);
  }).join();
  EXPECT_EQ(tt_last_error(), mine);
  tt_compiler_free(compiler);
}

TEST(CApi, FindsTheShippedLogsAndConsultsThem) {
  // A build-tree library: the source tree's tuning_logs/.
  std::string path = tt_shipped_logs_path();
  EXPECT_NE(path.find("tuning_logs/shipped/cpu.db"), std::string::npos) << path;
  tt_db* shipped = nullptr;
  ASSERT_EQ(tt_db_open(path.c_str(), TT_DB_READ_ONLY, &shipped), TT_OK) << tt_last_error();
  int64_t records = 0;
  ASSERT_EQ(tt_db_count_records(shipped, &records), TT_OK);
  EXPECT_GT(records, 0);
  tt_compiler* compiler = nullptr;
  ASSERT_EQ(tt_compiler_create(nullptr, "llvm", &compiler), TT_OK);
  ASSERT_EQ(tt_compiler_set_shipped(compiler, shipped), TT_OK);
  tt_lookup* lookup = nullptr;
  ASSERT_EQ(tt_lookup_best(compiler, "matmul:M=64,N=64,K=64", &lookup), TT_OK);
  // "shipped" on a host with the features of a CPU the logs were tuned on, else a fallback.
  const std::string source = tt_lookup_source(lookup);
  EXPECT_TRUE(source == "shipped" || source == "adapted" || source == "default") << source;
  if (source == "shipped") {
    EXPECT_GT(tt_lookup_record_id(lookup), 0);
    EXPECT_STRNE(tt_lookup_device(lookup), "");
  }
  tt_lookup_free(lookup);
  tt_compiler_free(compiler);
  tt_db_close(shipped);
}

TEST(CApi, ReportsItsVersion) {
  EXPECT_EQ(std::string(tt_version()), std::to_string(tt_version_major()) + "." +
                                           std::to_string(tt_version_minor()) + "." +
                                           std::to_string(tt_version_patch()));
}

}  // namespace
}  // namespace tensortune

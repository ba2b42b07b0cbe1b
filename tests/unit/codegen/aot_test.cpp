// SPDX-License-Identifier: Apache-2.0
// export_shared_library: the .so loads with dlopen, runs (parallel loops included, with its own
// copy of the runtime), gives its runtime's kept scratch back when unloaded, and bad destinations
// are UserErrors.
#include "codegen_test_util.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <dlfcn.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace tensortune::codegen {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)
using ir::DataType;
using ir::Expr;

std::string aot_path(const std::string& stem) {
  return "/tmp/tensortune_aot_" + std::to_string(::getpid()) + "_" + stem + ".so";
}

TEST(ExportSharedLibrary, LibraryLoadsAndRunsEveryKernel) {
  const int n = 1000;
  ir::Buffer a = buffer("a", DataType::float32(), n);
  ir::Buffer out = buffer("out", DataType::float32(), n);
  ir::Var i("i");
  ir::Var j("j");
  // scale: out = a * 3 (parallel, large scratch through tt_alloc); shift: out = a + 0.5.
  ir::Buffer tmp = buffer("tmp", DataType::float32(), 20000);
  ir::Stmt scale_body = ir::Allocate::make(
      tmp, ir::Seq::make({loop(i, n, store(tmp, load(a, i) * 3.0f, i), ir::ForKind::Parallel),
                          loop(j, n, store(out, load(tmp, j), j))}));
  ir::Var k("k");
  ir::Stmt shift_body = loop(k, n, store(out, load(a, k) + 0.5f, k));
  std::string path = aot_path("two");
  export_shared_library({make_func("tt_scale", {a, out}, 1, scale_body),
                         make_func("tt_shift", {a, out}, 1, shift_body)},
                        host(), path);
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto scale = reinterpret_cast<KernelFn>(dlsym(lib, "tt_scale"));
  auto shift = reinterpret_cast<KernelFn>(dlsym(lib, "tt_shift"));
  ASSERT_NE(scale, nullptr);
  ASSERT_NE(shift, nullptr);
  std::vector<float> va = random_floats(n, 71);
  std::vector<float> vout(n);
  std::vector<void*> args = {va.data(), vout.data()};
  ASSERT_EQ(scale(args.data()), 0);
  for (int x = 0; x < n; ++x) {
    ASSERT_EQ(vout[x], va[x] * 3.0f) << x;
  }
  ASSERT_EQ(shift(args.data()), 0);
  for (int x = 0; x < n; ++x) {
    ASSERT_EQ(vout[x], va[x] + 0.5f) << x;
  }
  dlclose(lib);
  std::remove(path.c_str());
}

TEST(ExportSharedLibrary, ThreadCountFunctionsSizeTheLibrarysOwnPool) {
  const int n = 64;
  ir::Buffer out = buffer("out", DataType::int32(), n);
  ir::Var i("i");
  ir::LoweredFunc fill =
      make_func("fill", {out}, 0, loop(i, n, store(out, Expr(7), i), ir::ForKind::Parallel));
  std::string path = aot_path("threads");
  export_shared_library({fill}, host(), path, SharedLibraryOptions{"", nullptr, "lib"});
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto set = reinterpret_cast<void (*)(int32_t)>(dlsym(lib, "lib_set_num_threads"));
  auto get = reinterpret_cast<int32_t (*)()>(dlsym(lib, "lib_get_num_threads"));
  auto run = reinterpret_cast<KernelFn>(dlsym(lib, "fill"));
  ASSERT_TRUE(set != nullptr && get != nullptr && run != nullptr);
  for (int32_t threads : {1, 3}) {
    set(threads);
    EXPECT_EQ(get(), threads);
    std::vector<int32_t> v(n, 0);
    std::vector<void*> args = {v.data()};
    ASSERT_EQ(run(args.data()), 0);
    EXPECT_EQ(v, std::vector<int32_t>(n, 7));
  }
  dlclose(lib);
  std::remove(path.c_str());
  // A kernel may not take the name of a thread-count function.
  ir::LoweredFunc clash =
      make_func("lib_set_num_threads", {out}, 0, loop(i, n, store(out, Expr(1), i)));
  EXPECT_THROW(export_shared_library({clash}, host(), aot_path("clash"),
                                     SharedLibraryOptions{"", nullptr, "lib"}),
               UserError);
}

TEST(ExportSharedLibrary, UnwritableDestinationIsAUserError) {
  ir::Buffer out = buffer("out", DataType::int32(), 4);
  ir::Var i("i");
  ir::LoweredFunc f = make_func("tt_fill", {out}, 0, loop(i, 4, store(out, i, i)));
  EXPECT_THROW(export_shared_library({f}, host(), "/nonexistent-dir/x/libk.so"), UserError);
  EXPECT_THROW(export_shared_library({}, host(), aot_path("none")), UserError);
}

/// The process's mapped address space in bytes (/proc/self/statm).
int64_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  statm >> pages;
  return pages * ::sysconf(_SC_PAGESIZE);
}

TEST(ExportSharedLibrary, UnloadingALibraryReleasesTheScratchItsRuntimeKept) {
  // out[j] = 2 a[j] through 4 MiB of scratch from tt_alloc, which the library's runtime keeps
  // after each call; unloading the library must give it back.
  const int stride = 65536;
  ir::Buffer a = buffer("a", DataType::float32(), 16);
  ir::Buffer out = buffer("out", DataType::float32(), 16);
  ir::Buffer tmp = buffer("tmp", DataType::float32(), int64_t{16} * stride);
  ir::Var i("i");
  ir::Var j("j");
  ir::Stmt body = ir::Allocate::make(
      tmp, ir::Seq::make({loop(i, 16, store(tmp, load(a, i) * 2.0f, Expr(i) * Expr(stride))),
                          loop(j, 16, store(out, load(tmp, Expr(j) * Expr(stride)), j))}));
  std::string path = aot_path("scratch");
  export_shared_library({make_func("tt_double", {a, out}, 1, body)}, host(), path);
  auto load_run_unload = [&] {
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr) << dlerror();
    auto run = reinterpret_cast<KernelFn>(dlsym(lib, "tt_double"));
    ASSERT_NE(run, nullptr);
    std::vector<float> va = random_floats(16, 5);
    std::vector<float> vout(16);
    std::vector<void*> args = {va.data(), vout.data()};
    ASSERT_EQ(run(args.data()), 0);
    EXPECT_EQ(vout[15], va[15] * 2.0f);
    ASSERT_EQ(dlclose(lib), 0);
    // Really unloaded, so that the next dlopen gets a fresh copy of the runtime.
    EXPECT_EQ(dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr);
  };
  load_run_unload();  // the loader's own one-time allocations
  const int64_t before = mapped_bytes();
  for (int round = 0; round < 20 && !HasFatalFailure(); ++round) {
    load_run_unload();
  }
  // Kept blocks would add 20 x 6 MiB (the scratch and its huge-page alignment).
  EXPECT_LT(mapped_bytes() - before, int64_t{24} << 20);
  std::remove(path.c_str());
}

/// out = a + `add` (n floats).
ir::LoweredFunc shift_by(float add) {
  ir::Buffer a = buffer("a", DataType::float32(), 16);
  ir::Buffer out = buffer("out", DataType::float32(), 16);
  ir::Var i("i");
  return make_func("tt_shift", {a, out}, 1, loop(i, 16, store(out, load(a, i) + add, i)));
}

float shifted_one(KernelFn f) {
  std::vector<float> a(16, 1.0f), out(16, 0.0f);
  std::vector<void*> args = {a.data(), out.data()};
  EXPECT_EQ(f(args.data()), 0);
  return out[0];
}

TEST(ExportSharedLibrary, ALibraryIsReplacedNotRewrittenAndAFailedLinkKeepsTheOldOne) {
  std::string path = aot_path("replace");
  export_shared_library({shift_by(0.5f)}, host(), path);
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto old_shift = reinterpret_cast<KernelFn>(dlsym(lib, "tt_shift"));
  ASSERT_NE(old_shift, nullptr);
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  // Rewriting the loaded file in place would change the code under the running process.
  export_shared_library({shift_by(2.5f)}, host(), path);
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino);
  EXPECT_EQ(shifted_one(old_shift), 1.5f);
  dlclose(lib);

  // A link that fails (a runtime archive that is not one) leaves the previous library whole.
  std::string garbage = aot_path("garbage") + ".a";
  {
    std::FILE* f = std::fopen(garbage.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("not an archive\n", f);
    std::fclose(f);
  }
  EXPECT_THROW(export_shared_library({shift_by(9.0f)}, host(), path, garbage), UserError);
  void* again = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(again, nullptr) << dlerror();
  auto shift = reinterpret_cast<KernelFn>(dlsym(again, "tt_shift"));
  ASSERT_NE(shift, nullptr);
  EXPECT_EQ(shifted_one(shift), 3.5f);
  dlclose(again);
  std::remove(garbage.c_str());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tensortune::codegen

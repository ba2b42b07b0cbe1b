// SPDX-License-Identifier: Apache-2.0
// export_shared_library: the .so loads with dlopen, runs (parallel loops included, with its own
// copy of the runtime), and bad destinations are UserErrors.
#include "codegen_test_util.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <dlfcn.h>
#include <unistd.h>

namespace tensortune::codegen {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)
using ir::DataType;
using ir::Expr;

std::string temp_path(const std::string& stem) {
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
  std::string path = temp_path("two");
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

TEST(ExportSharedLibrary, UnwritableDestinationIsAUserError) {
  ir::Buffer out = buffer("out", DataType::int32(), 4);
  ir::Var i("i");
  ir::LoweredFunc f = make_func("tt_fill", {out}, 0, loop(i, 4, store(out, i, i)));
  EXPECT_THROW(export_shared_library({f}, host(), "/nonexistent-dir/x/libk.so"), UserError);
  EXPECT_THROW(export_shared_library({}, host(), temp_path("none")), UserError);
}

}  // namespace
}  // namespace tensortune::codegen

// SPDX-License-Identifier: Apache-2.0
// Compiler::export_library: the .so loads with dlopen and each function computes its workload;
// the header is written beside it; bad destinations and names are user errors.
#include "common/reference.h"
#include "driver_test_util.h"
#include "tensortune/driver/compile.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tensortune::driver {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace): driver::testing
using tensortune::testing::HostBuffers;
using tensortune::testing::outputs_match_reference;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ExportLibrary, WritesALoadableLibraryAndItsHeader) {
  TempDir dir("export");
  database::Database db = database::Database::open(dir.file("t.db"));
  Compiler compiler(&db, target::Target::parse("llvm -cores=2"));
  te::Workload mm = put_workload(db, "matmul:M=24,N=20,K=12");
  int64_t id = add(db, record(mm, compiler.identity(),
                              {schedule::Split{"C", "j", 8, false},
                               schedule::Annotate{"C", "i", ir::ForKind::Parallel}},
                              1e-4));
  te::Workload relu = te::make_workload("relu:M=6,N=7");
  ExportedLibrary lib = compiler.export_library(
      {ExportItem{mm, "matmul:M=24,N=20,K=12", ""}, ExportItem{relu, "", "my_relu"}},
      dir.file("out/nested"), "kernels");
  EXPECT_EQ(lib.library_path, dir.file("out/nested/libkernels.so"));
  // The former name stays, one release, as a link to the new one.
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("out/nested/kernels.so")));
  EXPECT_EQ(std::filesystem::read_symlink(dir.file("out/nested/kernels.so")), "libkernels.so");
  EXPECT_EQ(lib.header_path, dir.file("out/nested/kernels.h"));
  ASSERT_EQ(lib.functions.size(), 2U);
  EXPECT_EQ(lib.functions[0].lookup.record_id, id);
  EXPECT_EQ(lib.functions[1].lookup.source, Source::Default);
  std::string header = read_text(lib.header_path);
  EXPECT_NE(header.find("int32_t matmul_24x20x12_float32(void* const* buffers);"),
            std::string::npos);
  EXPECT_NE(header.find("int32_t my_relu(void* const* buffers);"), std::string::npos);
  EXPECT_NE(header.find("void kernels_set_num_threads(int32_t n);"), std::string::npos);
  EXPECT_NE(header.find("int32_t kernels_get_num_threads(void);"), std::string::npos);
  EXPECT_NE(header.find("TT_THREAD_SPIN_US"), std::string::npos);
  EXPECT_NE(header.find("record #" + std::to_string(id)), std::string::npos);

  void* so = dlopen(lib.library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(so, nullptr) << dlerror();
  const std::pair<const te::Workload*, const char*> functions[] = {{&mm, "matmul_24x20x12_float32"},
                                                                   {&relu, "my_relu"}};
  for (const auto& [workload, symbol] : functions) {
    auto fn = reinterpret_cast<codegen::KernelFn>(dlsym(so, symbol));
    ASSERT_NE(fn, nullptr) << symbol;
    HostBuffers buffers(*workload);
    buffers.fill_inputs(3);
    std::vector<void*> args = buffers.args();
    EXPECT_EQ(fn(args.data()), 0);
    EXPECT_TRUE(outputs_match_reference(*workload, buffers)) << symbol;
  }
  dlclose(so);
}

TEST(ExportLibrary, BadDestinationsAndNamesAreUserErrors) {
  TempDir dir("export_bad");
  Compiler compiler(nullptr, target::Target::parse("llvm"));
  te::Workload relu = te::make_workload("relu:M=2,N=2");
  std::ofstream(dir.file("file")) << "x";
  EXPECT_THROW(compiler.export_library({ExportItem{relu, "", ""}}, dir.file("file/sub"), "k"),
               UserError);
  EXPECT_THROW(compiler.export_library({ExportItem{relu, "", ""}}, dir.file("o"), "bad-name"),
               UserError);
  EXPECT_THROW(compiler.export_library({ExportItem{relu, "", "1x"}}, dir.file("o"), "k"),
               UserError);
  EXPECT_THROW(compiler.export_library({ExportItem{relu, "", "f"}, ExportItem{relu, "", "f"}},
                                       dir.file("o"), "k"),
               UserError);
  EXPECT_THROW(compiler.export_library({}, dir.file("o"), "k"), UserError);
}

}  // namespace
}  // namespace tensortune::driver

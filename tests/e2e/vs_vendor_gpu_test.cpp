// SPDX-License-Identifier: Apache-2.0
// bench/vs_vendor_gpu as the acceptance run uses it: --help, a CPU target refused, and without a
// CUDA device one line and exit status 1 before any database is opened or created; its cuBLAS
// and cuDNN entry points resolve. (cli_runner's TT_TENSORTUNE_PATH is the bench's executable in
// this test.)
#include "cli_runner.h"
#include "tensortune/runtime/cuda_driver.h"
#include "vs_vendor_gpu_libs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

namespace tensortune {
namespace {

using e2e::run_cli;
using e2e::temp_path;

TEST(VsVendorGpu, HelpNamesTheOptions) {
  e2e::CliResult r = run_cli("--help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* option : {"--db", "--target", "--tune-trials", "--only", "--json"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option << " missing from:\n" << r.out;
  }
  EXPECT_NE(r.out.find("vs_vendor_gpu"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(VsVendorGpu, ACpuTargetIsRefused) {
  const std::string folder = temp_path("vs_vendor_gpu_cpu_target");
  std::filesystem::remove_all(folder);
  e2e::CliResult r = run_cli("--db '" + folder + "/x.db' --target llvm");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err,
            "vs_vendor_gpu: error: --target 'llvm' is not a CUDA target (e.g. \"cuda "
            "-arch=sm_90\")\n");
  EXPECT_FALSE(std::filesystem::exists(folder));
}

TEST(VsVendorGpu, WithoutADeviceOneLineExitOneAndNoDatabase) {
  const std::string why = runtime::cuda_unavailable_reason();
  if (why.empty()) {
    GTEST_SKIP() << "a CUDA device is present";
  }
  const std::string folder = temp_path("vs_vendor_gpu_no_device");
  std::filesystem::remove_all(folder);
  for (const std::string& extra :
       {std::string(), std::string(" --tune-trials 8 --json '") + folder + "/out.json'"}) {
    e2e::CliResult r = run_cli("--db '" + folder + "/gpu.db'" + extra);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.err, "vs_vendor_gpu: no CUDA device: " + why + "\n");
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(std::filesystem::exists(folder));
  }
  // An existing file is left byte for byte as it was.
  const std::string existing = temp_path("vs_vendor_gpu_existing.db");
  e2e::write_text(existing, "not a database, and not to be touched\n");
  e2e::CliResult r = run_cli("--db '" + existing + "' --tune-trials 8");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(e2e::read_text(existing), "not a database, and not to be touched\n");
}

TEST(VsVendorGpu, CublasAndCudnnLoadWithEveryEntryPointWhereTheToolkitHasThem) {
  // Loading resolves every symbol the bench declares by hand: a misspelt name fails here, without
  // a device.
  if (std::filesystem::exists("/usr/local/cuda/lib64/libcublas.so.13")) {
    EXPECT_EQ(bench::cublas_unavailable_reason(), "");
  } else {
    EXPECT_NE(bench::cublas_unavailable_reason(), "");
  }
  // cuDNN may also come from the loader path (a Python wheel's copy, as on the H200 image) when the
  // toolkit lacks it: then it loads or says why, but never lacks an entry point.
  if (std::filesystem::exists("/usr/local/cuda/lib64/libcudnn.so.9")) {
    EXPECT_EQ(bench::cudnn_unavailable_reason(), "");
  } else {
    EXPECT_EQ(bench::cudnn_unavailable_reason().find("lacks"), std::string::npos)
        << bench::cudnn_unavailable_reason();
  }
}

}  // namespace
}  // namespace tensortune

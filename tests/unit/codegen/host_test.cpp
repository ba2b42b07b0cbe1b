// SPDX-License-Identifier: Apache-2.0
// The device fingerprint (stable, host-only, the ISA features that matter in sorted order) and
// the search for the runtime archive that exported libraries link.
#include "tensortune/codegen/host.h"

#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/runtime/cuda_driver.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <thread>

namespace tensortune::codegen {
namespace {

/// The value of "key=value" in a "k=v; k=v" fingerprint.
std::string field(const std::string& fingerprint, const std::string& key) {
  size_t at = fingerprint.find(key + "=");
  if (at == std::string::npos) {
    return "<missing>";
  }
  at += key.size() + 1;
  return fingerprint.substr(at, fingerprint.find(';', at) - at);
}

TEST(DeviceFingerprint, IsStableAndDescribesTheHost) {
  target::Target native = target::Target::parse("native");
  std::string fp = device_fingerprint(native);
  EXPECT_EQ(fp, device_fingerprint(native));
  EXPECT_EQ(fp.rfind("cpu=", 0), 0U) << fp;
  EXPECT_EQ(fp.find('\n'), std::string::npos);
  EXPECT_EQ(field(fp, "mcpu"), resolve_host(native).mcpu) << fp;
  unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  EXPECT_EQ(field(fp, "cores"), std::to_string(cores)) << fp;
  EXPECT_NE(field(fp, "cpu"), "") << fp;
}

TEST(DeviceFingerprint, ListsEnabledFeaturesSortedAndIgnoresTheTargetOptions) {
  target::Target native = target::Target::parse("native");
  std::string fp = device_fingerprint(native);
  std::vector<std::string> features;
  std::istringstream list(field(fp, "features"));
  for (std::string f; std::getline(list, f, ',');) {
    features.push_back(f);
  }
  EXPECT_TRUE(std::is_sorted(features.begin(), features.end())) << fp;
  // Every listed feature is enabled on the host (resolve_host's -mattr has it as "+name").
  std::string mattr = "," + resolve_host(native).mattr + ",";
  for (const std::string& f : features) {
    EXPECT_NE(mattr.find(",+" + f + ","), std::string::npos) << f;
  }
  EXPECT_EQ(device_fingerprint(target::Target::parse("llvm -mcpu=x86-64 -cores=1")), fp);
}

TEST(DeviceFingerprint, NamesTheArchitectureOfAGpuTargetWithoutADevice) {
  if (runtime::cuda_unavailable_reason().empty()) {
    GTEST_SKIP() << "a CUDA device is present: the fingerprint names it";
  }
  EXPECT_EQ(device_fingerprint(target::Target::parse("cuda -arch=sm_80")), "gpu=cuda; arch=sm_80");
}

TEST(DeviceFingerprint, NamesTheDeviceOfAGpuTarget) {
  std::string why = runtime::cuda_unavailable_reason();
  if (!why.empty()) {
    GTEST_SKIP() << "no CUDA device: " << why;
  }
  runtime::CudaDevice device(0);
  const runtime::CudaDeviceInfo& info = device.info();
  std::string fp = device_fingerprint(target::Target::parse("cuda -arch=sm_80"));
  EXPECT_EQ(fp, "gpu=" + info.name + "; cc=" + std::to_string(info.major) + "." +
                    std::to_string(info.minor) + "; sms=" + std::to_string(info.multiprocessors));
  EXPECT_EQ(device_fingerprint(target::Target::parse("cuda -arch=sm_90")), fp);
}

TEST(FindRuntimeArchive, FindsTheBuiltArchiveAndChecksAnExplicitPath) {
  std::string found = find_runtime_archive();
  EXPECT_TRUE(std::filesystem::is_regular_file(found)) << found;
  EXPECT_EQ(std::filesystem::path(found).filename(), "libtt_runtime.a");
  EXPECT_EQ(find_runtime_archive(found), found);
  EXPECT_THROW(find_runtime_archive("/nonexistent/libtt_runtime.a"), UserError);
}

TEST(MissingHostFeatures, NamesWhatTheHostLacksAndNothingForNative) {
  EXPECT_TRUE(missing_host_features(target::Target::parse("native")).empty());
  EXPECT_TRUE(missing_host_features(target::Target::parse("cuda -arch=sm_80")).empty());
  const target::Target host = resolve_host(target::Target::parse("native"));
  // The host's own CPU model, named explicitly, lacks nothing either.
  for (const std::string& f : missing_host_features(target::Target::parse("llvm -mcpu=" + host.mcpu)))
    ADD_FAILURE() << host.mcpu << " lacks " << f;
  if (host.mattr.find("+avx") == std::string::npos)
    GTEST_SKIP() << "not an x86 host with AVX";
  // AMX: Intel Sapphire Rapids and later only.
  const std::vector<std::string> missing =
      missing_host_features(target::Target::parse("llvm -mattr=+amx-tile,+amx-int8"));
  if (host.mattr.find("+amx-tile") != std::string::npos)
    GTEST_SKIP() << "the host has AMX";
  EXPECT_NE(std::find(missing.begin(), missing.end(), "amx-tile"), missing.end());
  EXPECT_NE(std::find(missing.begin(), missing.end(), "amx-int8"), missing.end());
  EXPECT_TRUE(std::is_sorted(missing.begin(), missing.end()));
}

}  // namespace
}  // namespace tensortune::codegen

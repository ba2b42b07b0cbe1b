// SPDX-License-Identifier: Apache-2.0
// CudaDevice over the real CUDA driver (loaded at run time): without a driver or a device, the
// clean error; with one, memory round trips, a hand-written PTX kernel, event timing and the
// launch checks. The GPU tests skip, with the reason, where there is no device.
#include "tensortune/runtime/cuda_driver.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::runtime {
namespace {

/// out[i] = 2 * i for the global thread index i (blockIdx.x * blockDim.x + threadIdx.x).
constexpr const char* kFillIndexPtx = R"(
.version 7.0
.target sm_75
.address_size 64

.visible .entry fill_index(
  .param .u64 fill_index_param_0
)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<5>;

  ld.param.u64 %rd1, [fill_index_param_0];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  shl.b32 %r5, %r4, 1;
  mul.wide.s32 %rd3, %r4, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r5;
  ret;
}
)";

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

TEST(CudaDriver, UnavailableReasonIsStableAndNamesTheCause) {
  std::string reason = cuda_unavailable_reason();
  EXPECT_EQ(cuda_unavailable_reason(), reason);
  if (!reason.empty()) {
    EXPECT_TRUE(starts_with(reason, "no CUDA driver (libcuda.so.1") ||
                starts_with(reason, "cuInit failed: ") || starts_with(reason, "no CUDA device") ||
                starts_with(reason, "CUDA driver too old") ||
                starts_with(reason, "cuDeviceGetCount failed: "))
        << reason;
  }
}

TEST(CudaDevice, WithoutADeviceThrowsCudaErrorCarryingTheReason) {
  std::string reason = cuda_unavailable_reason();
  if (reason.empty()) {
    GTEST_SKIP() << "a CUDA device is present";
  }
  try {
    CudaDevice device;
    FAIL() << "opened a device although: " << reason;
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

TEST(CudaDevice, AnOrdinalWithoutADeviceIsACudaError) {
  EXPECT_THROW(CudaDevice(1 << 20), CudaError);
  EXPECT_THROW(CudaDevice(-1), CudaError);
}

/// Why the GPU tests cannot run here, or empty.
std::string no_device() {
  std::string reason = cuda_unavailable_reason();
  return reason.empty() ? reason : "no usable CUDA device: " + reason;
}

TEST(CudaDevice, ReportsItsLimits) {
  if (std::string why = no_device(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  CudaDevice device;
  const CudaDeviceInfo& info = device.info();
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.major, 3);
  EXPECT_EQ(info.arch(), "sm_" + std::to_string(info.major * 10 + info.minor));
  EXPECT_GT(info.multiprocessors, 0);
  EXPECT_GE(info.max_threads_per_block, 512);
  EXPECT_GE(info.max_shared_memory_per_block, 16 * 1024);
  EXPECT_GE(info.max_shared_memory_per_block_optin, info.max_shared_memory_per_block);
  EXPECT_GE(info.max_registers_per_block, 32 * 1024);
  EXPECT_EQ(info.warp_size, 32);
  EXPECT_GT(info.total_memory, int64_t{1} << 28);
  EXPECT_GE(info.max_block_dims[0], info.max_threads_per_block);
  EXPECT_GE(info.max_grid_dims[0], 65535);
}

TEST(CudaDevice, CopiesToTheDeviceAndBack) {
  if (std::string why = no_device(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  CudaDevice device;
  std::vector<float> host(4096);
  for (size_t i = 0; i < host.size(); ++i) {
    host[i] = static_cast<float>(i) * 0.5F - 7.0F;
  }
  uint64_t buffer = device.alloc(host.size() * sizeof(float));
  ASSERT_NE(buffer, 0U);
  device.copy_to_device(buffer, host.data(), host.size() * sizeof(float));
  std::vector<float> back(host.size(), 0.0F);
  device.copy_to_host(back.data(), buffer, back.size() * sizeof(float));
  device.free(buffer);
  EXPECT_EQ(back, host);
}

TEST(CudaDevice, MemoryInUseGrowsWithAnAllocation) {
  if (std::string why = no_device(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  CudaDevice device;
  const int64_t before = device.memory_in_use();
  EXPECT_GT(before, 0);  // the context itself
  constexpr size_t kBytes = size_t{256} << 20;
  uint64_t buffer = device.alloc(kBytes);
  const int64_t during = device.memory_in_use();
  device.free(buffer);
  // The driver rounds allocations up to its pages; another process may come and go meanwhile.
  EXPECT_GE(during - before, static_cast<int64_t>(kBytes) * 9 / 10);
}

TEST(CudaDevice, RunsAndTimesAHandWrittenPtxKernel) {
  if (std::string why = no_device(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  CudaDevice device;
  int module = device.load_module(kFillIndexPtx);
  int registers = 0;
  uint64_t fn = device.function(module, "fill_index", &registers);
  EXPECT_GT(registers, 0);
  constexpr int64_t kBlocks = 3, kThreads = 128;
  std::vector<uint32_t> out(kBlocks * kThreads, 0xFFFFFFFFU);
  uint64_t buffer = device.alloc(out.size() * sizeof(uint32_t));
  device.copy_to_device(buffer, out.data(), out.size() * sizeof(uint32_t));
  device.launch(fn, {kBlocks, 1, 1}, {kThreads, 1, 1}, 0, {buffer});
  device.synchronize();
  device.copy_to_host(out.data(), buffer, out.size() * sizeof(uint32_t));
  for (size_t i = 0; i < out.size(); ++i) {
    ASSERT_EQ(out[i], 2 * i) << "at " << i;
  }
  double seconds = device.time_events(3, [&] {
    device.launch(fn, {kBlocks, 1, 1}, {kThreads, 1, 1}, 0, {buffer});
  });
  EXPECT_GT(seconds, 0.0);
  device.free(buffer);
}

TEST(CudaDevice, RejectsLaunchesBeyondTheLimitsBeforeTheDriverSeesThem) {
  if (std::string why = no_device(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  CudaDevice device;
  uint64_t fn = device.function(device.load_module(kFillIndexPtx), "fill_index");
  uint64_t buffer = device.alloc(4096 * sizeof(uint32_t));
  auto launch_error = [&](std::array<int64_t, 3> block, int64_t shared_bytes) -> std::string {
    try {
      device.launch(fn, {1, 1, 1}, block, shared_bytes, {buffer});
    } catch (const CudaError& e) {
      EXPECT_EQ(e.call(), "launch") << e.what();
      return e.what();
    }
    return "<launched>";
  };
  int too_many = device.info().max_threads_per_block * 2;
  EXPECT_NE(launch_error({too_many, 1, 1}, 0).find(std::to_string(too_many) + " threads"),
            std::string::npos);
  EXPECT_NE(launch_error({64, 64, 1}, 0).find("4096 threads"), std::string::npos);
  EXPECT_NE(launch_error({0, 1, 1}, 0).find("positive"), std::string::npos);
  EXPECT_NE(launch_error({32, 1, 1}, int64_t{1} << 24).find("shared memory"), std::string::npos);
  // Nothing reached the driver: the stream is healthy and a valid launch still runs.
  device.launch(fn, {1, 1, 1}, {32, 1, 1}, 0, {buffer});
  device.synchronize();
  device.free(buffer);
}

TEST(CudaDevice, BadModulesAndKernelNamesAreCudaErrors) {
  if (std::string why = no_device(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  CudaDevice device;
  try {
    device.load_module(".version 7.0\n.target sm_75\nthis is not ptx\n");
    FAIL() << "garbage PTX loaded";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.call(), "cuModuleLoadData");
    EXPECT_TRUE(starts_with(e.name(), "CUDA_ERROR_")) << e.what();
  }
  int module = device.load_module(kFillIndexPtx);
  EXPECT_THROW(device.function(module, "no_such_kernel"), CudaError);
  EXPECT_THROW(device.function(module + 1, "fill_index"), CudaError);
}

TEST(CudaDevice, UnloadedModulesLeaveTheDeviceAndTheirKernelsCannotLaunch) {
  if (std::string why = no_device(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  CudaDevice device;
  uint64_t buffer = device.alloc(32 * sizeof(int32_t));
  for (int i = 0; i < 100; ++i) {  // a tuner loads one module per candidate
    int module = device.load_module(kFillIndexPtx);
    uint64_t fn = device.function(module, "fill_index");
    device.launch(fn, {1, 1, 1}, {32, 1, 1}, 0, {buffer});
    device.synchronize();
    device.unload_module(module);
    EXPECT_EQ(device.loaded_modules(), 0);
    try {
      device.launch(fn, {1, 1, 1}, {32, 1, 1}, 0, {buffer});
      FAIL() << "a kernel of an unloaded module was launched";
    } catch (const CudaError& e) {
      EXPECT_EQ(e.call(), "launch");
      EXPECT_EQ(e.name(), "CUDA_ERROR_INVALID_HANDLE");
    }
    EXPECT_THROW(device.unload_module(module), CudaError);
    EXPECT_THROW(device.function(module, "fill_index"), CudaError);
  }
  std::vector<int32_t> out(32);
  device.copy_to_host(out.data(), buffer, out.size() * sizeof(int32_t));
  EXPECT_EQ(out[31], 62);
  device.free(buffer);
  EXPECT_NE(device.native_stream(), nullptr);
}

}  // namespace
}  // namespace tensortune::runtime

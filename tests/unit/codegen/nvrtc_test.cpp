// SPDX-License-Identifier: Apache-2.0
// compile_cuda: hand-written CUDA C through the real NVRTC (loaded at run time) to PTX and cubin,
// and the errors for source that does not compile and for a malformed arch. Skipped, with the
// reason, where NVRTC is not installed; no GPU is needed.
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tensortune::codegen {
namespace {

constexpr const char* kSaxpy = R"(extern "C" __global__ void saxpy(float a, const float* x,
                                                   float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = a * x[i] + y[i];
  }
}
)";

target::Target cuda_target(const std::string& arch) {
  return target::Target::parse("cuda -arch=" + arch);
}

/// Why NVRTC cannot be used here, or empty.
std::string nvrtc_missing() {
  std::string why;
  return nvrtc_available(&why) ? std::string() : "NVRTC is not available: " + why;
}

TEST(Nvrtc, CompilesCudaCToPtxForTheTargetArch) {
  if (std::string why = nvrtc_missing(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  for (const char* arch : {"sm_90", "sm_80"}) {
    NvrtcOutput out = compile_cuda(kSaxpy, cuda_target(arch), /*want_cubin=*/false);
    EXPECT_NE(out.ptx.find(std::string(".target ") + arch), std::string::npos) << out.ptx;
    EXPECT_NE(out.ptx.find(".entry saxpy"), std::string::npos) << out.ptx;
    EXPECT_TRUE(out.cubin.empty());
  }
}

TEST(Nvrtc, CompilesCudaCToACubinWhenAsked) {
  if (std::string why = nvrtc_missing(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  NvrtcOutput out = compile_cuda(kSaxpy, cuda_target("sm_90"), /*want_cubin=*/true);
  EXPECT_NE(out.ptx.find(".target sm_90"), std::string::npos) << out.ptx;
  ASSERT_GE(out.cubin.size(), 4U);
  EXPECT_EQ(out.cubin.substr(0, 4), std::string("\177ELF"));
  // The kernel's name is in the cubin's symbol table.
  EXPECT_NE(out.cubin.find("saxpy"), std::string::npos);
}

// ptxas's report in the log of a cubin compile: one entry per kernel, with its registers and
// its local memory (a dynamically indexed array cannot live in registers: a stack frame).
TEST(Nvrtc, ACubinCompileReportsEachKernelsRegistersAndLocalMemory) {
  if (std::string why = nvrtc_missing(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const std::string source = std::string(kSaxpy) + R"(
extern "C" __global__ void table(const int* at, float* y) {
  float t[256];
  for (int i = 0; i < 256; ++i) t[i] = y[i * blockDim.x + threadIdx.x];
  for (int j = 0; j < 4; ++j) t[at[j * blockDim.x + threadIdx.x]] += 1.0f;
  float s = 0.0f;
  for (int i = 0; i < 256; ++i) s += t[i] * static_cast<float>(i);
  y[threadIdx.x] = s;
}
)";
  const NvrtcOutput out = compile_cuda(source, cuda_target("sm_90"), /*want_cubin=*/true);
  ASSERT_EQ(out.resources.size(), 2U) << out.log;
  for (const KernelResources& k : out.resources) {
    SCOPED_TRACE(k.name);
    EXPECT_TRUE(k.name == "saxpy" || k.name == "table") << out.log;
    EXPECT_GT(k.registers, 0) << out.log;
    EXPECT_EQ(k.stack_bytes, k.name == "table" ? 1024 : 0) << out.log;
  }
  EXPECT_TRUE(compile_cuda(kSaxpy, cuda_target("sm_90"), false).resources.empty());

  // The cubin records the same registers and stack frame (what a compile the CUDA compute cache
  // serves, without ptxas's report, falls back to), but no spill counts.
  const std::vector<KernelResources> from_cubin = cubin_resources(out.cubin);
  ASSERT_EQ(from_cubin.size(), out.resources.size());
  for (const KernelResources& k : from_cubin) {
    SCOPED_TRACE(k.name);
    const auto reported = std::find_if(out.resources.begin(), out.resources.end(),
                                       [&](const KernelResources& r) { return r.name == k.name; });
    ASSERT_NE(reported, out.resources.end());
    EXPECT_EQ(k.registers, reported->registers);
    EXPECT_EQ(k.stack_bytes, reported->stack_bytes);
    EXPECT_EQ(k.spill_store_bytes, -1);
    EXPECT_EQ(k.spill_load_bytes, -1);
  }
  // Bytes that are no cubin, or a cubin cut short anywhere, give nothing rather than a misread.
  EXPECT_TRUE(cubin_resources("").empty());
  EXPECT_TRUE(cubin_resources(out.ptx).empty());
  for (size_t keep = 0; keep < out.cubin.size(); keep += 61) {
    for (const KernelResources& k : cubin_resources(out.cubin.substr(0, keep))) {
      EXPECT_TRUE(k.name == "saxpy" || k.name == "table") << keep;
    }
  }
}

TEST(Nvrtc, PtxasReportsAreReadLineByLine) {
  const std::vector<KernelResources> r = parse_ptxas_report(
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k0' for 'sm_90'\n"
      "ptxas info    : Function properties for k0\n"
      "ptxas         .     512 bytes stack frame, 96 bytes spill stores, 88 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 16384 bytes smem\n"
      "warning: something else entirely\n"
      "ptxas info    : Compiling entry function 'k1' for 'sm_90'\n"
      "ptxas info    : Used 32 registers\n"
      "ptxas info    : Compile time = 3.1 ms\n");
  ASSERT_EQ(r.size(), 2U);
  EXPECT_EQ(r[0].name, "k0");
  EXPECT_EQ(r[0].registers, 255);
  EXPECT_EQ(r[0].stack_bytes, 512);
  EXPECT_EQ(r[0].spill_store_bytes, 96);
  EXPECT_EQ(r[0].spill_load_bytes, 88);
  EXPECT_EQ(r[1].name, "k1");
  EXPECT_EQ(r[1].registers, 32);
  EXPECT_EQ(r[1].stack_bytes, 0);
  EXPECT_TRUE(parse_ptxas_report("").empty());
  EXPECT_TRUE(parse_ptxas_report("ptxas info    : Used 12 registers\n").empty());
}

TEST(Nvrtc, CompileErrorIsAUserErrorWithNvrtcsLog) {
  if (std::string why = nvrtc_missing(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const std::string broken =
      "extern \"C\" __global__ void broken(float* y) {\n"
      "  y[0] = undeclared_value;\n"
      "}\n";
  try {
    compile_cuda(broken, cuda_target("sm_90"), /*want_cubin=*/false);
    FAIL() << "a source with an error compiled";
  } catch (const UserError& e) {
    std::string message = e.what();
    EXPECT_EQ(message.rfind("nvrtc: compile failed for sm_90:\n", 0), 0U) << message;
    EXPECT_NE(message.find("kernel.cu(2): error"), std::string::npos) << message;
    EXPECT_NE(message.find("undeclared_value"), std::string::npos) << message;
  }
}

TEST(Nvrtc, MalformedArchIsAUserErrorNamingIt) {
  for (const char* arch : {"sm_9", "compute_90", "sm_90x", "90", ""}) {
    target::Target t = cuda_target("sm_90");
    t.arch = arch;  // Target::parse would reject these already; compile_cuda checks on its own
    try {
      compile_cuda(kSaxpy, t, /*want_cubin=*/false);
      FAIL() << "arch '" << arch << "' was accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("nvrtc: malformed arch '" + std::string(arch) + "'"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Nvrtc, AnArchNvrtcDoesNotSupportIsAUserErrorWithItsLog) {
  if (std::string why = nvrtc_missing(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  target::Target t = cuda_target("sm_90");
  t.arch = "sm_35";  // well-formed, but CUDA 13 supports sm_75 and newer only
  try {
    compile_cuda(kSaxpy, t, /*want_cubin=*/true);
    FAIL() << "sm_35 was accepted";
  } catch (const UserError& e) {
    std::string message = e.what();
    EXPECT_EQ(message.rfind("nvrtc: compile failed for sm_35 (NVRTC_ERROR_INVALID_OPTION):\n", 0),
              0U)
        << message;
    EXPECT_NE(message.find("--gpu-architecture"), std::string::npos) << message;
  }
}

TEST(Nvrtc, AvailabilityIsStableAndExplainsItself) {
  std::string first, second;
  bool available = nvrtc_available(&first);
  EXPECT_EQ(nvrtc_available(&second), available);
  EXPECT_EQ(first, second);
  EXPECT_EQ(first.empty(), available) << first;
  EXPECT_EQ(nvrtc_available(), available);
}

}  // namespace
}  // namespace tensortune::codegen

// SPDX-License-Identifier: Apache-2.0
// compile_cuda: hand-written CUDA C through the real NVRTC (loaded at run time) to PTX and cubin,
// and the errors for source that does not compile and for a malformed arch. Skipped, with the
// reason, where NVRTC is not installed; no GPU is needed.
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <string>

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

// SPDX-License-Identifier: Apache-2.0
// The CPU backend's entry points: host resolution, LLVM IR and assembly text, builds from
// several threads, and the errors for unsupported input.
#include "tensortune/codegen/llvm_codegen.h"

#include "codegen_test_util.h"

#include <gtest/gtest.h>

#include <thread>

namespace tensortune::codegen {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)
using ir::DataType;
using ir::Expr;

/// out[i] = a[i] * b[i] + c[i] over 16-lane Ramp indices (n a multiple of 16).
ir::LoweredFunc fma_kernel(const std::string& name, int n) {
  ir::Buffer a = buffer("a", DataType::float32(), n);
  ir::Buffer b = buffer("b", DataType::float32(), n);
  ir::Buffer c = buffer("c", DataType::float32(), n);
  ir::Buffer out = buffer("out", DataType::float32(), n);
  ir::Var io("io");
  Expr idx = ramp(io * 16, 1, 16);
  ir::Stmt body = loop(io, n / 16, store(out, load(a, idx) * load(b, idx) + load(c, idx), idx));
  return make_func(name, {a, b, c, out}, 3, body);
}

TEST(ResolveHost, FillsCpuFeaturesVectorWidthAndCores) {
  target::Target t = resolve_host();
  EXPECT_NE(t.mcpu, "native");
  EXPECT_FALSE(t.mcpu.empty());
  EXPECT_GT(t.cores, 0);
  EXPECT_TRUE(t.vector_bits == 128 || t.vector_bits == 256 || t.vector_bits == 512)
      << t.vector_bits;
  bool avx512 = t.mattr.find("+avx512f") != std::string::npos;
  EXPECT_EQ(avx512, t.vector_bits == 512) << t.mattr;
  // Resolving twice changes nothing.
  target::Target again = resolve_host(t);
  EXPECT_EQ(again.mcpu, t.mcpu);
  EXPECT_EQ(again.mattr, t.mattr);
  EXPECT_EQ(again.vector_bits, t.vector_bits);
}

TEST(ResolveHost, KeepsExplicitFields) {
  target::Target base;
  base.mcpu = "skylake-avx512";
  base.cores = 3;
  target::Target t = resolve_host(base);
  EXPECT_EQ(t.mcpu, "skylake-avx512");
  EXPECT_TRUE(t.mattr.empty());
  EXPECT_EQ(t.cores, 3);
  EXPECT_EQ(t.vector_bits, 512);
  base.mcpu = "haswell";
  EXPECT_EQ(resolve_host(base).vector_bits, 256);
  base.vector_bits = 128;
  EXPECT_EQ(resolve_host(base).vector_bits, 128);
}

TEST(ResolveHost, UnknownCpuIsAUserError) {
  target::Target base;
  base.mcpu = "no-such-cpu";
  EXPECT_THROW(resolve_host(base), UserError);
  // An unknown -mattr feature too (LLVM would only warn on stderr and ignore it).
  target::Target features = target::Target::parse("llvm -mattr=+avx2,+no-such-feature");
  EXPECT_THROW(resolve_host(features), UserError);
  EXPECT_THROW(resolve_host(target::Target::parse("llvm -mattr=+no-such-feature -vector-bits=256")),
               UserError);
  EXPECT_NO_THROW(resolve_host(target::Target::parse("llvm -mattr=+avx2,-avx512f")));
}

TEST(EmitLlvmIr, HasTheKernelAbiAndTargetAttributes) {
  target::Target t = resolve_host();
  std::string text = emit_llvm_ir(fma_kernel("fma16", 64), t, false);
  EXPECT_NE(text.find("define i32 @fma16(ptr nocapture readonly %buffers)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\"target-cpu\"=\"" + t.mcpu + "\""), std::string::npos);
  EXPECT_NE(text.find("\"prefer-vector-width\"=\"" + std::to_string(t.vector_bits) + "\""),
            std::string::npos);
  EXPECT_NE(text.find("load <16 x float>"), std::string::npos);
  EXPECT_NE(text.find("!alias.scope"), std::string::npos);
  EXPECT_NE(text.find("fmul contract <16 x float>"), std::string::npos);
  std::string optimized = emit_llvm_ir(fma_kernel("fma16", 64), t, true);
  EXPECT_NE(optimized.find("@fma16(ptr"), std::string::npos) << optimized;
  EXPECT_NE(optimized.find("fmul contract <16 x float>"), std::string::npos) << optimized;
}

TEST(EmitAssembly, SixteenLaneFmaUsesZmmRegistersOnAvx512) {
  target::Target t = resolve_host();
  if (t.vector_bits < 512) {
    GTEST_SKIP() << "host has no AVX-512F";
  }
  std::string text = emit_assembly(fma_kernel("fma16", 1024), t);
  EXPECT_NE(text.find("zmm"), std::string::npos) << text;
  EXPECT_NE(text.find("vfmadd"), std::string::npos) << text;
  EXPECT_NE(text.find("fma16:"), std::string::npos);
  // AT&T syntax: registers carry a '%' prefix.
  EXPECT_NE(text.find("%zmm"), std::string::npos);
}

TEST(EmitAssembly, DisablingAvx512KeepsCodeInYmmRegisters) {
  target::Target base;
  base.mattr = "-avx512f";
  target::Target t = resolve_host(base);
  if (t.mattr.find("+avx2") == std::string::npos) {
    GTEST_SKIP() << "host has no AVX2";
  }
  EXPECT_EQ(t.vector_bits, 256);
  std::string text = emit_assembly(fma_kernel("fma16", 1024), t);
  EXPECT_EQ(text.find("zmm"), std::string::npos) << text;
  EXPECT_NE(text.find("ymm"), std::string::npos) << text;
}

TEST(BuildCpu, FmaKernelComputesAndBuildsFromSeveralThreads) {
  const int n = 256;
  std::vector<float> a = random_floats(n, 61);
  std::vector<float> b = random_floats(n, 62);
  std::vector<float> c = random_floats(n, 63);
  std::vector<std::vector<float>> outs(4, std::vector<float>(n, 0.0f));
  std::vector<int32_t> status(4, -1);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < outs.size(); ++t) {
    threads.emplace_back([&, t] {
      Artifact k = build_cpu(fma_kernel("fma_t" + std::to_string(t), n), host());
      status[t] = call(k, {a.data(), b.data(), c.data(), outs[t].data()});
    });
  }
  for (std::thread& th : threads) {
    th.join();
  }
  for (size_t t = 0; t < outs.size(); ++t) {
    ASSERT_EQ(status[t], 0);
    for (int i = 0; i < n; ++i) {
      EXPECT_TRUE(close(outs[t][i], static_cast<double>(a[i]) * b[i] + c[i], 1e-6, 1e-6)) << i;
    }
  }
}

TEST(BuildCpu, ArtifactOutlivesItsBuilderAndKeepsItsName) {
  Artifact k;
  EXPECT_FALSE(k.defined());
  EXPECT_THROW(k(nullptr), InternalError);
  k = build_cpu(fma_kernel("keep", 16), host());
  EXPECT_TRUE(k.defined());
  EXPECT_EQ(k.name(), "keep");
  std::vector<float> a(16, 2.0f);
  std::vector<float> b(16, 3.0f);
  std::vector<float> c(16, 1.0f);
  std::vector<float> out(16);
  Artifact copy = k;
  k = Artifact();
  ASSERT_EQ(call(copy, {a.data(), b.data(), c.data(), out.data()}), 0);
  EXPECT_EQ(out, std::vector<float>(16, 7.0f));
}

TEST(BuildCpu, Float16IsNotSupportedYet) {
  ir::Buffer h = buffer("h", DataType::float16(), 8);
  ir::Var i("i");
  ir::Stmt body = loop(i, 8, store(h, load(h, i), i));
  EXPECT_THROW(build_cpu(make_func("half", {h}, 0, body), host()), UserError);
}

TEST(BuildCpu, GpuTargetAndBadNamesAreUserErrors) {
  ir::LoweredFunc f = fma_kernel("ok", 16);
  target::Target cuda;
  cuda.kind = target::TargetKind::Cuda;
  cuda.arch = "sm_80";
  EXPECT_THROW(build_cpu(f, cuda), UserError);
  f.name = "not a name";
  EXPECT_THROW(build_cpu(f, host()), UserError);
  // Names of functions the generated code calls (libm, the C library, the runtime): a kernel
  // named "exp" would be called in their place.
  for (const char* taken : {"exp", "expf", "tanh", "memset", "tt_alloc", "tt_parallel_for"}) {
    f.name = taken;
    EXPECT_THROW(build_cpu(f, host()), UserError) << taken;
  }
}

}  // namespace
}  // namespace tensortune::codegen

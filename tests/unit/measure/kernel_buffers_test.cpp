// SPDX-License-Identifier: Apache-2.0
// Kernel buffers: reproducible non-zero inputs, poisoned outputs, and a comparison that names the
// first wrong element and catches unwritten ones.
#include "tensortune/measure/kernel_buffers.h"

#include "candidates.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tensortune::measure {
namespace {

KernelSignature signature_of(const std::string& spec) {
  te::Workload w = te::make_workload(spec);
  return KernelSignature::of(testing::default_kernel(w));
}

TEST(KernelBuffers, InputsAreRandomNonZeroAndReproducible) {
  KernelSignature sig = signature_of("matmul:M=8,N=8,K=8");
  KernelBuffers a(sig), b(sig), c(sig);
  a.fill_inputs(7);
  b.fill_inputs(7);
  c.fill_inputs(8);
  EXPECT_EQ(a.bytes(0), b.bytes(0));
  EXPECT_EQ(a.bytes(1), b.bytes(1));
  EXPECT_NE(a.bytes(0), c.bytes(0));
  EXPECT_NE(a.bytes(0), a.bytes(1));  // each input gets its own values
  const auto* x = static_cast<const float*>(a.data(0));
  for (int i = 0; i < 64; ++i) {
    EXPECT_GE(std::fabs(x[i]), 0.1f);
    EXPECT_LE(std::fabs(x[i]), 1.0f);
  }
}

TEST(KernelBuffers, OutputsArePoisonedWithNaN) {
  KernelSignature sig = signature_of("matmul:M=4,N=4,K=4");
  KernelBuffers a(sig);
  a.poison_outputs();
  const auto* out = static_cast<const float*>(a.data(2));
  for (int i = 0; i < 16; ++i) {
    EXPECT_TRUE(std::isnan(out[i]));
  }
}

TEST(KernelBuffers, AFlushLeavesEveryValueAsItWas) {
  // The flush stores the first input's lines again and evicts the weights: no value may change,
  // or the timed calls would compute on other data than the checked one.
  KernelSignature sig = signature_of("matmul:M=33,N=40,K=65");
  KernelBuffers a(sig), b(sig);
  a.fill_inputs(3);
  b.fill_inputs(3);
  a.poison_outputs();
  b.poison_outputs();
  a.flush_caches();
  for (size_t p = 0; p < 3; ++p) {
    EXPECT_EQ(a.bytes(p), b.bytes(p)) << "buffer " << p;
  }
}

TEST(CompareOutputs, AcceptsTheSameKernelAndNamesTheFirstWrongElement) {
  te::Workload w = testing::matmul_workload(8);
  ir::LoweredFunc func = testing::default_kernel(w);
  codegen::Artifact kernel = codegen::build_cpu(func, target::Target());
  KernelSignature sig = KernelSignature::of(func);
  KernelBuffers got(sig), expected(sig);
  got.fill_inputs(1);
  expected.copy_inputs_from(got);
  got.poison_outputs();
  expected.poison_outputs();
  ASSERT_EQ(kernel(got.pointers()), 0);
  ASSERT_EQ(kernel(expected.pointers()), 0);
  Tolerance tol = Tolerance::for_reduction(8);
  EXPECT_FALSE(compare_outputs(got, {expected.bytes(2)}, tol));

  static_cast<float*>(got.data(2))[8 * 3 + 5] += 0.5f;          // C[3, 5]
  static_cast<float*>(got.data(2))[8 * 7 + 7] = std::nanf("");  // C[7, 7] "unwritten"
  std::optional<std::string> diff = compare_outputs(got, {expected.bytes(2)}, tol);
  ASSERT_TRUE(diff);
  EXPECT_NE(diff->find("C[3, 5] = "), std::string::npos) << *diff;
  EXPECT_NE(diff->find("2 of 64 elements differ"), std::string::npos) << *diff;
}

TEST(CompareOutputs, IntegersMustMatchExactly) {
  KernelSignature sig;
  sig.name = "k";
  sig.params = {BufferSpec{"x", ir::DataType::int32(), {4}}};
  sig.num_inputs = 0;
  KernelBuffers got(sig);
  auto* v = static_cast<int32_t*>(got.data(0));
  for (int i = 0; i < 4; ++i) {
    v[i] = i;
  }
  std::string expected = got.bytes(0);
  EXPECT_FALSE(compare_outputs(got, {expected}, Tolerance{}));
  v[2] = 3;
  std::optional<std::string> diff = compare_outputs(got, {expected}, Tolerance{});
  ASSERT_TRUE(diff);
  EXPECT_NE(diff->find("x[2] = 3, expected 2; 1 of 4 elements differ"), std::string::npos) << *diff;
}

TEST(KernelBuffers, NarrowAndUnsignedIntegersAreFilledAndCompared) {
  using Code = ir::DataType::Code;
  KernelSignature sig;
  sig.name = "k";
  sig.params = {BufferSpec{"a", ir::DataType(Code::Int, 8), {64}},
                BufferSpec{"b", ir::DataType(Code::UInt, 8), {64}},
                BufferSpec{"c", ir::DataType(Code::Int, 16), {64}},
                BufferSpec{"d", ir::DataType(Code::UInt, 32), {64}},
                BufferSpec{"flag", ir::DataType::boolean(), {64}},
                BufferSpec{"out", ir::DataType(Code::Int, 8), {4}}};
  sig.num_inputs = 5;
  KernelBuffers buffers(sig);
  buffers.fill_inputs(3);
  auto* a = static_cast<int8_t*>(buffers.data(0));
  auto* b = static_cast<uint8_t*>(buffers.data(1));
  auto* d = static_cast<uint32_t*>(buffers.data(3));
  auto* flag = static_cast<uint8_t*>(buffers.data(4));
  bool negative = false;
  for (int i = 0; i < 64; ++i) {
    EXPECT_TRUE(a[i] != 0 && a[i] >= -4 && a[i] <= 4) << int(a[i]);
    negative = negative || a[i] < 0;
    EXPECT_TRUE(b[i] >= 1 && b[i] <= 4) << int(b[i]);  // unsigned: no wrapped negatives
    EXPECT_TRUE(d[i] >= 1 && d[i] <= 4) << d[i];
    EXPECT_LE(flag[i], 1);
  }
  EXPECT_TRUE(negative);
  auto* out = static_cast<int8_t*>(buffers.data(5));
  for (int i = 0; i < 4; ++i)
    out[i] = static_cast<int8_t>(-i);
  const std::string expected = buffers.bytes(5);
  EXPECT_FALSE(compare_outputs(buffers, {expected}, Tolerance{}));
  out[1] = 7;
  std::optional<std::string> diff = compare_outputs(buffers, {expected}, Tolerance{});
  ASSERT_TRUE(diff);
  EXPECT_NE(diff->find("out[1] = 7, expected -1"), std::string::npos) << *diff;  // numbers
}

TEST(KernelBuffers, BuffersBeyondTheMemoryAreAUserErrorNotAnAbort) {
  // In a child limited to 1 GiB of address space: a 4 GiB output cannot be had.
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit limit{};
    limit.rlim_cur = limit.rlim_max = rlim_t{1} << 30;
    ::setrlimit(RLIMIT_AS, &limit);
    KernelSignature sig;
    sig.name = "k";
    sig.params = {BufferSpec{"big", ir::DataType::float32(), {int64_t{1} << 30}}};
    int code = 2;
    try {
      KernelBuffers buffers(sig);
      code = 3;
    } catch (const UserError& e) {
      code = std::string(e.what()).find("'big'") != std::string::npos ? 0 : 4;
    }
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of a signal: " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(KernelBuffers, UnsupportedDtypesAreUserErrors) {
  KernelSignature sig;
  sig.name = "k";
  sig.params = {BufferSpec{"h", ir::DataType::float16(), {4}}};
  EXPECT_THROW(KernelBuffers{sig}, UserError);
}

}  // namespace
}  // namespace tensortune::measure

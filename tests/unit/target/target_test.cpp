// SPDX-License-Identifier: Apache-2.0
// Target strings: accepted forms, canonical printing, round trips, and the errors for bad input.
#include "tensortune/target/target.h"

#include "common/text.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <string>

namespace tensortune::target {
namespace {
using test::contains;

std::string parse_error(const std::string& text) {
  try {
    Target::parse(text);
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Target, NativeIsDefaultLlvm) {
  Target t = Target::parse("native");
  EXPECT_EQ(t.kind, TargetKind::Llvm);
  EXPECT_EQ(t.mcpu, "native");
  EXPECT_FALSE(t.is_gpu());
  EXPECT_EQ(t.to_string(), "llvm");
  EXPECT_EQ(t, Target::parse("llvm"));
  EXPECT_EQ(t, Target::parse("llvm -mcpu=native"));
  EXPECT_EQ(t, Target());
}

TEST(Target, ParsesAllLlvmOptions) {
  Target t =
      Target::parse("  llvm   -vector-bits=512 -cores=2 -mattr=+avx512f,-avx512vl -mcpu=znver4 ");
  EXPECT_EQ(t.mcpu, "znver4");
  EXPECT_EQ(t.mattr, "+avx512f,-avx512vl");
  EXPECT_EQ(t.cores, 2);
  EXPECT_EQ(t.vector_bits, 512);
  EXPECT_EQ(t.to_string(), "llvm -mcpu=znver4 -mattr=+avx512f,-avx512vl -cores=2 -vector-bits=512");
}

TEST(Target, NativeAcceptsLlvmOptionsButNotMcpu) {
  Target t = Target::parse("native -cores=4");
  EXPECT_EQ(t.cores, 4);
  EXPECT_EQ(t.to_string(), "llvm -cores=4");
  EXPECT_TRUE(contains(parse_error("native -mcpu=znver4"), "unknown option '-mcpu'"));
}

TEST(Target, ParsesCuda) {
  Target t = Target::parse("cuda -arch=sm_80");
  EXPECT_EQ(t.kind, TargetKind::Cuda);
  EXPECT_TRUE(t.is_gpu());
  EXPECT_EQ(t.arch, "sm_80");
  EXPECT_EQ(t.max_threads_per_block, 1024);
  EXPECT_EQ(t.max_shared_memory_bytes, 48 * 1024);
  EXPECT_EQ(t.warp_size, 32);
  EXPECT_EQ(t.to_string(), "cuda -arch=sm_80");
  Target limits =
      Target::parse("cuda -max-shared-memory=101376 -max-threads-per-block=512 -arch=sm_90a");
  EXPECT_EQ(limits.max_threads_per_block, 512);
  EXPECT_EQ(limits.max_shared_memory_bytes, 101376);
  EXPECT_EQ(limits.to_string(),
            "cuda -arch=sm_90a -max-threads-per-block=512 -max-shared-memory=101376");
  EXPECT_EQ(t.sm_version(), 80);
  EXPECT_EQ(limits.sm_version(), 90);
  EXPECT_EQ(Target::parse("cuda -arch=sm_120").sm_version(), 120);
  EXPECT_EQ(Target::parse("llvm").sm_version(), 0);
}

TEST(Target, ToStringRoundTrips) {
  for (const char* text :
       {"llvm", "llvm -mcpu=skylake-avx512", "llvm -mattr=+fma -cores=16", "llvm -vector-bits=256",
        "cuda -arch=sm_75", "cuda -arch=sm_120 -max-threads-per-block=256",
        "cuda -arch=sm_86 -max-shared-memory=65536"}) {
    Target t = Target::parse(text);
    EXPECT_EQ(t.to_string(), text);
    EXPECT_EQ(Target::parse(t.to_string()), t);
  }
}

TEST(Target, ToStringOmitsDefaultsSetExplicitly) {
  EXPECT_EQ(Target::parse("llvm -cores=0 -vector-bits=0").to_string(), "llvm");
  EXPECT_EQ(Target::parse("cuda -arch=sm_80 -max-threads-per-block=1024").to_string(),
            "cuda -arch=sm_80");
}

TEST(Target, EqualityFollowsCanonicalText) {
  EXPECT_NE(Target::parse("llvm -cores=2"), Target::parse("llvm -cores=4"));
  EXPECT_NE(Target::parse("cuda -arch=sm_80"), Target::parse("cuda -arch=sm_86"));
  EXPECT_NE(Target::parse("cuda -arch=sm_80"), Target::parse("llvm"));
}

TEST(Target, RejectsUnknownKindListingAcceptedKinds) {
  std::string err = parse_error("opencl -device=x");
  EXPECT_TRUE(contains(err, "unknown kind 'opencl'")) << err;
  EXPECT_TRUE(contains(err, "llvm, cuda, native")) << err;
  EXPECT_TRUE(contains(parse_error(""), "empty target string"));
  EXPECT_TRUE(contains(parse_error("   "), "empty target string"));
}

TEST(Target, RejectsUnknownOptionsListingAcceptedOnes) {
  std::string err = parse_error("llvm -arch=sm_80");
  EXPECT_EQ(err,
            "target: unknown option '-arch' for kind 'llvm' (accepted: -mcpu, -mattr, "
            "-cores, -vector-bits)");
  err = parse_error("cuda -arch=sm_80 -mcpu=znver4");
  EXPECT_EQ(err,
            "target: unknown option '-mcpu' for kind 'cuda' (accepted: -arch, "
            "-max-threads-per-block, -max-shared-memory)");
}

TEST(Target, RejectsMalformedOptions) {
  for (const char* bad : {"llvm cores=2", "llvm -cores", "llvm -cores=", "llvm -", "llvm --=1"}) {
    std::string err = parse_error(bad);
    EXPECT_TRUE(contains(err, "is not of the form -name=value") || contains(err, "unknown option"))
        << bad << ": " << err;
  }
  EXPECT_TRUE(contains(parse_error("llvm -cores=2 -cores=4"), "option '-cores' given twice"));
}

TEST(Target, RejectsBadNumbers) {
  for (const char* bad : {"llvm -cores=two", "llvm -cores=-1", "llvm -cores=+2", "llvm -cores=1.5",
                          "llvm -cores=99999999999999", "llvm -cores=1e3"}) {
    std::string err = parse_error(bad);
    EXPECT_TRUE(contains(err, "option '-cores' expects an integer")) << bad << ": " << err;
  }
  EXPECT_TRUE(contains(parse_error("llvm -vector-bits=100"), "power of two"));
  EXPECT_TRUE(contains(parse_error("llvm -vector-bits=32"), "power of two"));
  EXPECT_TRUE(contains(parse_error("cuda -arch=sm_80 -max-threads-per-block=2048"),
                       "'-max-threads-per-block' expects an integer in 1..1024"));
  EXPECT_TRUE(contains(parse_error("cuda -arch=sm_80 -max-shared-memory=0"),
                       "'-max-shared-memory' expects an integer"));
}

TEST(Target, CudaRequiresASupportedArch) {
  EXPECT_EQ(parse_error("cuda"),
            "target: kind 'cuda' requires -arch=sm_XY (e.g. 'cuda -arch=sm_80')");
  EXPECT_TRUE(contains(parse_error("cuda -max-threads-per-block=256"), "requires -arch"));
  for (const char* bad :
       {"cuda -arch=sm_70", "cuda -arch=sm_", "cuda -arch=compute_80", "cuda -arch=sm_8x",
        "cuda -arch=80", "cuda -arch=sm_80b", "cuda -arch=sm_075"}) {
    std::string err = parse_error(bad);
    EXPECT_TRUE(contains(err, "option '-arch' expects 'sm_XY' with XY >= 75"))
        << bad << ": " << err;
  }
}

TEST(Target, RejectsMalformedCpuAndFeatures) {
  EXPECT_TRUE(contains(parse_error("llvm -mcpu=zen$4"), "'-mcpu' expects a CPU name"));
  for (const char* bad :
       {"llvm -mattr=avx2", "llvm -mattr=+avx2,", "llvm -mattr=+", "llvm -mattr=+a,,+b"}) {
    EXPECT_TRUE(contains(parse_error(bad), "'-mattr' expects")) << bad;
  }
}

}  // namespace
}  // namespace tensortune::target

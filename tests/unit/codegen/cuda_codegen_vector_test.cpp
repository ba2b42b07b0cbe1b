// SPDX-License-Identifier: Apache-2.0
// float2/float4 memory accesses of the CUDA C generator: the modular analysis that proves an
// index aligned, the printed loads and stores (and the cases that stay scalarised), aligned
// declarations, and NVRTC's PTX for them (ld.global.v4.f32 / st.shared.v4.f32).
#include "codegen/cuda/internal.h"
#include "codegen_test_util.h"
#include "common/text.h"
#include "tensortune/codegen/cuda_codegen.h"

#include <gtest/gtest.h>

#include <string>

namespace tensortune::codegen {
namespace {
using cuda::modular_set;
using cuda::ModularSet;
using cuda::provably_multiple_of;
using cuda::VarBindings;
using ir::Expr;
using ir::ForKind;
using ir::Stmt;
using ir::Var;
using test::contains;
using testing::buffer;
using testing::gpu;
using testing::kF32;
using testing::load;
using testing::loop;
using testing::make_func;
using testing::ramp;
using testing::store;

::testing::AssertionResult is_set(const ModularSet& s, int64_t coeff, int64_t base) {
  if (s.coeff == coeff && s.base == base) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "got " << s.base << " + " << s.coeff << "k, want " << base << " + " << coeff << "k";
}

TEST(CudaModularSet, SumsOfMultiplesOfFreeVariables) {
  Var i("i"), j("j");
  VarBindings none;
  EXPECT_TRUE(is_set(modular_set(i * 8 + j * 4 + 12, none), 4, 0));
  EXPECT_TRUE(is_set(modular_set(i * 4 + 2, none), 4, 2));
  EXPECT_TRUE(is_set(modular_set(i * 4 - 4, none), 4, 0));
  EXPECT_TRUE(is_set(modular_set(Expr(-6) + i * 8, none), 8, 2));
  EXPECT_TRUE(is_set(modular_set(Expr(7), none), 0, 7));
  EXPECT_TRUE(is_set(modular_set(i, none), 1, 0));
  EXPECT_TRUE(is_set(modular_set(i * j * 6, none), 6, 0));
  EXPECT_TRUE(provably_multiple_of(i * 8 + j * 4 + 12, 4, none));
  EXPECT_FALSE(provably_multiple_of(i * 8 + j * 4 + 12, 8, none));
  EXPECT_FALSE(provably_multiple_of(i * 4 + 2, 4, none));
  EXPECT_TRUE(provably_multiple_of(i * 4 + 2, 2, none));
  EXPECT_FALSE(provably_multiple_of(i * 30 + j * 4, 4, none));
  EXPECT_TRUE(provably_multiple_of(i * 30 + j * 4, 2, none));
}

TEST(CudaModularSet, FloorDivisionModuloMinMaxAndSelect) {
  Var i("i"), j("j");
  VarBindings none;
  EXPECT_TRUE(is_set(modular_set((i * 16 + 4) / 4, none), 4, 1));
  EXPECT_TRUE(is_set(modular_set(i / 4 * 4, none), 4, 0));
  EXPECT_TRUE(is_set(modular_set((i * 6) / 4, none), 1, 0));  // 4 does not divide 6
  EXPECT_TRUE(is_set(modular_set((i * 8 + 5) % 16, none), 8, 5));
  EXPECT_TRUE(is_set(modular_set(i % 2 * 4, none), 4, 0));
  EXPECT_TRUE(is_set(modular_set(Expr(-7) % 4, none), 0, 1));   // floor modulo
  EXPECT_TRUE(is_set(modular_set(Expr(-7) / 4, none), 0, -2));  // floor division
  EXPECT_TRUE(is_set(modular_set(ir::min(i * 8, Expr(4)), none), 4, 0));
  EXPECT_TRUE(is_set(modular_set(ir::max(i * 8 + 2, j * 4 + 6), none), 4, 2));
  EXPECT_TRUE(is_set(modular_set(ir::select(i < 3, i * 8, j * 12), none), 4, 0));
  EXPECT_TRUE(is_set(modular_set(i % j, none), 1, 0));
}

TEST(CudaModularSet, LetsAndLoopsOfExtentOneAreLookedThrough) {
  Var i("i"), x("x"), k("k"), t("t");
  ir::Buffer c = buffer("C", kF32, 64);
  // let x = i * 16 in for (k in [8, 9)) for (t in [4, 8)) C[x + k + t * 4] = 0
  Stmt body = ir::LetStmt::make(
      x, i * 16,
      ir::For::make(k, 8, 1, ForKind::Serial,
                    ir::For::make(t, 4, 4, ForKind::Serial, store(c, Expr(0.0f), x + k + t * 4))));
  VarBindings bindings = cuda::collect_bindings(body);
  EXPECT_EQ(bindings.size(), 3u);
  EXPECT_TRUE(provably_multiple_of(x + k + t * 4, 4, bindings));
  EXPECT_FALSE(provably_multiple_of(x + k + t * 4, 16, bindings));
  EXPECT_FALSE(provably_multiple_of(x + t, 4, bindings)) << "a loop of extent 4 is any value";
  EXPECT_FALSE(provably_multiple_of(x + k, 4, VarBindings{})) << "unbound";
}

// Unrolling copies a body with its lets: one variable, a value per copy.
TEST(CudaModularSet, AVariableBoundTwiceIsEitherValue) {
  Var i("i"), x("x");
  ir::Buffer c = buffer("C", kF32, 64);
  Stmt body = ir::Seq::make({ir::LetStmt::make(x, i * 8, store(c, Expr(0.0f), x)),
                             ir::LetStmt::make(x, i * 8 + 2, store(c, Expr(0.0f), x))});
  VarBindings bindings = cuda::collect_bindings(body);
  EXPECT_TRUE(is_set(modular_set(x, bindings), 2, 0));
  EXPECT_FALSE(provably_multiple_of(x, 4, bindings));
  // A loop variable that is also let-bound somewhere is any value.
  Stmt reused = ir::Seq::make(
      {ir::LetStmt::make(x, i * 8, store(c, Expr(0.0f), x)), loop(x, 4, store(c, Expr(0.0f), x))});
  EXPECT_FALSE(provably_multiple_of(x, 2, cuda::collect_bindings(reused)));
}

TEST(CudaModularSet, OverflowAndNonIntegersAreUnknown) {
  Var i("i");
  VarBindings none;
  const ir::DataType i64 = ir::DataType::int64();
  Expr huge = ir::make_const(i64, int64_t{1} << 62);
  EXPECT_TRUE(
      is_set(modular_set(ir::cast(i64, i) * huge * ir::make_const(i64, int64_t{8}), none), 1, 0));
  EXPECT_TRUE(is_set(modular_set(Expr(4.0f), none), 1, 0));
}

TEST(CudaModularSet, AccessWidthNeedsAContiguousUnmaskedFloat32Ramp) {
  Var i("i");
  VarBindings none;
  auto width = [&](Expr index, ir::DataType t, Expr predicate = Expr()) {
    return cuda::vector_access_width(t, index, predicate, none);
  };
  EXPECT_EQ(width(ramp(i * 4, 1, 4), kF32.with_lanes(4)), 4);
  EXPECT_EQ(width(ramp(i * 8, 1, 8), kF32.with_lanes(8)), 4);
  EXPECT_EQ(width(ramp(i * 2, 1, 4), kF32.with_lanes(4)), 2);
  EXPECT_EQ(width(ramp(i * 4 + 2, 1, 2), kF32.with_lanes(2)), 2);
  EXPECT_EQ(width(ramp(i * 4 + 1, 1, 4), kF32.with_lanes(4)), 0);
  EXPECT_EQ(width(ramp(i * 4, 1, 3), kF32.with_lanes(3)), 0);
  EXPECT_EQ(width(ramp(i * 4, 2, 4), kF32.with_lanes(4)), 0) << "strided";
  EXPECT_EQ(width(ramp(i * 4, 1, 4), ir::DataType::int32(4)), 0) << "float32 only";
  EXPECT_EQ(width(ramp(i * 4, 1, 4), ir::DataType::float64(4)), 0) << "float32 only";
  EXPECT_EQ(width(ramp(i * 4, 1, 4), kF32.with_lanes(4), ir::Broadcast::make(i < 3, 4)), 0)
      << "masked";
  EXPECT_EQ(width(ir::Broadcast::make(i * 4, 4), kF32.with_lanes(4)), 0);
}

TEST(CudaCodegenVector, AlignedLoadAndStoreAreFloat4) {
  Var i("i");
  ir::Buffer a = buffer("A", kF32, 32);
  ir::Buffer c = buffer("C", kF32, 32);
  Expr lanes = ramp(i * 4, 1, 4);
  Stmt body = store(c, load(a, lanes) + ir::Broadcast::make(Expr(1.0f), 4), lanes);
  ir::LoweredFunc f = make_func("f", {a, c}, 1, loop(i, 8, body, ForKind::ThreadX));
  std::string s = generate_cuda(f, gpu()).source;
  EXPECT_TRUE(contains(s,
                       "  {\n"
                       "    const float4 tt_v0 = *reinterpret_cast<const float4*>(&A[(i * 4)]);\n"
                       "    *reinterpret_cast<float4*>(&C[(i * 4)]) = make_float4((tt_v0.x + "
                       "1.0f), (tt_v0.y + 1.0f), (tt_v0.z + 1.0f), (tt_v0.w + 1.0f));\n"
                       "  }\n"))
      << s;
  EXPECT_FALSE(contains(s, "tt_lane")) << s;
}

TEST(CudaCodegenVector, EightLanesAreTwoFloat4AndRowsOfTwoAreFloat2) {
  Var i("i");
  ir::Buffer a = buffer("A", kF32, 64);
  ir::Buffer c = buffer("C", kF32, 64);
  Expr eight = ramp(i * 8, 1, 8);
  std::string s =
      generate_cuda(
          make_func("f", {a, c}, 1, loop(i, 8, store(c, load(a, eight), eight), ForKind::ThreadX)),
          gpu())
          .source;
  EXPECT_TRUE(contains(s,
                       "const float4 tt_v1 = *reinterpret_cast<const float4*>(&A[((i * 8) + "
                       "4)]);"))
      << s;
  EXPECT_TRUE(contains(s,
                       "*reinterpret_cast<float4*>(&C[(i * 8)]) = make_float4(tt_v0.x, "
                       "tt_v0.y, tt_v0.z, tt_v0.w);"))
      << s;
  EXPECT_TRUE(contains(s,
                       "*reinterpret_cast<float4*>(&C[((i * 8) + 4)]) = make_float4(tt_v1.x, "
                       "tt_v1.y, tt_v1.z, tt_v1.w);"))
      << s;

  Expr pairs = ramp(i * 6, 1, 4);  // rows of 6: even, not a multiple of 4
  s = generate_cuda(
          make_func("f", {a, c}, 1, loop(i, 8, store(c, load(a, pairs), pairs), ForKind::ThreadX)),
          gpu())
          .source;
  EXPECT_FALSE(contains(s, "float4")) << s;
  EXPECT_TRUE(contains(s,
                       "*reinterpret_cast<float2*>(&C[((i * 6) + 2)]) = make_float2(tt_v1.x, "
                       "tt_v1.y);"))
      << s;
}

TEST(CudaCodegenVector, MaskedStoresAndUnalignedOrStridedLoadsStayScalar) {
  Var i("i");
  ir::Buffer a = buffer("A", kF32, 64);
  ir::Buffer c = buffer("C", kF32, 64);
  Expr lanes = ramp(i * 4, 1, 4);
  Expr mask = ramp(i * 4, 1, 4) < ir::Broadcast::make(Expr(30), 4);
  // A masked store: the unrolled lane loop, every lane under its mask.
  std::string s =
      generate_cuda(make_func("f", {a, c}, 1,
                              loop(i, 8, store(c, load(a, lanes), lanes, mask), ForKind::ThreadX)),
                    gpu())
          .source;
  EXPECT_FALSE(contains(s, "float4")) << s;
  EXPECT_TRUE(contains(s, "for (int tt_lane = 0; tt_lane < 4; ++tt_lane)")) << s;
  // An aligned store of an unaligned load and a strided one: those are read lane by lane.
  Expr shifted = ramp(i * 4 + 1, 1, 4);
  Expr strided = ir::Ramp::make(i, Expr(8), 4);
  s = generate_cuda(make_func("f", {a, c}, 1,
                              loop(i, 7, store(c, load(a, shifted) + load(a, strided), lanes),
                                   ForKind::ThreadX)),
                    gpu())
          .source;
  EXPECT_TRUE(contains(s,
                       "*reinterpret_cast<float4*>(&C[(i * 4)]) = make_float4((A[((i * 4) + "
                       "1)] + A[i]), (A[(((i * 4) + 1) + 1)] + A[(i + (8 * 1))]),"))
      << s;
  EXPECT_FALSE(contains(s, "const float4")) << s;
}

// A load under a Select arm runs only when its condition holds (a padded input): reading it as a
// vector before the select could read out of bounds.
TEST(CudaCodegenVector, LoadsUnderASelectOrAMaskAreNotHoisted) {
  Var i("i");
  ir::Buffer a = buffer("A", kF32, 32);
  ir::Buffer c = buffer("C", kF32, 64);
  Expr lanes = ramp(i * 4, 1, 4);
  Expr inside = lanes < ir::Broadcast::make(Expr(32), 4);
  Expr value = ir::select(inside, load(a, lanes), ir::Broadcast::make(Expr(0.0f), 4)) +
               load(a, lanes, inside);
  std::string s =
      generate_cuda(
          make_func("f", {a, c}, 1, loop(i, 16, store(c, value, lanes), ForKind::ThreadX)), gpu())
          .source;
  EXPECT_TRUE(contains(s, "*reinterpret_cast<float4*>(&C[(i * 4)]) = make_float4(")) << s;
  EXPECT_FALSE(contains(s, "const float4")) << s;
  EXPECT_TRUE(contains(s, "((((i * 4) + 3) < 32) ? A[((i * 4) + 3)] : 0.0f)")) << s;
}

// Lanes 4..7 of the value read what the first float4 store writes: both halves are computed
// before either is stored.
TEST(CudaCodegenVector, StoreReadingItsBufferComputesAllChunksFirst) {
  Var i("i");
  ir::Buffer c = buffer("C", kF32, 64);
  Expr lanes = ramp(i * 8, 1, 8);
  Expr reversed = ir::Ramp::make(i * 8 + 7, Expr(-1), 8);
  std::string s =
      generate_cuda(
          make_func("f", {c}, 0, loop(i, 8, store(c, load(c, reversed), lanes), ForKind::ThreadX)),
          gpu())
          .source;
  size_t first = s.find("const float4 tt_s0 = make_float4(C[((i * 8) + 7)], ");
  size_t second = s.find("const float4 tt_s1 = make_float4(");
  size_t store0 = s.find("*reinterpret_cast<float4*>(&C[(i * 8)]) = tt_s0;");
  size_t store1 = s.find("*reinterpret_cast<float4*>(&C[((i * 8) + 4)]) = tt_s1;");
  ASSERT_NE(first, std::string::npos) << s;
  ASSERT_NE(store1, std::string::npos) << s;
  EXPECT_LT(first, second) << s;
  EXPECT_LT(second, store0) << s;
  EXPECT_LT(store0, store1) << s;
}

TEST(CudaCodegenVector, LetBoundBaseAndThreadZeroGuard) {
  Var b("b"), x("x");
  ir::Buffer c = buffer("C", kF32, 64);
  // let x = b * 16 + 4 in C[x .. x + 3] = 1, outside the threads of a 32-thread block.
  Var t("t");
  Stmt stores =
      ir::LetStmt::make(x, b * 16 + 4, store(c, ir::Broadcast::make(Expr(1.0f), 4), ramp(x, 1, 4)));
  ir::Buffer d = buffer("D", kF32, 128);
  Stmt threads = loop(t, 32, store(d, Expr(2.0f), b * 32 + t), ForKind::ThreadX);
  std::string s =
      generate_cuda(
          make_func("f", {c, d}, 0, loop(b, 4, ir::Seq::make({stores, threads}), ForKind::BlockX)),
          gpu())
          .source;
  EXPECT_TRUE(contains(s,
                       "if (threadIdx.x == 0) {\n"
                       "      *reinterpret_cast<float4*>(&C[x]) = make_float4(1.0f, 1.0f, "
                       "1.0f, 1.0f);\n"
                       "    }"))
      << s;
}

TEST(CudaCodegenVector, SharedAndLocalArraysAreAlignedTo16Bytes) {
  Var t("t");
  ir::Buffer a = buffer("A", kF32, 64);
  ir::Buffer c = buffer("C", kF32, 64);
  ir::Buffer s = buffer("S", kF32, 3, ir::MemoryScope::Shared);
  ir::Buffer l = buffer("L", kF32, 4, ir::MemoryScope::Local);
  Expr lanes = ramp(t * 4, 1, 4);
  Stmt use =
      ir::Seq::make({store(l, load(a, lanes), ramp(0, 1, 4)),
                     store(c, load(l, ramp(0, 1, 4)) + ir::Broadcast::make(load(s, 0), 4), lanes)});
  Stmt body = ir::Allocate::make(
      s, ir::Seq::make(
             {store(s, Expr(1.0f), 0), loop(t, 16, ir::Allocate::make(l, use), ForKind::ThreadX)}));
  CudaModule m = generate_cuda(make_func("f", {a, c}, 1, body), gpu());
  EXPECT_TRUE(contains(m.source, "__shared__ __align__(16) float S[3];")) << m.source;
  EXPECT_TRUE(contains(m.source, "__align__(16) float L[4];")) << m.source;
  EXPECT_TRUE(contains(m.source, "*reinterpret_cast<float4*>(&L[0]) = make_float4(tt_v0.x,"))
      << m.source;
  EXPECT_EQ(m.kernels[0].shared_bytes, 16) << "12 bytes padded to the alignment";
}

/// A 64-thread block copies 4 floats per thread of A into a shared tile, then writes them to C
/// reversed by vectors: float4 global loads, shared stores and loads, global stores.
ir::LoweredFunc shared_vector_copy() {
  ir::Buffer a = buffer("A", kF32, 1024);
  ir::Buffer c = buffer("C", kF32, 1024);
  ir::Buffer s = buffer("S", kF32, 256, ir::MemoryScope::Shared);
  Var b("b"), t1("t1"), t2("t2");
  Stmt fetch = loop(t1, 64, store(s, load(a, ramp(b * 256 + t1 * 4, 1, 4)), ramp(t1 * 4, 1, 4)),
                    ForKind::ThreadX);
  Stmt write =
      loop(t2, 64, store(c, load(s, ramp(Expr(252) - t2 * 4, 1, 4)), ramp(b * 256 + t2 * 4, 1, 4)),
           ForKind::ThreadX);
  return make_func(
      "f", {a, c}, 1,
      loop(b, 4, ir::Allocate::make(s, ir::Seq::make({fetch, write})), ForKind::BlockX));
}

TEST(CudaCodegenVector, SharedTileCopyIsVectorizedBothWays) {
  std::string s = generate_cuda(shared_vector_copy(), gpu()).source;
  EXPECT_TRUE(contains(s, "*reinterpret_cast<const float4*>(&A[((b * 256) + (t1 * 4))]);")) << s;
  EXPECT_TRUE(contains(s, "*reinterpret_cast<float4*>(&S[(t1 * 4)]) = ")) << s;
  EXPECT_TRUE(contains(s, "*reinterpret_cast<const float4*>(&S[(252 - (t2 * 4))]);")) << s;
  size_t fetch = s.find("&S[(t1 * 4)]");
  size_t barrier = s.find("__syncthreads();", fetch);
  EXPECT_LT(barrier, s.find("&S[(252 - (t2 * 4))]")) << s;
}

TEST(CudaCodegenVector, NvrtcEmitsVectorLoadsAndStoresInPtx) {
  std::string why;
  if (!nvrtc_available(&why)) {
    GTEST_SKIP() << "NVRTC is not available: " << why;
  }
  CudaModule m = generate_cuda(shared_vector_copy(), gpu());
  for (const char* arch : {"sm_80", "sm_90"}) {
    NvrtcOutput out =
        compile_cuda(m.source, target::Target::parse(std::string("cuda -arch=") + arch), false);
    // Read-only global data may be loaded through the non-coherent path (ld.global.nc).
    EXPECT_TRUE(contains(out.ptx, "ld.global.v4.f32") || contains(out.ptx, "ld.global.nc.v4.f32"))
        << arch << "\n"
        << out.ptx;
    EXPECT_TRUE(contains(out.ptx, "st.shared.v4.f32")) << arch << "\n" << out.ptx;
    EXPECT_TRUE(contains(out.ptx, "ld.shared.v4.f32")) << arch << "\n" << out.ptx;
    EXPECT_TRUE(contains(out.ptx, "st.global.v4.f32")) << arch << "\n" << out.ptx;
  }
}

}  // namespace
}  // namespace tensortune::codegen

// SPDX-License-Identifier: Apache-2.0
// Double-buffered shared fetches (cuda/pipeline.cpp): a serial loop that fills a shared tile and
// then reads it gets a prologue fetch, the next step's fetch as cp.async copies into the other
// half, and one wait and barrier at the top of each step; kernels without room for the second
// half, targets before sm_80 and TT_CUDA_PIPELINE=0 keep the plain fetch.
#include "codegen_test_util.h"
#include "common/text.h"
#include "tensortune/codegen/cuda_codegen.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace tensortune::codegen {
namespace {
using ir::Expr;
using ir::ForKind;
using ir::Stmt;
using ir::Var;
using test::count;
using testing::buffer;
using testing::kF32;
using testing::load;
using testing::loop;
using testing::make_func;
using testing::ramp;
using testing::store;

/// C[b*64 + t] = sum over k of S[t] where S is A's k-th tile of 64 (read reversed, so threads
/// share data): `vector` fetches a float4 per thread of 16, `padded` reads A through a
/// select(inside, A, 0) as a padded conv input does. The tile holds `tile` floats (64 or more);
/// it asks for a pipeline of `stages` (ir::BufferNode::pipeline_stages, 0: the default).
ir::LoweredFunc tiled_sum(
    bool vector, bool padded, int64_t tile = 64, bool in_place = false, int64_t stages = 0) {
  ir::Buffer a = buffer("A", kF32, 4 * 8 * 64);
  ir::Buffer c = buffer("C", kF32, 4 * 64);
  ir::Buffer s("S", kF32, {tile}, ir::MemoryScope::Shared, stages);
  Var b("b"), k("k"), t("t"), u("u");
  const Expr at = b * 512 + k * 64;
  Stmt fetch;
  if (vector) {
    fetch =
        loop(t, 16, store(s, load(a, ramp(at + t * 4, 1, 4)), ramp(t * 4, 1, 4)), ForKind::ThreadX);
  } else {
    Expr value = load(a, at + t);
    if (padded) {
      value = ir::select(t < 60, load(a, at + t), Expr(0.0f));
    }
    fetch = loop(t, 64, store(s, value, t), ForKind::ThreadX);
  }
  Stmt use = loop(u, 64, store(c, load(c, b * 64 + u) + load(s, Expr(63) - u), b * 64 + u),
                  ForKind::ThreadX);
  if (in_place) {  // the compute also writes back into the tile it was fetched from
    use = ir::Seq::make(
        {use, loop(u, 64, store(a, load(s, Expr(63) - u), at + u), ForKind::ThreadX)});
  }
  Stmt init = loop(u, 64, store(c, Expr(0.0f), b * 64 + u), ForKind::ThreadX);
  Stmt steps = loop(k, 8, ir::Allocate::make(s, ir::Seq::make({fetch, use})));
  return make_func("f", {a, c}, 1, loop(b, 4, ir::Seq::make({init, steps}), ForKind::BlockX));
}

std::string source(const ir::LoweredFunc& f, const std::string& arch) {
  return generate_cuda(f, target::Target::parse("cuda -arch=" + arch)).source;
}

TEST(CudaPipeline, TheNextTileIsCopiedAsynchronouslyIntoTheOtherHalf) {
  const std::string s = source(tiled_sum(false, false), "sm_90");
  EXPECT_NE(s.find("float S[128];"), std::string::npos) << s;
  // The prologue fills half 0; each step waits, syncs once, fetches step k + 1, reads half k % 2.
  const size_t loop_at = s.find("for (int k = 0; k < 8; ++k) {");
  ASSERT_NE(loop_at, std::string::npos) << s;
  EXPECT_NE(s.rfind("tt_cp_async4(&S[t], &A[((b * 512) + t)], true);", loop_at), std::string::npos)
      << s;
  const std::string body = s.substr(loop_at);
  EXPECT_EQ(body.find("tt_cp_async_wait_all();\n    __syncthreads();"),
            body.find("tt_cp_async_wait_all();"))
      << s;
  EXPECT_EQ(count(body, "__syncthreads();"), 1u) << s;
  EXPECT_NE(body.find("if ((k < 7))"), std::string::npos) << s;
  EXPECT_NE(body.find("(((k + 1) % 2) * 64)"), std::string::npos) << s;
  EXPECT_NE(body.find("S[((((k % 2) * 64) - u) + 63)]"), std::string::npos) << s;
  EXPECT_EQ(count(s, "__syncthreads();"), 1u) << "none before the prologue:\n" << s;
  EXPECT_NE(s.find("asm volatile(\"cp.async.ca.shared.global"), std::string::npos) << s;
}

/// The source for `arch` with TT_CUDA_PIPELINE set to `stages` while it is generated.
std::string source_with_stages(const ir::LoweredFunc& f,
                               const char* stages,
                               const std::string& arch = "sm_90") {
  setenv("TT_CUDA_PIPELINE", stages, 1);
  try {
    std::string s = source(f, arch);
    unsetenv("TT_CUDA_PIPELINE");
    return s;
  } catch (...) {
    unsetenv("TT_CUDA_PIPELINE");
    throw;
  }
}

// Three stages: the prologue fetches steps 0 and 1, each a committed group; step k leaves one
// group (step k + 1's) pending, fetches step k + 2 into stage (k + 2) % 3 and commits, empty or
// not, and reads stage k % 3.
TEST(CudaPipeline, ThreeStagesKeepTwoStepsInFlight) {
  const std::string s = source_with_stages(tiled_sum(false, false), "3");
  EXPECT_NE(s.find("float S[192];"), std::string::npos) << s;
  const size_t loop_at = s.find("for (int k = 0; k < 8; ++k) {");
  ASSERT_NE(loop_at, std::string::npos) << s;
  const std::string prologue = s.substr(0, loop_at);
  EXPECT_NE(prologue.find("tt_cp_async4(&S[t], &A[((b * 512) + t)], true);"), std::string::npos)
      << s;
  EXPECT_NE(prologue.find("tt_cp_async4(&S[(t + 64)], &A[(((b * 512) + t) + 64)], true);"),
            std::string::npos)
      << s;
  EXPECT_EQ(count(prologue, "tt_cp_async_commit();"), 2u) << s;
  const std::string body = s.substr(loop_at);
  EXPECT_NE(body.find("tt_cp_async_wait_group<1>();\n    __syncthreads();"), std::string::npos)
      << s;
  EXPECT_EQ(count(body, "__syncthreads();"), 1u) << s;
  EXPECT_NE(body.find("if ((k < 6))"), std::string::npos) << s;
  EXPECT_NE(body.find("(((k + 2) % 3) * 64)"), std::string::npos) << s;
  EXPECT_EQ(count(body, "tt_cp_async_commit();"), 1u) << s;
  // The commit follows the conditional fetch, outside it.
  EXPECT_GT(body.find("tt_cp_async_commit();"), body.find("if ((k < 6))")) << s;
  EXPECT_NE(body.find("S[((((k % 3) * 64) - u) + 63)]"), std::string::npos) << s;
  // Two stages are the default; other values are refused.
  EXPECT_EQ(source_with_stages(tiled_sum(false, false), "2"),
            source(tiled_sum(false, false), "sm_90"));
  EXPECT_EQ(source_with_stages(tiled_sum(false, false), "1").find("tt_cp_async"),
            std::string::npos);  // one stage: nothing overlaps
  EXPECT_THROW(source_with_stages(tiled_sum(false, false), "5"), UserError);
  EXPECT_THROW(source_with_stages(tiled_sum(false, false), "yes"), UserError);
}

// A schedule asks for a depth through its shared buffers (cache_read's stages); the
// environment's TT_CUDA_PIPELINE still decides for every kernel where it is set, and targets
// without cp.async pipeline nothing.
TEST(CudaPipeline, SharedBuffersAskForTheirLoopsDepth) {
  const auto asking = [](int64_t stages) {
    return tiled_sum(false, false, 64, false, stages);
  };
  const std::string three = source_with_stages(tiled_sum(false, false), "3");
  EXPECT_EQ(source(asking(3), "sm_90"), three);
  EXPECT_EQ(source(asking(2), "sm_90"), source(tiled_sum(false, false), "sm_90"));
  EXPECT_EQ(source(asking(1), "sm_90").find("tt_cp_async"), std::string::npos);
  EXPECT_EQ(source_with_stages(asking(3), "2"), source(tiled_sum(false, false), "sm_90"));
  EXPECT_EQ(source_with_stages(asking(2), "3"), three);
  EXPECT_EQ(source(asking(3), "sm_75").find("tt_cp_async"), std::string::npos);
  // Four stages where the loop has only 8 steps and room: three groups in the prologue.
  EXPECT_EQ(count(source(asking(4), "sm_90"), "tt_cp_async_commit();"), 4u);
}

TEST(CudaPipeline, AlignedVectorsAreSixteenByteCopiesAndPaddingCopiesZeroBytes) {
  const std::string v = source(tiled_sum(true, false), "sm_80");
  EXPECT_NE(v.find("tt_cp_async16(&S[(t * 4)], &A[((b * 512) + (t * 4))]);"), std::string::npos)
      << v;
  const std::string p = source(tiled_sum(false, true), "sm_80");
  EXPECT_NE(p.find("const bool tt_inside = (t < 60);"), std::string::npos) << p;
  EXPECT_NE(p.find("tt_inside ? &A[((b * 512) + t)] : A, tt_inside);"), std::string::npos) << p;
}

TEST(CudaPipeline, NoSecondHalfWithoutRoomOrCpAsyncOrWhenUnsafeOrSwitchedOff) {
  // 7000 floats doubled are 56000 bytes, over a target capped at 40000 (on its own, sm_90 would
  // take them as dynamic shared memory).
  const std::string big = source(tiled_sum(false, false, 7000), "sm_90 -max-shared-memory=40000");
  EXPECT_NE(big.find("float S[7000];"), std::string::npos) << big;
  EXPECT_EQ(big.find("tt_cp_async"), std::string::npos) << big;
  // Fetching step k + 1 before computing step k would read what step k had not yet written.
  const std::string in_place = source(tiled_sum(false, false, 64, true), "sm_90");
  EXPECT_EQ(in_place.find("tt_cp_async"), std::string::npos) << in_place;
  const std::string turing = source(tiled_sum(false, false), "sm_75");
  EXPECT_EQ(turing.find("tt_cp_async"), std::string::npos) << turing;
  EXPECT_EQ(count(turing, "__syncthreads();"), 2u) << turing;
  setenv("TT_CUDA_PIPELINE", "0", 1);
  const std::string off = source(tiled_sum(false, false), "sm_90");
  unsetenv("TT_CUDA_PIPELINE");
  EXPECT_EQ(off.find("tt_cp_async"), std::string::npos) << off;
}

// A conv's padded input: a partial tile masks lanes, the padding nests selects (an inlined pad of
// an inlined pad) and the vectorizer masks the load: each unmasked lane is one copy under all
// three conditions.
TEST(CudaPipeline, MaskedLanesAndNestedPaddingAreCopiesUnderTheirConditions) {
  ir::Buffer a = buffer("A", kF32, 8 * 64);
  ir::Buffer c = buffer("C", kF32, 64);
  ir::Buffer s = buffer("S", kF32, 64, ir::MemoryScope::Shared);
  Var k("k"), t("t"), u("u");
  const Expr lanes = ramp(t * 4, 1, 4);
  const Expr zero = ir::Broadcast::make(Expr(0.0f), 4);
  const Expr value = ir::select(
      lanes < ir::Broadcast::make(Expr(60), 4),
      ir::select(lanes >= ir::Broadcast::make(Expr(2), 4),
                 load(a, ramp(k * 64 + t * 4, 1, 4), lanes < ir::Broadcast::make(Expr(61), 4)),
                 zero),
      zero);
  Stmt fetch = loop(t, 16, store(s, value, lanes, lanes < ir::Broadcast::make(Expr(62), 4)),
                    ForKind::ThreadX);
  Stmt use = loop(u, 64, store(c, load(c, u) + load(s, u), u), ForKind::ThreadX);
  Stmt body = loop(k, 8, ir::Allocate::make(s, ir::Seq::make({fetch, use})));
  const std::string src = source(make_func("f", {a, c}, 1, body), "sm_90");
  EXPECT_EQ(count(src, "tt_cp_async4(&S["), 8u) << src;  // 4 lanes, prologue and loop
  EXPECT_EQ(count(src, "const bool tt_inside = "), 8u) << src;
  EXPECT_NE(src.find("if ((((t * 4) + 3) < 62))"), std::string::npos) << src;
  EXPECT_NE(src.find("const bool tt_inside = (((((t * 4) + 1) < 60) && (((t * 4) + 1) >= 2)) && "
                     "(((t * 4) + 1) < 61));"),
            std::string::npos)
      << src;
  EXPECT_EQ(src.find("S[(t * 4)] ="), std::string::npos) << src;
}

// The compute reads one element of the tile into every lane (a broadcast index, as the
// vectorizer leaves a guarded load) from its half; two fetches of one tile are not pipelined.
TEST(CudaPipeline, BroadcastReadsMoveToTheirHalfAndTwoFetchesOfOneTileStayPlain) {
  ir::Buffer a = buffer("A", kF32, 8 * 64);
  ir::Buffer c = buffer("C", kF32, 64);
  ir::Buffer s = buffer("S", kF32, 64, ir::MemoryScope::Shared);
  Var k("k"), t("t"), u("u");
  Stmt fetch = loop(t, 64, store(s, load(a, k * 64 + t), t), ForKind::ThreadX);
  Stmt use = loop(u, 16, store(c, load(s, ir::Broadcast::make(Expr(63) - u, 4)), ramp(u * 4, 1, 4)),
                  ForKind::ThreadX);
  const auto kernel = [&](std::vector<Stmt> fetches) {
    fetches.push_back(use);
    return make_func("f", {a, c}, 1, loop(k, 8, ir::Allocate::make(s, ir::Seq::make(fetches))));
  };
  const std::string one = source(kernel({fetch}), "sm_90");
  EXPECT_NE(one.find("S[((((k % 2) * 64) - u) + 63)]"), std::string::npos) << one;
  const std::string two = source(kernel({fetch, fetch}), "sm_90");
  EXPECT_EQ(two.find("tt_cp_async"), std::string::npos) << two;
}

// Tiles of 6144 floats doubled take 49152 bytes, under a target's 49160; the shared slots a
// cross-thread sum in the same loop needs leave no room for them, so the kernel is printed again
// single-buffered.
TEST(CudaPipeline, ACrossThreadReductionsSlotsWinOverTheSecondHalf) {
  ir::Buffer a = buffer("A", kF32, 8 * 6144);
  ir::Buffer r = buffer("R", kF32, 1);
  ir::Buffer s = buffer("S", kF32, 6144, ir::MemoryScope::Shared);
  Var k("k"), t("t"), u("u");
  Stmt fetch = loop(t, 64, store(s, load(a, k * 6144 + t), t), ForKind::ThreadX);
  Stmt sum = loop(u, 64, store(r, load(r, Expr(0)) + load(s, u), Expr(0)), ForKind::ThreadX);
  Stmt body = loop(k, 8, ir::Allocate::make(s, ir::Seq::make({fetch, sum})));
  const CudaModule m =
      generate_cuda(make_func("f", {a, r}, 1, body),
                    target::Target::parse("cuda -arch=sm_90 -max-shared-memory=49160"));
  EXPECT_NE(m.source.find("float S[6144];"), std::string::npos) << m.source;
  EXPECT_EQ(m.source.find("tt_cp_async"), std::string::npos) << m.source;
  EXPECT_LE(m.kernels[0].shared_bytes, 49160);
  EXPECT_GT(m.kernels[0].shared_bytes, 6144 * 4);
}

// ptxas (inside NVRTC) accepts the copies and the wait: a cubin for sm_80 and sm_90.
TEST(CudaPipeline, NvrtcAssemblesTheCopiesForAmpereAndHopper) {
  std::string why;
  if (!nvrtc_available(&why)) {
    GTEST_SKIP() << "NVRTC is not available: " << why;
  }
  for (const char* arch : {"sm_80", "sm_90"}) {
    const target::Target target = target::Target::parse(std::string("cuda -arch=") + arch);
    for (bool vector : {false, true}) {
      const CudaModule m = generate_cuda(tiled_sum(vector, !vector), target);
      const NvrtcOutput out = compile_cuda(m.source, target, true);
      EXPECT_NE(out.ptx.find("cp.async.wait_all"), std::string::npos) << arch;
      EXPECT_FALSE(out.cubin.empty()) << arch;
      const NvrtcOutput three =
          compile_cuda(source_with_stages(tiled_sum(vector, !vector), "3", arch), target, true);
      EXPECT_NE(three.ptx.find("cp.async.wait_group 1"), std::string::npos) << three.ptx;
      EXPECT_NE(three.ptx.find("cp.async.commit_group"), std::string::npos) << three.ptx;
      EXPECT_FALSE(three.cubin.empty()) << arch;
      EXPECT_NE(out.ptx.find(vector ? "cp.async.cg.shared.global" : "cp.async.ca.shared.global"),
                std::string::npos)
          << arch << "\n"
          << out.ptx;
      EXPECT_FALSE(out.cubin.empty()) << arch;
    }
  }
}

}  // namespace
}  // namespace tensortune::codegen

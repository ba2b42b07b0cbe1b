// SPDX-License-Identifier: Apache-2.0
// Cross-thread reductions in the CUDA generator, from hand-made flattened IR: a loop bound to
// threadIdx.x updating one element becomes a private partial, a combine across the block's
// threads (shuffles within a warp, warps through shared slots, or a shared-memory tree) and one
// guarded update; the forms it cannot combine are UserErrors naming the loop. Where NVRTC loads,
// every generated variant compiles for sm_80 and sm_90.
#include "codegen_test_util.h"
#include "common/text.h"
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tensortune::codegen {
namespace {
using ir::Expr;
using ir::ForKind;
using ir::Stmt;
using ir::Var;
using test::count;
using testing::buffer;
using testing::gpu;
using testing::kF32;
using testing::load;
using testing::loop;
using testing::make_func;
using testing::store;

constexpr int kRows = 4;
constexpr int kColumns = 100;

/// Compiles `source` for sm_80 and sm_90 where NVRTC loads.
void expect_nvrtc_compiles(const CudaModule& m) {
  if (!nvrtc_available()) {
    return;
  }
  for (const char* arch : {"sm_80", "sm_90"}) {
    NvrtcOutput out =
        compile_cuda(m.source, target::Target::parse(std::string("cuda -arch=") + arch), false);
    for (const CudaKernel& k : m.kernels) {
      EXPECT_NE(out.ptx.find(".entry " + k.name), std::string::npos) << arch << "\n" << m.source;
    }
  }
}

/// B[b] = init, then B[b] = combine(B[b], A[b, o * width + t]) over t bound to threadIdx.x (of
/// `width` threads) and o serial, for `kRows` rows on blocks; `rows_per_block` > 1 puts rows on
/// threadIdx.y too.
struct RowReduction {
  ir::Buffer a = buffer("A", kF32, int64_t{kRows} * kColumns);
  ir::Buffer b = buffer("B", kF32, kRows);
  ir::Buffer c = buffer("C", kF32, 64);
  Var block{"b"}, row{"r"}, t{"t"}, o{"o"};

  Stmt nest(int width,
            ir::ReduceKind kind = ir::ReduceKind::Sum,
            int rows_per_block = 1,
            int block_width = 0) const {
    Expr r = rows_per_block > 1 ? Expr(block) * rows_per_block + row : Expr(block);
    Expr k = Expr(o) * width + t;
    Stmt update = store(b, ir::reduce_combine(kind, load(b, r), load(a, r * kColumns + k)), r);
    Stmt reduce =
        loop(t, width,
             loop(o, (kColumns + width - 1) / width, ir::IfThenElse::make(k < kColumns, update)),
             ForKind::ThreadX);
    Stmt row_body = ir::Seq::make({store(b, ir::reduce_identity(kind, kF32), r), reduce});
    if (block_width > width) {  // another nest of the kernel binds more threads along x
      Var u("u");
      row_body = ir::Seq::make(
          {row_body, loop(u, block_width, store(c, load(a, u), u), ForKind::ThreadX)});
    }
    if (rows_per_block > 1) {
      row_body = loop(row, rows_per_block, row_body, ForKind::ThreadY);
    }
    return loop(block, kRows / rows_per_block, row_body, ForKind::BlockX);
  }

  CudaModule generate(const Stmt& body) const {
    return generate_cuda(make_func("f", {a, b, c}, 1, body), gpu());
  }
};

TEST(CudaAllReduce, OneWarpShufflesDownToThreadZeroWithoutBarriers) {
  RowReduction rr;
  CudaModule m = rr.generate(rr.nest(32));
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].block[0], 32);
  EXPECT_EQ(m.kernels[0].shared_bytes, 0);
  const std::string& s = m.source;
  EXPECT_NE(s.find("float B_rf[1];\n"), std::string::npos) << s;
  EXPECT_NE(s.find("B_rf[0] = 0.0f;\n"), std::string::npos) << s;
  EXPECT_NE(s.find("B_rf[0] = (B_rf[0] + A[((b * 100) + ((o * 32) + t))]);"), std::string::npos)
      << s;
  for (const char* offset : {"16", "8", "4", "2", "1"}) {
    EXPECT_NE(s.find("B_rf[0] = (B_rf[0] + __shfl_down_sync(0xffffffffu, B_rf[0], " +
                     std::string(offset) + ", 32));"),
              std::string::npos)
        << offset << "\n"
        << s;
  }
  EXPECT_EQ(s.find("__shfl_sync("), std::string::npos) << "only thread 0 needs the total\n" << s;
  EXPECT_EQ(s.find("__syncthreads"), std::string::npos) << s;
  // Thread 0 initialises the element and, after the combine, adds the total once.
  EXPECT_EQ(count(s, "if (threadIdx.x == 0) {"), 2u) << s;
  EXPECT_NE(s.find("B[b] = (B[b] + B_rf[0]);"), std::string::npos) << s;
  expect_nvrtc_compiles(m);
}

TEST(CudaAllReduce, SeveralWarpsMeetInSharedSlots) {
  RowReduction rr;
  CudaModule m = rr.generate(rr.nest(128));
  const std::string& s = m.source;
  EXPECT_NE(s.find("__shared__ float tt_red0[4];"), std::string::npos) << s;
  EXPECT_EQ(m.kernels[0].shared_bytes, 16);
  EXPECT_NE(s.find("__shfl_down_sync(0xffffffffu, B_rf[0], 16, 32)"), std::string::npos) << s;
  EXPECT_NE(s.find("tt_red0[threadIdx.x / 32u] = B_rf[0];"), std::string::npos) << s;
  EXPECT_NE(s.find("for (unsigned tt_w = 1u; tt_w < 4u; ++tt_w)"), std::string::npos) << s;
  // One barrier before the slots are read, one before they may be written again.
  EXPECT_EQ(count(s, "__syncthreads();"), 2u) << s;
  expect_nvrtc_compiles(m);
}

TEST(CudaAllReduce, WidthsThatAreNoPowerOfTwoUseASharedTree) {
  RowReduction rr;
  CudaModule m = rr.generate(rr.nest(48, ir::ReduceKind::Sum, 2));
  const std::string& s = m.source;
  EXPECT_EQ(m.kernels[0].block[0], 48);
  EXPECT_EQ(m.kernels[0].block[1], 2);
  EXPECT_NE(s.find("__shared__ float tt_red0[96];"), std::string::npos) << s;
  EXPECT_NE(s.find("tt_red0[threadIdx.y * 48u + threadIdx.x] = B_rf[0];"), std::string::npos) << s;
  EXPECT_NE(s.find("for (unsigned tt_s = 32u; tt_s > 0u; tt_s >>= 1)"), std::string::npos) << s;
  EXPECT_NE(s.find("if (threadIdx.x < tt_s && threadIdx.x + tt_s < 48u)"), std::string::npos) << s;
  EXPECT_EQ(s.find("__shfl"), std::string::npos) << s;
  expect_nvrtc_compiles(m);
}

// Rows of 8 threads, 2 rows per block: 16 threads, half a warp, shuffled in segments of 8.
TEST(CudaAllReduce, RowsShareAPartialWarp) {
  RowReduction rr;
  CudaModule m = rr.generate(rr.nest(8, ir::ReduceKind::Sum, 2));
  EXPECT_NE(m.source.find("__shfl_down_sync(0xffffu, B_rf[0], 4, 8)"), std::string::npos)
      << m.source;
  expect_nvrtc_compiles(m);
}

// A thread-private local buffer: every thread stores the total into its own copy, so the first
// lane of each segment broadcasts it.
TEST(CudaAllReduce, EveryThreadGetsTheTotalOfALocalBuffer) {
  RowReduction rr;
  ir::Buffer p = buffer("P", kF32, 1, ir::MemoryScope::Local);
  Var u("u");
  Stmt reduce = loop(rr.t, 8, store(p, load(p, 0) + load(rr.a, Expr(rr.block) * 8 + rr.t), 0),
                     ForKind::ThreadX);
  Stmt use = loop(u, 8, store(rr.c, load(p, 0), Expr(rr.block) * 8 + u), ForKind::ThreadX);
  Stmt body = loop(rr.block, 4,
                   ir::Allocate::make(p, ir::Seq::make({store(p, Expr(0.0f), 0), reduce, use})),
                   ForKind::BlockX);
  CudaModule m = generate_cuda(make_func("f", {rr.a, rr.c}, 1, body), gpu());
  EXPECT_NE(m.source.find("P_rf[0] = __shfl_sync(0xffu, P_rf[0], 0, 8);"), std::string::npos)
      << m.source;
  EXPECT_NE(m.source.find("    P[0] = (P[0] + P_rf[0]);\n"), std::string::npos)
      << "every thread updates its copy\n"
      << m.source;
  expect_nvrtc_compiles(m);
}

TEST(CudaAllReduce, MaxAndMinCombineWithTheNaNPropagatingHelpers) {
  RowReduction rr;
  CudaModule m = rr.generate(rr.nest(32, ir::ReduceKind::Maximum));
  EXPECT_NE(m.source.find("B_rf[0] = __int_as_float(0xff800000);"), std::string::npos) << m.source;
  EXPECT_NE(m.source.find("B_rf[0] = tt_max<float>(B_rf[0], __shfl_down_sync("), std::string::npos)
      << m.source;
  EXPECT_NE(m.source.find("B[b] = tt_max<float>(B[b], B_rf[0]);"), std::string::npos) << m.source;
  expect_nvrtc_compiles(m);
  CudaModule lo = rr.generate(rr.nest(64, ir::ReduceKind::Minimum));
  EXPECT_NE(lo.source.find("tt_min<float>(B_rf[0], tt_red0[tt_w])"), std::string::npos)
      << lo.source;
  expect_nvrtc_compiles(lo);
}

// The reduction binds 32 threads of a 64-thread block: the others keep the identity but join
// the combine, which spans the block's whole width.
TEST(CudaAllReduce, ThreadsBeyondTheLoopContributeTheIdentity) {
  RowReduction rr;
  CudaModule m = rr.generate(rr.nest(32, ir::ReduceKind::Sum, 1, 64));
  EXPECT_EQ(m.kernels[0].block[0], 64);
  EXPECT_NE(m.source.find("if (threadIdx.x < 32) {\n"), std::string::npos) << m.source;
  EXPECT_NE(m.source.find("__shared__ float tt_red0[2];"), std::string::npos) << m.source;
  expect_nvrtc_compiles(m);
}

std::string codegen_error(const ir::LoweredFunc& f) {
  try {
    generate_cuda(f, gpu());
  } catch (const InternalError& e) {
    return std::string("internal error: ") + e.what();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(CudaAllReduce, RefusesAReductionNotEveryThreadReaches) {
  RowReduction rr;
  Var y("y");
  Stmt reduce =
      loop(rr.t, 32, store(rr.b, load(rr.b, y) + load(rr.a, y * 100 + rr.t), y), ForKind::ThreadX);
  Stmt body = loop(y, 4, ir::IfThenElse::make(Expr(y) < 3, reduce), ForKind::ThreadY);
  std::string message = codegen_error(make_func("f", {rr.a, rr.b}, 1, body));
  EXPECT_NE(message.find("cuda codegen: cross-thread reduction over loop 't' of kernel "
                         "'f_kernel0': the loop is inside the condition '(y < 3)'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("not every thread of the block reaches"), std::string::npos) << message;
}

TEST(CudaAllReduce, RefusesWhatIsNotOneUpdateOfOneElement) {
  RowReduction rr;
  ir::Buffer c = buffer("C", kF32, 32);
  Var t("t");
  auto error_of = [&](Stmt body) {
    return codegen_error(make_func("f", {rr.a, rr.b, c}, 1, loop(t, 32, body, ForKind::ThreadX)));
  };
  // A plain store: the threads would race.
  EXPECT_NE(error_of(store(rr.b, load(rr.a, t), 0))
                .find("stores to 'B' something other than one kind of update"),
            std::string::npos);
  // Two elements.
  std::string two = error_of(ir::Seq::make({store(rr.b, load(rr.b, 0) + load(rr.a, t), 0),
                                            store(rr.b, load(rr.b, 1) + load(rr.a, t), 1)}));
  EXPECT_NE(two.find("at more than one index"), std::string::npos) << two;
  // An update beside a per-thread store.
  std::string mixed = error_of(
      ir::Seq::make({store(rr.b, load(rr.b, 0) + load(rr.a, t), 0), store(c, load(rr.a, t), t)}));
  EXPECT_NE(mixed.find("reduces into 'B' across threads but also stores to 'C'"), std::string::npos)
      << mixed;
  // An element that changes inside the loop.
  Var i("i");
  std::string moving = error_of(loop(i, 4, store(rr.b, load(rr.b, i) + load(rr.a, t), i)));
  EXPECT_NE(moving.find("at an index that changes inside it"), std::string::npos) << moving;
  // A read of the element beside its update (it would see one thread's partial).
  ir::Buffer p = buffer("P", kF32, 1, ir::MemoryScope::Local);
  std::string reads = error_of(ir::Allocate::make(
      p, ir::Seq::make({store(p, load(rr.b, 0), 0), store(rr.b, load(rr.b, 0) + load(p, 0), 0)})));
  EXPECT_NE(reads.find("reads 'B' other than in its updates"), std::string::npos) << reads;
}

TEST(CudaAllReduce, RefusesAReductionAlongThreadIdxY) {
  RowReduction rr;
  Var t("t");
  std::string message = codegen_error(
      make_func("f", {rr.a, rr.b}, 1,
                loop(t, 8, store(rr.b, load(rr.b, 0) + load(rr.a, t), 0), ForKind::ThreadY)));
  EXPECT_NE(message.find("only a loop bound to threadIdx.x can reduce across threads"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace tensortune::codegen

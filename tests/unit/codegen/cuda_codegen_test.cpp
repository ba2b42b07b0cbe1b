// SPDX-License-Identifier: Apache-2.0
// CUDA C generation from hand-made flattened IR: kernels and their launch shapes, parameters,
// scratch buffers, shared memory, barriers, guards, and the constructs it rejects.
#include "tensortune/codegen/cuda_codegen.h"

#include "codegen_test_util.h"
#include "common/text.h"

#include <gtest/gtest.h>

#include <array>
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

TEST(CudaCodegen, GridAndBlockComeFromTheBoundLoops) {
  ir::Buffer a = buffer("A", kF32, 256);
  ir::Buffer c = buffer("C", kF32, 256);
  Var bx("bx"), by("by"), tx("tx");
  Expr index = (by * 4 + bx) * 32 + tx;
  Stmt body = store(c, load(a, index) + Expr(1.0f), index);
  Stmt nest = loop(by, 2, loop(bx, 4, loop(tx, 32, body, ForKind::ThreadX), ForKind::BlockX),
                   ForKind::BlockY);
  CudaModule m = generate_cuda(make_func("f", {a, c}, 1, nest), gpu());
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].name, "f_kernel0");
  EXPECT_EQ(m.kernels[0].grid, (std::array<int64_t, 3>{{4, 2, 1}}));
  EXPECT_EQ(m.kernels[0].block, (std::array<int64_t, 3>{{32, 1, 1}}));
  EXPECT_EQ(m.kernels[0].shared_bytes, 0);
  EXPECT_NE(m.source.find("extern \"C\" __global__ void __launch_bounds__(32) f_kernel0("
                          "float* __restrict__ A, float* __restrict__ C)"),
            std::string::npos)
      << m.source;
  EXPECT_NE(m.source.find("const int by = blockIdx.y;"), std::string::npos) << m.source;
  EXPECT_NE(m.source.find("const int bx = blockIdx.x;"), std::string::npos) << m.source;
  EXPECT_NE(m.source.find("const int tx = threadIdx.x;"), std::string::npos) << m.source;
  EXPECT_EQ(m.source.find("for ("), std::string::npos) << "bound loops are not loops in CUDA";
}

TEST(CudaCodegen, ANestWithoutBindingsIsOneThreadRunningTheLoops) {
  ir::Buffer a = buffer("A", kF32, 8);
  ir::Buffer c = buffer("C", kF32, 8);
  Var i("i");
  CudaModule m =
      generate_cuda(make_func("f", {a, c}, 1, loop(i, 8, store(c, load(a, i), i))), gpu());
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].grid, (std::array<int64_t, 3>{{1, 1, 1}}));
  EXPECT_EQ(m.kernels[0].block, (std::array<int64_t, 3>{{1, 1, 1}}));
  EXPECT_NE(m.source.find("__launch_bounds__(1)"), std::string::npos);
  EXPECT_NE(m.source.find("for (int i = 0; i < 8; ++i) {"), std::string::npos) << m.source;
  EXPECT_NE(m.source.find("C[i] = A[i];"), std::string::npos) << m.source;
}

TEST(CudaCodegen, ParamsAreOnlyTheBuffersAKernelUsesAndScratchComesLast) {
  ir::Buffer a = buffer("A", kF32, 16);
  ir::Buffer b = buffer("B", kF32, 16);
  ir::Buffer c = buffer("C", kF32, 16);
  ir::Buffer t = buffer("T", kF32, 16);
  Var i("i"), j("j");
  Stmt body = ir::Allocate::make(
      t, ir::Seq::make({loop(i, 16, store(t, load(a, i) * Expr(2.0f), i), ForKind::ThreadX),
                        loop(j, 16, store(c, load(t, j) + load(b, j), j), ForKind::ThreadX)}));
  CudaModule m = generate_cuda(make_func("f", {a, b, c}, 2, body), gpu());
  ASSERT_EQ(m.buffers.size(), 4u);
  EXPECT_EQ(m.num_params, 3);
  EXPECT_TRUE(m.buffers[3].same_as(t));
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.kernels[0].params, (std::vector<int>{0, 3}));
  EXPECT_EQ(m.kernels[1].params, (std::vector<int>{1, 2, 3}));
  EXPECT_NE(m.source.find("f_kernel0(float* __restrict__ A, float* __restrict__ T)"),
            std::string::npos)
      << m.source;
  EXPECT_NE(m.source.find("f_kernel1(float* __restrict__ B, float* __restrict__ C, "
                          "float* __restrict__ T)"),
            std::string::npos)
      << m.source;
  std::string summary = launch_summary(m);
  EXPECT_NE(summary.find("// kernel f_kernel1: grid (1, 1, 1), block (16, 1, 1), shared 0 "
                         "bytes, params (B, C, T)"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("// scratch buffer T: float32[16], allocated by the host"),
            std::string::npos)
      << summary;
}

// The cooperative fetch: inside the serial k loop, threads fill a shared tile, then each reads
// elements another thread wrote: a barrier before the reads and one before the next fetch.
TEST(CudaCodegen, SharedTileGetsBarriersBeforeItsReadsAndBeforeTheNextFetch) {
  ir::Buffer a = buffer("A", kF32, 128);
  ir::Buffer c = buffer("C", kF32, 32);
  ir::Buffer s = buffer("S", kF32, 32, ir::MemoryScope::Shared);
  Var ko("ko"), t1("t1"), t2("t2");
  Stmt fetch = loop(t1, 32, store(s, load(a, ko * 32 + t1), t1), ForKind::ThreadX);
  Stmt compute = loop(t2, 32, store(c, load(c, t2) + load(s, Expr(31) - t2), t2), ForKind::ThreadX);
  Stmt init = loop(t2, 32, store(c, Expr(0.0f), t2), ForKind::ThreadX);
  Var b("b");  // one kernel: the sequence sits inside a block loop
  Stmt body = loop(
      b, 2,
      ir::Seq::make({init, ir::Allocate::make(s, loop(ko, 4, ir::Seq::make({fetch, compute})))}),
      ForKind::BlockX);
  CudaModule m = generate_cuda(make_func("f", {a, c}, 1, body), gpu());
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].shared_bytes, 128);
  EXPECT_NE(m.source.find("  __shared__ __align__(16) float S[32];\n"), std::string::npos)
      << m.source;
  EXPECT_EQ(count(m.source, "__syncthreads();"), 2u) << m.source;
  size_t loop_at = m.source.find("for (int ko");
  size_t first = m.source.find("__syncthreads();");
  size_t write = m.source.find("S[t1] =");
  size_t second = m.source.find("__syncthreads();", first + 1);
  size_t read = m.source.find("S[(31 - t2)]");
  ASSERT_NE(read, std::string::npos) << m.source;
  EXPECT_LT(loop_at, first) << m.source;
  EXPECT_LT(first, write) << m.source;
  EXPECT_LT(write, second) << m.source;
  EXPECT_LT(second, read) << m.source;
}

// A fetch nest not bound to threads is run by thread 0 alone and fenced as one unit.
TEST(CudaCodegen, SerialFetchIsWrittenByThreadZeroBetweenTwoBarriers) {
  ir::Buffer a = buffer("A", kF32, 128);
  ir::Buffer c = buffer("C", kF32, 32);
  ir::Buffer s = buffer("S", kF32, 32, ir::MemoryScope::Shared);
  Var b("b"), ko("ko"), f("f"), t("t");
  Stmt fetch = loop(f, 32, store(s, load(a, ko * 32 + f), f));
  Stmt compute = loop(t, 32, store(c, load(c, t) + load(s, Expr(31) - t), t), ForKind::ThreadX);
  Stmt body = loop(b, 1, ir::Allocate::make(s, loop(ko, 4, ir::Seq::make({fetch, compute}))),
                   ForKind::BlockX);
  CudaModule m = generate_cuda(make_func("f", {a, c}, 1, body), gpu());
  EXPECT_EQ(count(m.source, "__syncthreads();"), 2u) << m.source;
  EXPECT_NE(m.source.find("__syncthreads();\n    for (int f = 0; f < 32; ++f) {\n"
                          "      if (threadIdx.x == 0) {\n        S[f] = "),
            std::string::npos)
      << m.source;
}

TEST(CudaCodegen, NoBarrierWhenEachThreadReadsOnlyInsideItsOwnNest) {
  ir::Buffer a = buffer("A", kF32, 32);
  ir::Buffer c = buffer("C", kF32, 32);
  ir::Buffer s = buffer("S", kF32, 32, ir::MemoryScope::Shared);
  Var t("t");
  Stmt body = ir::Allocate::make(
      s, loop(t, 32, ir::Seq::make({store(s, load(a, t), t), store(c, load(s, t), t)}),
              ForKind::ThreadX));
  CudaModule m = generate_cuda(make_func("f", {a, c}, 1, body), gpu());
  EXPECT_EQ(count(m.source, "__syncthreads"), 0u) << m.source;
  EXPECT_EQ(m.kernels[0].shared_bytes, 128);
}

TEST(CudaCodegen, LocalAllocateIsAPerThreadArray) {
  ir::Buffer a = buffer("A", kF32, 64);
  ir::Buffer c = buffer("C", kF32, 16);
  ir::Buffer acc = buffer("acc.local", kF32, 1, ir::MemoryScope::Local);
  Var t("t"), k("k");
  Stmt body =
      loop(t, 16,
           ir::Allocate::make(
               acc, ir::Seq::make({store(acc, Expr(0.0f), 0),
                                   loop(k, 4, store(acc, load(acc, 0) + load(a, t * 4 + k), 0)),
                                   store(c, load(acc, 0), t)})),
           ForKind::ThreadX);
  CudaModule m = generate_cuda(make_func("f", {a, c}, 1, body), gpu());
  EXPECT_NE(m.source.find("float acc_local[1];"), std::string::npos) << m.source;
  EXPECT_NE(m.source.find("acc_local[0] = (acc_local[0] + A[((t * 4) + k)]);"), std::string::npos)
      << m.source;
  EXPECT_EQ(m.kernels[0].params, (std::vector<int>{0, 1}));
}

/// A block-level accumulator tile L[16] used through threadIdx.x loops; `reversed` reads it at
/// 15 - t (another thread's element), which must keep the whole tile.
ir::LoweredFunc accumulator_kernel(bool reversed) {
  ir::Buffer a = buffer("A", kF32, 64);
  ir::Buffer c = buffer("C", kF32, 32);
  ir::Buffer l = buffer("L", kF32, 16, ir::MemoryScope::Local);
  Var b("b"), t1("t1"), t2("t2"), t3("t3"), k("k");
  Stmt init = loop(t1, 16, store(l, Expr(0.0f), t1), ForKind::ThreadX);
  Stmt update =
      loop(k, 4, loop(t2, 16, store(l, load(l, t2) + load(a, k * 16 + t2), t2), ForKind::ThreadX));
  Expr read = reversed ? Expr(15) - t3 : Expr(t3);
  Stmt copy = loop(t3, 16, store(c, load(l, read), b * 16 + t3), ForKind::ThreadX);
  Stmt body =
      loop(b, 2, ir::Allocate::make(l, ir::Seq::make({init, update, copy})), ForKind::BlockX);
  return make_func("f", {a, c}, 1, body);
}

TEST(CudaCodegen, LocalTileOutsideTheThreadLoopsShrinksToEachThreadsSlice) {
  CudaModule m = generate_cuda(accumulator_kernel(false), gpu());
  EXPECT_NE(m.source.find("float L[1];"), std::string::npos) << m.source;
  EXPECT_NE(m.source.find("L[0] = (L[0] + A[((k * 16) + t2)]);"), std::string::npos) << m.source;
  EXPECT_NE(m.source.find("C[((b * 16) + t3)] = L[0];"), std::string::npos) << m.source;

  CudaModule whole = generate_cuda(accumulator_kernel(true), gpu());
  EXPECT_NE(whole.source.find("float L[16];"), std::string::npos) << whole.source;
  EXPECT_NE(whole.source.find("= L[(15 - t3)];"), std::string::npos) << whole.source;
}

TEST(CudaCodegen, LoopNarrowerThanTheLaunchIsGuarded) {
  ir::Buffer c = buffer("C", kF32, 32);
  Var b("b"), t1("t1"), t2("t2");
  Stmt body = loop(b, 1,
                   ir::Seq::make({loop(t1, 32, store(c, Expr(1.0f), t1), ForKind::ThreadX),
                                  loop(t2, 16, store(c, Expr(2.0f), t2), ForKind::ThreadX)}),
                   ForKind::BlockX);
  CudaModule m = generate_cuda(make_func("f", {c}, 0, body), gpu());
  EXPECT_EQ(m.kernels[0].block[0], 32);
  EXPECT_NE(m.source.find("if (threadIdx.x < 16) {"), std::string::npos) << m.source;
  EXPECT_EQ(m.source.find("threadIdx.x < 32"), std::string::npos) << m.source;
}

TEST(CudaCodegen, StoreOutsideTheThreadLoopsIsWrittenByThreadZeroOnly) {
  ir::Buffer c = buffer("C", kF32, 33);
  Var b("b"), t("t");
  Stmt body = loop(b, 1,
                   ir::Seq::make({loop(t, 32, store(c, Expr(1.0f), t), ForKind::ThreadX),
                                  store(c, load(c, 32) + Expr(1.0f), 32)}),
                   ForKind::BlockX);
  CudaModule m = generate_cuda(make_func("f", {c}, 0, body), gpu());
  EXPECT_NE(m.source.find("if (threadIdx.x == 0) {\n    C[32] = (C[32] + 1.0f);"),
            std::string::npos)
      << m.source;
}

TEST(CudaCodegen, LoopMinIsAddedToTheIndex) {
  ir::Buffer c = buffer("C", kF32, 64);
  Var b("b");
  Stmt body = ir::For::make(b, 4, 8, ForKind::BlockX, store(c, Expr(1.0f), b));
  CudaModule m = generate_cuda(make_func("f", {c}, 0, body), gpu());
  EXPECT_EQ(m.kernels[0].grid[0], 8);
  EXPECT_NE(m.source.find("const int b = (blockIdx.x + 4);"), std::string::npos) << m.source;
}

TEST(CudaCodegen, UnrolledLoopsCarryAPragma) {
  ir::Buffer c = buffer("C", kF32, 4);
  Var i("i");
  CudaModule m = generate_cuda(
      make_func("f", {c}, 0, loop(i, 4, store(c, Expr(0.0f), i), ForKind::Unrolled)), gpu());
  EXPECT_NE(m.source.find("#pragma unroll\n  for (int i = 0; i < 4; ++i) {"), std::string::npos)
      << m.source;
}

TEST(CudaCodegen, NamesAreSanitisedAndUnique) {
  ir::Buffer a = buffer("A.shared@x", kF32, 4);
  ir::Buffer c = buffer("int", kF32, 4);
  Var i1("i.o"), i2("i_o"), i3("2d");
  Stmt body =
      loop(i1, 2, loop(i2, 2, loop(i3, 1, store(c, load(a, i1 * 2 + i2 + i3), i1 * 2 + i2))));
  CudaModule m = generate_cuda(make_func("my-func", {a, c}, 1, body), gpu());
  EXPECT_EQ(m.kernels[0].name, "my_func_kernel0");
  EXPECT_NE(m.source.find("float* __restrict__ A_shared_x, float* __restrict__ int_"),
            std::string::npos)
      << m.source;
  EXPECT_NE(m.source.find("for (int i_o = 0;"), std::string::npos) << m.source;
  EXPECT_NE(m.source.find("for (int i_o_1 = 0;"), std::string::npos) << m.source;
  EXPECT_NE(m.source.find("for (int v2d = 0;"), std::string::npos) << m.source;
}

TEST(CudaCodegen, GenerationIsDeterministic) {
  ir::Buffer a = buffer("A", kF32, 32);
  ir::Buffer c = buffer("C", kF32, 32);
  Var t("t");
  ir::LoweredFunc f = make_func(
      "f", {a, c}, 1, loop(t, 32, store(c, ir::max(load(a, t), Expr(0.0f)), t), ForKind::ThreadX));
  EXPECT_EQ(generate_cuda(f, gpu()).source, generate_cuda(f, gpu()).source);
}

TEST(CudaCodegenErrors, CpuTargetIsRejected) {
  ir::Buffer c = buffer("C", kF32, 4);
  Var i("i");
  ir::LoweredFunc f = make_func("f", {c}, 0, loop(i, 4, store(c, Expr(0.0f), i)));
  EXPECT_THROW(generate_cuda(f, target::Target::parse("llvm -mcpu=znver4")), UserError);
}

TEST(CudaCodegenErrors, ParallelLoopIsRejected) {
  ir::Buffer c = buffer("C", kF32, 4);
  Var i("i");
  ir::LoweredFunc f =
      make_func("f", {c}, 0, loop(i, 4, store(c, Expr(0.0f), i), ForKind::Parallel));
  try {
    generate_cuda(f, gpu());
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("parallel"), std::string::npos) << e.what();
  }
}

TEST(CudaCodegenErrors, GlobalAllocateInsideAKernelIsRejected) {
  ir::Buffer c = buffer("C", kF32, 4);
  ir::Buffer t = buffer("T", kF32, 4);
  Var i("i");
  Stmt body = loop(i, 4, ir::Allocate::make(t, store(c, Expr(0.0f), i)), ForKind::ThreadX);
  try {
    generate_cuda(make_func("f", {c}, 0, body), gpu());
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("buffer 'T' is allocated in global memory"),
              std::string::npos)
        << e.what();
  }
}

TEST(CudaCodegenErrors, SharedAllocateInsideAThreadLoopIsRejected) {
  ir::Buffer c = buffer("C", kF32, 4);
  ir::Buffer s = buffer("S", kF32, 4, ir::MemoryScope::Shared);
  Var i("i");
  Stmt body = loop(i, 4, ir::Allocate::make(s, store(c, Expr(0.0f), i)), ForKind::ThreadX);
  EXPECT_THROW(generate_cuda(make_func("f", {c}, 0, body), gpu()), UserError);
}

TEST(CudaCodegenErrors, Float16IsNotSupportedYet) {
  ir::Buffer c = buffer("C", ir::DataType::float16(), 4);
  Var i("i");
  ir::LoweredFunc f =
      make_func("f", {c}, 0, loop(i, 4, store(c, ir::make_const(ir::DataType::float16(), 0.0), i)));
  EXPECT_THROW(generate_cuda(f, gpu()), UserError);
}

}  // namespace
}  // namespace tensortune::codegen

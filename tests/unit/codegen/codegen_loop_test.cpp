// SPDX-License-Identifier: Apache-2.0
// Codegen of loops: a scalar matmul nest, parallel loops (captures, nesting, non-zero mins),
// unroll/vectorize hints, if-then-else, and the GPU-binding error on CPU targets.
#include "codegen_test_util.h"
#include "tensortune/runtime/parallel.h"

#include <gtest/gtest.h>

namespace tensortune::codegen {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)
using ir::DataType;
using ir::Expr;

/// C[i, j] = sum_k A[i, k] * B[k, j], flattened, with the given kind on the i loop.
ir::LoweredFunc matmul(int m, int n, int kk, ir::ForKind outer) {
  ir::Buffer a = buffer("A", DataType::float32(), m * kk);
  ir::Buffer b = buffer("B", DataType::float32(), kk * n);
  ir::Buffer c = buffer("C", DataType::float32(), m * n);
  ir::Var i("i");
  ir::Var j("j");
  ir::Var k("k");
  Expr cij = i * n + j;
  ir::Stmt update = store(c, load(c, cij) + load(a, i * kk + k) * load(b, k * n + j), cij);
  ir::Stmt body = ir::Seq::make({store(c, Expr(0.0f), cij), loop(k, kk, update)});
  return make_func("matmul", {a, b, c}, 2, loop(i, m, loop(j, n, body), outer));
}

void check_matmul(ir::ForKind outer) {
  const int m = 17;
  const int n = 19;
  const int kk = 23;
  Artifact f = build_cpu(matmul(m, n, kk, outer), host());
  std::vector<float> a = random_floats(m * kk, 41);
  std::vector<float> b = random_floats(kk * n, 42);
  std::vector<float> c(m * n, -1.0f);
  ASSERT_EQ(call(f, {a.data(), b.data(), c.data()}), 0);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int k = 0; k < kk; ++k) {
        want += static_cast<double>(a[i * kk + k]) * b[k * n + j];
      }
      EXPECT_TRUE(close(c[i * n + j], want, 1e-5, 1e-5)) << i << "," << j;
    }
  }
}

TEST(CodegenLoop, ScalarMatmulLoopNest) {
  check_matmul(ir::ForKind::Serial);
}

TEST(CodegenLoop, ParallelMatmulLoopNest) {
  int32_t saved = tt_get_num_threads();
  tt_set_num_threads(3);
  check_matmul(ir::ForKind::Parallel);
  tt_set_num_threads(saved);
}

TEST(CodegenLoop, ParallelBodyCapturesOuterLoopAndLetVariables) {
  // for r in 0..3: let s = r * 100 in parallel for i in 2..(2+50): out[r*50 + i-2] = i + s + r
  ir::Buffer out = buffer("out", DataType::int32(), 150);
  ir::Var r("r");
  ir::Var s("s");
  ir::Var i("i");
  ir::Stmt inner =
      ir::For::make(i, 2, 50, ir::ForKind::Parallel, store(out, i + s + r, r * 50 + i - 2));
  ir::Stmt body = loop(r, 3, ir::LetStmt::make(s, r * 100, inner));
  ir::LoweredFunc f = make_func("captures", {out}, 0, body);
  std::string text = emit_llvm_ir(f, host(), false);
  EXPECT_NE(text.find("define internal i32 @captures_parallel_0(i32"), std::string::npos) << text;
  EXPECT_NE(text.find("call i32 @tt_parallel_for("), std::string::npos);
  Artifact k = build_cpu(f, host());
  std::vector<int32_t> v(150, -1);
  ASSERT_EQ(call(k, {v.data()}), 0);
  for (int rr = 0; rr < 3; ++rr) {
    for (int ii = 2; ii < 52; ++ii) {
      EXPECT_EQ(v[rr * 50 + ii - 2], ii + rr * 100 + rr) << rr << "," << ii;
    }
  }
}

TEST(CodegenLoop, NestedParallelLoopsAndScratchInsideTheBody) {
  // parallel i: allocate row[8]; parallel j: row[j] = i*j; serial j2: out[i*8+j2] = row[j2] + 1
  ir::Buffer out = buffer("out", DataType::int32(), 40);
  ir::Buffer row = buffer("row", DataType::int32(), 8, ir::MemoryScope::Local);
  ir::Var i("i");
  ir::Var j("j");
  ir::Var j2("j2");
  ir::Stmt fill = loop(j, 8, store(row, i * j, j), ir::ForKind::Parallel);
  ir::Stmt copy = loop(j2, 8, store(out, load(row, j2) + 1, i * 8 + j2));
  ir::Stmt body =
      loop(i, 5, ir::Allocate::make(row, ir::Seq::make({fill, copy})), ir::ForKind::Parallel);
  Artifact k = build_cpu(make_func("nested", {out}, 0, body), host());
  std::vector<int32_t> v(40, -1);
  ASSERT_EQ(call(k, {v.data()}), 0);
  for (int ii = 0; ii < 5; ++ii) {
    for (int jj = 0; jj < 8; ++jj) {
      EXPECT_EQ(v[ii * 8 + jj], ii * jj + 1) << ii << "," << jj;
    }
  }
}

TEST(CodegenLoop, VectorizedLoopsCarryAHintAndUnrolledLoopsStayPlain) {
  ir::Buffer a = buffer("a", DataType::float32(), 64);
  ir::Var i("i");
  ir::Var j("j");
  ir::Stmt unrolled = loop(i, 4, store(a, load(a, i) + 1.0f, i), ir::ForKind::Unrolled);
  ir::Stmt vectorized =
      loop(j, 60, store(a, load(a, j + 4) * 2.0f, j + 4), ir::ForKind::Vectorized);
  ir::LoweredFunc f = make_func("hints", {a}, 0, ir::Seq::make({unrolled, vectorized}));
  std::string text = emit_llvm_ir(f, host(), false);
  // The unroll pass owns unrolling; a loop it left alone must not be force-unrolled by LLVM.
  EXPECT_EQ(text.find("llvm.loop.unroll"), std::string::npos) << text;
  EXPECT_NE(text.find("!\"llvm.loop.vectorize.enable\", i1 true"), std::string::npos) << text;
  Artifact k = build_cpu(f, host());
  std::vector<float> v = random_floats(64, 51);
  std::vector<float> want = v;
  for (int x = 0; x < 4; ++x) {
    want[x] += 1.0f;
  }
  for (int x = 4; x < 64; ++x) {
    want[x] *= 2.0f;
  }
  ASSERT_EQ(call(k, {v.data()}), 0);
  EXPECT_EQ(v, want);
}

TEST(CodegenLoop, IfThenElseAndLoopsWithNonZeroMin) {
  ir::Buffer out = buffer("out", DataType::int32(), 20);
  ir::Var i("i");
  ir::Stmt branch = ir::IfThenElse::make(i % 2 == 0, store(out, i * 10, i), store(out, -i, i));
  ir::Stmt body = ir::Seq::make({ir::For::make(i, 5, 15, ir::ForKind::Serial, branch),
                                 ir::IfThenElse::make(Expr(1) < 0, store(out, 99, 0))});
  Artifact k = build_cpu(make_func("branches", {out}, 0, body), host());
  std::vector<int32_t> v(20, 7);
  ASSERT_EQ(call(k, {v.data()}), 0);
  for (int x = 0; x < 20; ++x) {
    int want = x < 5 ? 7 : (x % 2 == 0 ? x * 10 : -x);
    EXPECT_EQ(v[x], want) << "x = " << x;
  }
}

TEST(CodegenLoop, GpuAxisOnACpuTargetIsAUserError) {
  ir::Buffer out = buffer("out", DataType::float32(), 32);
  ir::Var tx("tx");
  ir::Stmt body = loop(tx, 32, store(out, Expr(1.0f), tx), ir::ForKind::ThreadX);
  try {
    build_cpu(make_func("gpu_loop", {out}, 0, body), host());
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("bind: GPU axis on a CPU target"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("threadIdx.x"), std::string::npos) << e.what();
  }
}

TEST(CodegenLoop, EmptyAndNegativeExtentsRunNothing) {
  ir::Buffer out = buffer("out", DataType::int32(), 4);
  ir::Var i("i");
  ir::Var j("j");
  ir::Stmt body = ir::Seq::make({ir::For::make(i, 0, 0, ir::ForKind::Serial, store(out, 1, i)),
                                 ir::For::make(j, 0, -3, ir::ForKind::Parallel, store(out, 2, j))});
  Artifact k = build_cpu(make_func("empty", {out}, 0, body), host());
  std::vector<int32_t> v(4, 5);
  ASSERT_EQ(call(k, {v.data()}), 0);
  EXPECT_EQ(v, (std::vector<int32_t>{5, 5, 5, 5}));
}

}  // namespace
}  // namespace tensortune::codegen

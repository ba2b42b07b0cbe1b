// SPDX-License-Identifier: Apache-2.0
// The lowering passes one by one, on hand-built IR: bound inference, storage flattening,
// vectorization, unrolling, GPU binding checks and function names.
#include "tensortune/ir/eval.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/ir/ops.h"
#include "tensortune/lower/bound_inference.h"
#include "tensortune/lower/check_gpu_bindings.h"
#include "tensortune/lower/flatten_storage.h"
#include "tensortune/lower/lower.h"
#include "tensortune/lower/unroll_loops.h"
#include "tensortune/lower/vectorize_loops.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tensortune::lower {
namespace {

using ir::Expr;
using ir::Stmt;
using ir::Var;

const ir::DataType kF32 = ir::DataType::float32();

Stmt loop(const Var& v,
          int64_t extent,
          Stmt body,
          ir::ForKind kind = ir::ForKind::Serial,
          int64_t unroll = 0) {
  return ir::For::make(v, 0, ir::IntImm::make(ir::DataType::index(), extent), kind, std::move(body),
                       unroll);
}

std::string text(const Stmt& s) {
  return ir::to_string(s);
}

TEST(BoundInference, RelaxedVariablesSpanTheirRangeOthersStaySymbolic) {
  Var o("o"), i("i"), k("k");
  ir::Buffer a("A", kF32, {64, 20});
  // A[o*8 + i, k + 2] and A[o*8 + i + 1, k] with i in [0, 7], k in [0, 3], o symbolic.
  Expr r1 = ir::Load::make(a, {o * 8 + i, k + 2});
  Expr r2 = ir::Load::make(a, {o * 8 + i + 1, k});
  ir::VarRanges relaxed{{i.get(), {0, 7}}, {k.get(), {0, 3}}};
  ir::VarRanges known{{o.get(), {0, 7}}};
  Region region = infer_region(a, {r1 + r2}, relaxed, known);
  ASSERT_TRUE(region.read);
  ASSERT_EQ(region.unbounded_dim, -1);
  EXPECT_EQ(region.extent, (std::vector<int64_t>{9, 6}));
  EXPECT_EQ(ir::eval_int(region.min[0], {{o.get(), 3}}), 24);
  EXPECT_EQ(ir::eval_int(region.min[1], {}), 0);
}

TEST(BoundInference, NegativeMinimumIsClampedAndExtentCapped) {
  Var y("y"), r("r");
  ir::Buffer a("A", kF32, {5});
  Expr read = ir::Load::make(a, {y + r - 1});
  Region region = infer_region(a, {read}, {{r.get(), {0, 2}}}, {{y.get(), {0, 4}}});
  ASSERT_EQ(region.extent.size(), 1u);
  EXPECT_EQ(region.extent[0], 3);
  EXPECT_EQ(ir::eval_int(region.min[0], {{y.get(), 0}}), 0);
  EXPECT_EQ(ir::eval_int(region.min[0], {{y.get(), 3}}), 2);
  Region whole = infer_region(a, {ir::Load::make(a, {r * 4})}, {{r.get(), {0, 9}}}, {});
  EXPECT_EQ(whole.extent[0], 5);
}

TEST(BoundInference, DivisionModuloAndUnboundedReads) {
  Var i("i"), j("j");
  ir::Buffer a("A", kF32, {100});
  ir::Buffer idx("I", ir::DataType::int32(), {4});
  Region div = infer_region(a, {ir::Load::make(a, {i / 4})}, {{i.get(), {0, 15}}}, {});
  EXPECT_EQ(div.extent[0], 4);
  Region mod = infer_region(a, {ir::Load::make(a, {j * 10 + i % 3})}, {{i.get(), {0, 15}}},
                            {{j.get(), {0, 9}}});
  EXPECT_EQ(mod.extent[0], 3);
  Region indirect =
      infer_region(a, {ir::Load::make(a, {ir::Load::make(idx, {i})})}, {{i.get(), {0, 3}}}, {});
  EXPECT_EQ(indirect.unbounded_dim, 0);
  Region none = infer_region(a, {ir::Load::make(idx, {i})}, {}, {});
  EXPECT_FALSE(none.read);
}

TEST(FlattenStorage, RowMajorIndexAndTheSizeLimit) {
  Var i("i"), j("j");
  ir::Buffer a("A", kF32, {3, 5}), b("B", kF32, {3, 5});
  ir::LoweredFunc f{
      "f", {a, b}, 1, loop(i, 3, loop(j, 5, ir::Store::make(b, ir::Load::make(a, {i, j}), {i, j}))),
      {},  {}};
  ir::LoweredFunc flat = flatten_storage(f);
  EXPECT_EQ(
      text(flat.body),
      text(
          loop(i, 3, loop(j, 5, ir::Store::make(b, ir::Load::make(a, {i * 5 + j}), {i * 5 + j})))));
  ir::Buffer huge("H", kF32, {65536, 32768});
  ir::LoweredFunc g{"g", {huge}, 0, ir::Store::make(huge, Expr(1.0f), {Expr(0), Expr(0)}), {}, {}};
  EXPECT_THROW(flatten_storage(g), UserError);
}

TEST(VectorizeLoops, GuardBecomesAPredicate) {
  Var i("i");
  ir::Buffer a("A", kF32, {6}), b("B", kF32, {6});
  Stmt body = ir::IfThenElse::make(i < 6, ir::Store::make(b, ir::Load::make(a, {i}) * 2.0f, {i}));
  Stmt v = vectorize_loops(loop(i, 8, body, ir::ForKind::Vectorized));
  EXPECT_EQ(v.as<ir::For>(), nullptr) << text(v);
  const auto* store = v.as<ir::Store>();
  ASSERT_NE(store, nullptr) << text(v);
  EXPECT_TRUE(store->predicate.defined());
  EXPECT_EQ(store->value.type(), ir::DataType::float32(8));
  ir::LoweredFunc f{"f", {a, b}, 1, v, {}, {}};
  std::vector<float> in = {1, 2, 3, 4, 5, 6}, out(6, 0);
  ir::eval(f, {in.data(), out.data()});
  EXPECT_EQ(out, (std::vector<float>{2, 4, 6, 8, 10, 12}));
}

TEST(VectorizeLoops, ALaneCountThatIsNoPowerOfTwoBecomesUnrolledPowerOfTwoChunks) {
  // 48 lanes: LLVM would widen <48 x float> to 64 and scalarize; 3 unrolled chunks of 16 instead,
  // the guard (a tail of 40 live elements) a predicate of each chunk.
  Var i("i");
  ir::Buffer a("A", kF32, {48}), b("B", kF32, {48});
  Stmt body = ir::IfThenElse::make(i < 40, ir::Store::make(b, ir::Load::make(a, {i}) * 2.0f, {i}));
  Stmt v = vectorize_loops(loop(i, 48, body, ir::ForKind::Vectorized));
  const auto* chunks = v.as<ir::For>();
  ASSERT_NE(chunks, nullptr) << text(v);
  EXPECT_EQ(chunks->for_kind, ir::ForKind::Unrolled);
  EXPECT_EQ(ir::as_const_int(chunks->extent) != nullptr ? *ir::as_const_int(chunks->extent) : 0, 3);
  const auto* store = chunks->body.as<ir::Store>();
  ASSERT_NE(store, nullptr) << text(v);
  EXPECT_EQ(store->value.type(), ir::DataType::float32(16));
  EXPECT_TRUE(store->predicate.defined());
  ir::LoweredFunc f{"f", {a, b}, 1, v, {}, {}};
  std::vector<float> in(48), out(48, -1.0f);
  for (size_t n = 0; n < in.size(); ++n) {
    in[n] = static_cast<float>(n);
  }
  ir::eval(f, {in.data(), out.data()});
  for (size_t n = 0; n < out.size(); ++n) {
    EXPECT_EQ(out[n], n < 40 ? 2.0f * static_cast<float>(n) : -1.0f) << n;
  }
  // A power of two stays one vector; an odd count has no power-of-two chunk and stays one too.
  EXPECT_EQ(vectorize_loops(loop(i, 16, body, ir::ForKind::Vectorized)).as<ir::For>(), nullptr);
  Stmt odd = ir::Store::make(b, ir::Load::make(a, {i}), {i});
  EXPECT_EQ(vectorize_loops(loop(i, 7, odd, ir::ForKind::Vectorized)).as<ir::For>(), nullptr);
}

TEST(VectorizeLoops, StoreToOneAddressStaysAScalarLoop) {
  Var i("i");
  ir::Buffer a("A", kF32, {8}), s("S", kF32, {1});
  Stmt body = ir::Store::make(s, ir::Load::make(s, {0}) + ir::Load::make(a, {i}), {Expr(0)});
  Stmt v = vectorize_loops(loop(i, 8, body, ir::ForKind::Vectorized));
  ASSERT_NE(v.as<ir::For>(), nullptr);
  EXPECT_EQ(v.as<ir::For>()->for_kind, ir::ForKind::Vectorized);
}

TEST(VectorizeLoops, CollidingOrShiftedAccessesStayScalar) {
  Var i("i");
  ir::Buffer a("A", kF32, {16});
  // A[i / 2] = ... : two lanes per address.
  Stmt collide = ir::Store::make(a, Expr(1.0f), {i / 2});
  EXPECT_NE(vectorize_loops(loop(i, 8, collide, ir::ForKind::Vectorized)).as<ir::For>(), nullptr);
  // A[i + 1] = A[i] + 1: each iteration reads what the previous one wrote.
  Stmt shifted = ir::Store::make(a, ir::Load::make(a, {i}) + 1.0f, {i + 1});
  EXPECT_NE(vectorize_loops(loop(i, 8, shifted, ir::ForKind::Vectorized)).as<ir::For>(), nullptr);
}

TEST(VectorizeLoops, InnerLoopOrAllocationStaysScalar) {
  Var i("i"), k("k");
  ir::Buffer a("A", kF32, {8});
  Stmt inner = loop(k, 3, ir::Store::make(a, ir::Load::make(a, {i}) + 1.0f, {i}));
  Stmt v = vectorize_loops(loop(i, 8, inner, ir::ForKind::Vectorized));
  ASSERT_NE(v.as<ir::For>(), nullptr);
  EXPECT_EQ(v.as<ir::For>()->var.get(), i.get());
}

TEST(VectorizeLoops, ScalarLoadUnderAMaybeEmptyPredicateIsMasked) {
  // Lane 0 of `i + n*8 < 10` may be off (n = 2), so the scalar read of C[n] must be masked.
  Var i("i"), n("n");
  ir::Buffer c("C", kF32, {2}), b("B", kF32, {24});
  Stmt body =
      ir::IfThenElse::make(n * 8 + i < 10, ir::Store::make(b, ir::Load::make(c, {n}), {n * 8 + i}));
  Stmt v = vectorize_loops(loop(n, 3, loop(i, 8, body, ir::ForKind::Vectorized)));
  ir::LoweredFunc f{"f", {c, b}, 1, v, {}, {}};
  std::vector<float> in = {1, 2}, out(24, 0);
  EXPECT_NO_THROW(ir::eval(f, {in.data(), out.data()})) << text(v);
  EXPECT_EQ(out[9], 2.0f);
  EXPECT_EQ(out[10], 0.0f);
}

TEST(UnrollLoops, PragmaUnrollsGuardFreeNestsButNotGuardedOnes) {
  Var o("o"), i("i"), j("j");
  ir::Buffer a("A", kF32, {4, 8});
  // Under a pragma of 64 steps: the guard-free j nest (8 steps) is unrolled, the guarded one is
  // not.
  Stmt plain = loop(j, 8, ir::Store::make(a, Expr(1.0f), {o, j}));
  Stmt guarded = loop(i, 8, ir::IfThenElse::make(i < 5, ir::Store::make(a, Expr(2.0f), {o, i})));
  Stmt s = loop(o, 4, ir::Seq::make({plain, guarded}), ir::ForKind::Serial, 64);
  Stmt u = unroll_loops(s);
  const auto* outer = u.as<ir::For>();
  ASSERT_NE(outer, nullptr) << text(u);
  const auto* seq = outer->body.as<ir::Seq>();
  ASSERT_NE(seq, nullptr) << text(u);
  ASSERT_EQ(seq->stmts.size(), 9u) << text(u);  // 8 unrolled stores + the guarded loop
  EXPECT_NE(seq->stmts.back().as<ir::For>(), nullptr) << text(u);
  ir::LoweredFunc f{"f", {a}, 0, u, {}, {}};
  std::vector<float> out(32, 0);
  ir::eval(f, {out.data()});
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 8; ++c) {
      EXPECT_EQ(out[static_cast<size_t>(r * 8 + c)], c < 5 ? 2.0f : 1.0f);
    }
  }
}

TEST(UnrollLoops, UnrolledLoopIsReplicatedWithFreshInnerVariables) {
  Var i("i"), j("j");
  ir::Buffer a("A", kF32, {3, 4});
  Stmt s = loop(i, 3, loop(j, 4, ir::Store::make(a, Expr(1.0f), {i, j})), ir::ForKind::Unrolled);
  Stmt u = unroll_loops(s);
  const auto* seq = u.as<ir::Seq>();
  ASSERT_NE(seq, nullptr) << text(u);
  ASSERT_EQ(seq->stmts.size(), 3u);
  const auto* first = seq->stmts[0].as<ir::For>();
  const auto* second = seq->stmts[1].as<ir::For>();
  ASSERT_TRUE(first != nullptr && second != nullptr);
  EXPECT_NE(first->var.get(), second->var.get());
  ir::LoweredFunc f{"f", {a}, 0, u, {}, {}};
  std::vector<float> out(12, 0);
  ir::eval(f, {out.data()});
  EXPECT_EQ(out, std::vector<float>(12, 1.0f));
}

TEST(UnrollLoops, PragmaUnrollsNestsWithinTheBudget) {
  Var o("o"), i("i"), j("j");
  ir::Buffer a("A", kF32, {4, 2, 3});
  Stmt inner = loop(i, 2, loop(j, 3, ir::Store::make(a, Expr(1.0f), {o, i, j})));
  Stmt u = unroll_loops(loop(o, 4, inner, ir::ForKind::Serial, 6));
  const auto* outer = u.as<ir::For>();
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->body.as<ir::For>(), nullptr) << text(u);
  Stmt small = unroll_loops(loop(o, 4, inner, ir::ForKind::Serial, 5));
  ASSERT_NE(small.as<ir::For>(), nullptr);
  const auto* i_loop = small.as<ir::For>()->body.as<ir::For>();
  ASSERT_NE(i_loop, nullptr) << text(small);
  EXPECT_EQ(i_loop->body.as<ir::For>(), nullptr) << text(small);
}

// Loops bound to one index with different extents share the launch of the largest (a smaller
// cooperative fetch runs on the first threads); the block's size is the product of the largest.
TEST(CheckGpuBindings, ThreadLoopsOfDifferentExtentsShareTheLargestLaunch) {
  Var b("b"), t1("t1"), t2("t2"), t3("t3");
  ir::Buffer a("A", kF32, {64});
  target::Target gpu = target::Target::parse("cuda -arch=sm_80");
  LoopOrigins origins{{t1.get(), {"C", "j.i"}}, {t2.get(), {"C.local", "j"}}};
  EXPECT_NO_THROW(check_gpu_bindings(
      loop(
          b, 2,
          ir::Seq::make({loop(t1, 32, ir::Store::make(a, Expr(1.0f), {t1}), ir::ForKind::ThreadX),
                         loop(t2, 16, ir::Store::make(a, Expr(2.0f), {t2}), ir::ForKind::ThreadX)}),
          ir::ForKind::BlockX),
      gpu, origins));
  // 64 x 32 threads in all: more than the device's 1024, though no nest has that many alone.
  Stmt kernel = loop(
      b, 2,
      ir::Seq::make({loop(t1, 64, ir::Store::make(a, Expr(1.0f), {t1}), ir::ForKind::ThreadX),
                     loop(t3, 32, ir::Store::make(a, Expr(2.0f), {t3}), ir::ForKind::ThreadY)}),
      ir::ForKind::BlockX);
  try {
    check_gpu_bindings(kernel, gpu, origins);
    ADD_FAILURE() << "expected a ScheduleError";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("uses 2048 threads per block"), std::string::npos)
        << e.what();
  }
}

TEST(CheckGpuBindings, SharedMemoryLimit) {
  Var t("t");
  ir::Buffer s("S", kF32, {16384}, ir::MemoryScope::Shared);
  Stmt kernel =
      ir::Allocate::make(s, loop(t, 32, ir::Store::make(s, Expr(1.0f), {t}), ir::ForKind::ThreadX));
  target::Target gpu = target::Target::parse("cuda -arch=sm_80");
  EXPECT_THROW(check_gpu_bindings(kernel, gpu, {}), ScheduleError);
  gpu.max_shared_memory_bytes = 65536;
  EXPECT_NO_THROW(check_gpu_bindings(kernel, gpu, {}));
}

TEST(FunctionName, IsACIdentifier) {
  te::Tensor a = te::placeholder({2}, kF32, "A");
  te::Tensor b = te::compute(
      {2}, [&](const std::vector<Var>& v) { return a(v[0]); }, "B");
  EXPECT_EQ(function_name(te::Workload("matmul_64x64x64_float32", {a}, {b})),
            "matmul_64x64x64_float32");
  EXPECT_EQ(function_name(te::Workload("conv-2d.v1", {a}, {b})), "conv_2d_v1");
  EXPECT_EQ(function_name(te::Workload("3mm", {a}, {b})), "f_3mm");
}

}  // namespace
}  // namespace tensortune::lower

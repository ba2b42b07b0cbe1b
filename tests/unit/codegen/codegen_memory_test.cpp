// SPDX-License-Identifier: Apache-2.0
// Codegen of buffer accesses: contiguous vector loads/stores, masked tails, gathers/scatters,
// scratch allocations on the stack and on the heap, boolean buffers.
#include "codegen_test_util.h"

#include <gtest/gtest.h>

namespace tensortune::codegen {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)
using ir::DataType;
using ir::Expr;

TEST(CodegenMemory, VectorAddWithRampLoadsAndStores) {
  const int n = 64;
  ir::Buffer a = buffer("A", DataType::float32(), n);
  ir::Buffer b = buffer("B", DataType::float32(), n);
  ir::Buffer c = buffer("C", DataType::float32(), n);
  ir::Var io("io");
  Expr idx = ramp(io * 16, 1, 16);
  ir::Stmt body = loop(io, n / 16, store(c, load(a, idx) + load(b, idx), idx));
  Artifact k = build_cpu(make_func("vadd", {a, b, c}, 2, body), host());
  std::vector<float> va = random_floats(n, 1);
  std::vector<float> vb = random_floats(n, 2);
  std::vector<float> vc(n, -1.0f);
  ASSERT_EQ(call(k, {va.data(), vb.data(), vc.data()}), 0);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(vc[i], va[i] + vb[i]) << "i = " << i;
  }
}

TEST(CodegenMemory, PredicatedTailTouchesOnlyActiveLanes) {
  const int n = 37;       // logical length: the last 16-lane block has 5 active lanes
  const int padded = 48;  // C is longer so stray writes past n would be visible
  ir::Buffer a = buffer("A", DataType::float32(), n);
  ir::Buffer c = buffer("C", DataType::float32(), padded);
  ir::Var io("io");
  Expr idx = ramp(io * 16, 1, 16);
  Expr active = idx < ir::Broadcast::make(Expr(n), 16);
  Expr value = load(a, idx, active) * ir::Broadcast::make(Expr(3.0f), 16);
  ir::Stmt body = loop(io, 3, store(c, value, idx, active));
  Artifact k = build_cpu(make_func("tail", {a, c}, 1, body), host());
  std::vector<float> va = random_floats(n, 3);
  std::vector<float> vc(padded, 42.0f);
  ASSERT_EQ(call(k, {va.data(), vc.data()}), 0);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(vc[i], va[i] * 3.0f) << "i = " << i;
  }
  for (int i = n; i < padded; ++i) {
    EXPECT_EQ(vc[i], 42.0f) << "masked-off lane " << i << " was written";
  }
}

TEST(CodegenMemory, MaskedRowsOfAnOddWidthReadAndWriteOnlyTheirActiveLanes) {
  // Padded rows as a conv's padding makes them: row r of `lanes` elements reads A's row at
  // column c - 1 for the lanes 1 .. lanes - 2, only for the rows the flag buffer marks, and
  // writes under the same mask. Odd widths go through masked operations widened to a power of
  // two; CliBuild.NineLaneMaskedRowsComputeTheReferenceOnAvx2 is the case LLVM got wrong.
  // The host, and AVX2 without AVX-512 (every machine the project runs on has AVX2).
  for (const target::Target& t : {host(), target::Target::parse("llvm -mcpu=znver3")}) {
    for (const int lanes : {3, 5, 9, 12}) {
      SCOPED_TRACE(t.to_string() + ", " + std::to_string(lanes) + " lanes");
      const int rows = 6;
      const int width = lanes - 2;
      ir::Buffer a = buffer("A", DataType::float32(), rows * width + 2 * lanes);
      ir::Buffer live = buffer("L", DataType::int32(), rows);
      ir::Buffer c = buffer("C", DataType::float32(), rows * lanes);
      ir::Var r("r");
      Expr column = ramp(Expr(0), 1, lanes);
      Expr inner = (column >= ir::Broadcast::make(Expr(1), lanes)) &&
                   (column < ir::Broadcast::make(Expr(lanes - 1), lanes));
      Expr mask = inner && ir::Broadcast::make(load(live, r) != Expr(0), lanes);
      Expr value = load(a, ramp(r * width - 1 + lanes, 1, lanes), mask);
      ir::Stmt body = loop(r, rows, store(c, value, ramp(r * lanes, 1, lanes), mask));
      Artifact k = build_cpu(make_func("rows", {a, live, c}, 2, body), t);
      std::vector<float> va = random_floats(static_cast<size_t>(rows * width + 2 * lanes), 5);
      std::vector<int32_t> vl = {1, 0, 1, 1, 0, 1};
      std::vector<float> vc(static_cast<size_t>(rows * lanes), 42.0f);
      ASSERT_EQ(call(k, {va.data(), vl.data(), vc.data()}), 0);
      for (int row = 0; row < rows; ++row) {
        for (int lane = 0; lane < lanes; ++lane) {
          const bool active = vl[static_cast<size_t>(row)] != 0 && lane >= 1 && lane < lanes - 1;
          const float want =
              active ? va[static_cast<size_t>(row * width - 1 + lanes + lane)] : 42.0f;
          EXPECT_EQ(vc[static_cast<size_t>(row * lanes + lane)], want)
              << "row " << row << ", lane " << lane;
        }
      }
    }
  }
}

TEST(CodegenMemory, StridedLoadsAndStoresGatherAndScatter) {
  // out[3*i] = in[2*i] + 1 for 8 lanes at a time, 4 blocks.
  const int lanes = 8;
  const int blocks = 4;
  ir::Buffer in = buffer("in", DataType::float32(), 2 * lanes * blocks);
  ir::Buffer out = buffer("out", DataType::float32(), 3 * lanes * blocks);
  ir::Var io("io");
  Expr src = ir::Ramp::make(io * (2 * lanes), Expr(2), lanes);
  Expr dst = ir::Ramp::make(io * (3 * lanes), Expr(3), lanes);
  Expr one = ir::Broadcast::make(Expr(1.0f), lanes);
  ir::Stmt body = loop(io, blocks, store(out, load(in, src) + one, dst));
  Artifact k = build_cpu(make_func("strided", {in, out}, 1, body), host());
  std::vector<float> vin = random_floats(2 * lanes * blocks, 4);
  std::vector<float> vout(3 * lanes * blocks, 0.5f);
  ASSERT_EQ(call(k, {vin.data(), vout.data()}), 0);
  for (int i = 0; i < 3 * lanes * blocks; ++i) {
    float want = i % 3 == 0 ? vin[2 * (i / 3)] + 1.0f : 0.5f;
    EXPECT_EQ(vout[i], want) << "i = " << i;
  }
}

TEST(CodegenMemory, PredicatedGatherReadsOnlyActiveLanes) {
  // out[i] = i < 5 ? in[4 - i] : 0, as one 8-lane predicated gather from a 5-element buffer.
  ir::Buffer in = buffer("in", DataType::int32(), 5);
  ir::Buffer out = buffer("out", DataType::int32(), 8);
  Expr lanes = ramp(Expr(0), 1, 8);
  Expr active = lanes < ir::Broadcast::make(Expr(5), 8);
  Expr reversed = ir::Broadcast::make(Expr(4), 8) - lanes;
  ir::Stmt body = store(out, load(in, reversed, active), lanes);
  Artifact k = build_cpu(make_func("rev", {in, out}, 1, body), host());
  std::vector<int32_t> vin = {10, 11, 12, 13, 14};
  std::vector<int32_t> vout(8, -1);
  ASSERT_EQ(call(k, {vin.data(), vout.data()}), 0);
  EXPECT_EQ(vout, (std::vector<int32_t>{14, 13, 12, 11, 10, 0, 0, 0}));
}

TEST(CodegenMemory, BroadcastIndexLoadsOneElement) {
  ir::Buffer in = buffer("in", DataType::float32(), 4);
  ir::Buffer out = buffer("out", DataType::float32(), 16);
  ir::Var i("i");
  Expr value = load(in, ir::Broadcast::make(Expr(i), 4));
  ir::Stmt body = loop(i, 4, store(out, value, ramp(i * 4, 1, 4)));
  Artifact k = build_cpu(make_func("bcast", {in, out}, 1, body), host());
  std::vector<float> vin = {1.5f, -2.0f, 3.25f, 8.0f};
  std::vector<float> vout(16, 0.0f);
  ASSERT_EQ(call(k, {vin.data(), vout.data()}), 0);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(vout[j], vin[j / 4]) << "j = " << j;
  }
}

TEST(CodegenMemory, PredicatedBroadcastIndexIsOneGuardedScalarLoadNotAGather) {
  // out[j*4 + l] = l < live[j] ? in[j] : 0 with the load itself predicated; row 3 has no live
  // lane and its element lies past the end of `in`, so it must not be read at all.
  ir::Buffer in = buffer("in", DataType::float32(), 3);
  ir::Buffer live = buffer("live", DataType::int32(), 4);
  ir::Buffer out = buffer("out", DataType::float32(), 16);
  ir::Var j("j");
  Expr lanes = ramp(Expr(0), 1, 4);
  Expr active = lanes < ir::Broadcast::make(ir::Load::make(live, {Expr(j)}), 4);
  Expr value = load(in, ir::Broadcast::make(Expr(j), 4), active);
  ir::Stmt body = loop(j, 4, store(out, value, ramp(j * 4, 1, 4)));
  ir::LoweredFunc f = make_func("bcast_masked", {in, live, out}, 2, body);
  EXPECT_EQ(emit_llvm_ir(f, host()).find("masked.gather"), std::string::npos);
  Artifact k = build_cpu(f, host());
  std::vector<float> vin = {1.5f, -2.0f, 3.25f};
  std::vector<int32_t> vlive = {4, 2, 0, 0};
  std::vector<float> vout(16, 9.0f);
  ASSERT_EQ(call(k, {vin.data(), vlive.data(), vout.data()}), 0);
  const std::vector<float> expected = {1.5f, 1.5f, 1.5f, 1.5f, -2.0f, -2.0f, 0, 0,
                                       0,    0,    0,    0,    0,     0,     0, 0};
  EXPECT_EQ(vout, expected);
}

TEST(CodegenMemory, ScalarPredicatedLoadAndStore) {
  // for i in 0..10: if-free guarded copy out[i] = in[i] * 2 where i < 6 (predicated scalars).
  ir::Buffer in = buffer("in", DataType::float32(), 6);
  ir::Buffer out = buffer("out", DataType::float32(), 10);
  ir::Var i("i");
  Expr guard = i < 6;
  ir::Stmt body = loop(i, 10, store(out, load(in, i, guard) * 2.0f, i, guard));
  Artifact k = build_cpu(make_func("guarded", {in, out}, 1, body), host());
  std::vector<float> vin = {1, 2, 3, 4, 5, 6};
  std::vector<float> vout(10, 7.0f);
  ASSERT_EQ(call(k, {vin.data(), vout.data()}), 0);
  EXPECT_EQ(vout, (std::vector<float>{2, 4, 6, 8, 10, 12, 7, 7, 7, 7}));
}

/// out[i] = tmp[i] + 1 where tmp[j] = in[j] * 2, with tmp an Allocate of `n` floats.
ir::LoweredFunc scratch_func(const std::string& name, int n, ir::MemoryScope scope) {
  ir::Buffer in = buffer("in", DataType::float32(), n);
  ir::Buffer out = buffer("out", DataType::float32(), n);
  ir::Buffer tmp = buffer("tmp", DataType::float32(), n, scope);
  ir::Var j("j");
  ir::Var i("i");
  ir::Stmt fill = loop(j, n, store(tmp, load(in, j) * 2.0f, j));
  ir::Stmt use = loop(i, n, store(out, load(tmp, i) + 1.0f, i));
  return make_func(name, {in, out}, 1, ir::Allocate::make(tmp, ir::Seq::make({fill, use})));
}

TEST(CodegenMemory, SmallAllocateLivesOnTheStack) {
  const int n = 100;
  ir::LoweredFunc f = scratch_func("small_scratch", n, ir::MemoryScope::Local);
  std::string text = emit_llvm_ir(f, host(), false);
  EXPECT_NE(text.find("alloca [100 x float], align 4096"), std::string::npos) << text;
  EXPECT_EQ(text.find("tt_alloc"), std::string::npos);
  Artifact k = build_cpu(f, host());
  std::vector<float> vin = random_floats(n, 5);
  std::vector<float> vout(n);
  ASSERT_EQ(call(k, {vin.data(), vout.data()}), 0);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(vout[i], vin[i] * 2.0f + 1.0f) << "i = " << i;
  }
}

TEST(CodegenMemory, LargeAllocateUsesTheRuntimeAllocator) {
  const int n = 40000;  // 160 KB: above the 64 KiB stack limit
  ir::LoweredFunc f = scratch_func("large_scratch", n, ir::MemoryScope::Global);
  std::string text = emit_llvm_ir(f, host(), false);
  EXPECT_NE(text.find("call align 64 ptr @tt_alloc(i64 160000)"), std::string::npos) << text;
  EXPECT_NE(text.find("call void @tt_free"), std::string::npos);
  Artifact k = build_cpu(f, host());
  std::vector<float> vin = random_floats(n, 6);
  std::vector<float> vout(n);
  ASSERT_EQ(call(k, {vin.data(), vout.data()}), 0);
  for (int i = 0; i < n; i += 997) {
    EXPECT_EQ(vout[i], vin[i] * 2.0f + 1.0f) << "i = " << i;
  }
  EXPECT_EQ(vout[n - 1], vin[n - 1] * 2.0f + 1.0f);
}

TEST(CodegenMemory, BooleanBuffersAreBytes) {
  // mask[i] = in[i] > 0; out[i] = mask[i] ? in[i] : -in[i]
  const int n = 9;
  ir::Buffer in = buffer("in", DataType::float32(), n);
  ir::Buffer mask = buffer("mask", DataType::boolean(), n);
  ir::Buffer out = buffer("out", DataType::float32(), n);
  ir::Var i("i");
  ir::Var j("j");
  ir::Stmt body = ir::Seq::make(
      {loop(i, n, store(mask, load(in, i) > 0.0f, i)),
       loop(j, n, store(out, ir::select(load(mask, j), load(in, j), -load(in, j)), j))});
  Artifact k = build_cpu(make_func("boolbuf", {in, mask, out}, 1, body), host());
  std::vector<float> vin = random_floats(n, 7);
  std::vector<uint8_t> vmask(n, 77);
  std::vector<float> vout(n);
  ASSERT_EQ(call(k, {vin.data(), vmask.data(), vout.data()}), 0);
  for (int x = 0; x < n; ++x) {
    EXPECT_EQ(vmask[x], vin[x] > 0 ? 1 : 0) << "x = " << x;
    EXPECT_EQ(vout[x], std::fabs(vin[x])) << "x = " << x;
  }
}

TEST(CodegenMemory, UnknownBufferIsAnInternalError) {
  ir::Buffer in = buffer("in", DataType::float32(), 4);
  ir::Buffer stray = buffer("stray", DataType::float32(), 4);
  ir::Var i("i");
  ir::Stmt body = loop(i, 4, store(stray, load(in, i), i));
  EXPECT_THROW(build_cpu(make_func("stray", {in}, 1, body), host()), InternalError);
}

}  // namespace
}  // namespace tensortune::codegen

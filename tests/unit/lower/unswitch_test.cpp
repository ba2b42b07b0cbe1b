// SPDX-License-Identifier: Apache-2.0
// unswitch_guards: full tiles of a non-dividing split run guard-free code, boundary tiles keep
// their guards, and every result computes what the reference computes.
#include "lower_test_util.h"
#include "tensortune/ir/ir_equal.h"
#include "tensortune/ir/ops.h"
#include "tensortune/ir/verify.h"
#include "tensortune/lower/unswitch_guards.h"

#include <sstream>
#include <string>
#include <vector>

namespace tensortune::lower {
namespace {

using ir::Expr;
using ir::Stmt;
using ir::Var;
using schedule::Annotate;
using schedule::CacheWrite;
using schedule::ComputeAt;
using schedule::Fuse;
using schedule::PragmaUnroll;
using schedule::Reorder;
using schedule::Split;

Stmt serial_loop(const Var& v, int64_t extent, Stmt body) {
  return ir::For::make(v, 0, ir::IntImm::make(ir::DataType::index(), extent), ir::ForKind::Serial,
                       std::move(body));
}

/// out[o*16 + i] = in[o*16 + i] + 1 for o*16 + i < n, over 3 tiles of 16.
struct TiledAdd {
  Var o{"o"};
  Var i{"i"};
  ir::Buffer in{"in", ir::DataType::float32(), {48}};
  ir::Buffer out{"out", ir::DataType::float32(), {48}};

  Stmt build(const Expr& guard) const {
    Expr idx = o * 16 + i;
    Stmt store = ir::Store::make(out, ir::Load::make(in, {idx}) + 1.0f, {idx});
    return serial_loop(o, 3, serial_loop(i, 16, ir::IfThenElse::make(guard, store)));
  }

  /// Runs `s` and returns out, with -1 where nothing was written.
  std::vector<float> run(const Stmt& s) const {
    std::vector<float> a(48), b(48, -1.0f);
    for (int k = 0; k < 48; ++k) {
      a[static_cast<size_t>(k)] = static_cast<float>(k);
    }
    ir::LoweredFunc f{"f", {in, out}, 1, s, {}, {}};
    ir::eval(f, {a.data(), b.data()});
    return b;
  }
};

/// TiledAdd's expected output when the store runs at (o, i) iff `live(o, i)` (i < `inner`).
template <class Live>
std::vector<float> expected_tiled_add_where(int inner, Live live) {
  std::vector<float> b(48, -1.0f);
  for (int o = 0; o < 3; ++o) {
    for (int i = 0; i < inner; ++i) {
      if (live(o, i)) {
        b[static_cast<size_t>(o * 16 + i)] = static_cast<float>(o * 16 + i) + 1.0f;
      }
    }
  }
  return b;
}

/// TiledAdd's expected output when the first `n` elements are stored.
std::vector<float> expected_tiled_add(int n) {
  return expected_tiled_add_where(16, [n](int o, int i) { return o * 16 + i < n; });
}

TEST(UnswitchGuards, FullTilesLoseTheGuardBoundaryTileRunsItsLiveIterations) {
  TiledAdd t;
  Stmt s = t.build(t.o * 16 + t.i < 40);
  Stmt u = unswitch_guards(s);
  const auto* outer = u.as<ir::For>();
  ASSERT_NE(outer, nullptr) << ir::to_string(u);
  const auto* split = outer->body.as<ir::IfThenElse>();
  ASSERT_NE(split, nullptr) << ir::to_string(u);
  // then: the tile serial_loop without any `if`; else: the boundary tile (o = 2, the only tile
  // failing o*16 < 25), whose guard 32 + i < 40 became its serial_loop's bound: 8 iterations, no
  // `if`.
  const auto* full = split->then_case.as<ir::For>();
  ASSERT_NE(full, nullptr) << ir::to_string(u);
  EXPECT_NE(full->body.as<ir::Store>(), nullptr) << ir::to_string(u);
  const auto* partial = split->else_case.as<ir::For>();
  ASSERT_NE(partial, nullptr) << ir::to_string(u);
  EXPECT_NE(partial->body.as<ir::Store>(), nullptr) << ir::to_string(u);
  const int64_t* live = ir::as_const_int(partial->extent);
  ASSERT_NE(live, nullptr) << ir::to_string(u);
  EXPECT_EQ(*live, 8) << ir::to_string(u);
  EXPECT_NE(partial->var.get(), full->var.get())
      << "the copies must not share a serial_loop variable";
  EXPECT_EQ(t.run(u), expected_tiled_add(40));
  EXPECT_EQ(t.run(s), expected_tiled_add(40));
  ir::LoweredFunc f{"f", {t.in, t.out}, 1, u, {}, {}};
  EXPECT_NO_THROW(ir::verify(f, ir::VerifyOptions{}));
}

TEST(UnswitchGuards, EveryComparisonKindAndBoundary) {
  TiledAdd t;
  // i + o*16 <= n-1, n > o*16 + i, n-1 >= ..., for n at and around tile boundaries.
  for (int n : {0, 1, 15, 16, 17, 32, 47, 48}) {
    SCOPED_TRACE(n);
    Expr idx = t.o * 16 + t.i;
    for (const Expr& guard : {idx<n, idx <= n - 1, Expr(n)> idx, Expr(n - 1) >= idx}) {
      EXPECT_EQ(t.run(unswitch_guards(t.build(guard))), expected_tiled_add(n))
          << ir::to_string(unswitch_guards(t.build(guard)));
    }
  }
}

TEST(UnswitchGuards, GuardThatAlwaysHoldsIsDropped) {
  TiledAdd t;
  Stmt u = unswitch_guards(t.build(t.o * 16 + t.i < 100));
  EXPECT_EQ(ir::to_string(u).find("if ("), std::string::npos) << ir::to_string(u);
  EXPECT_EQ(t.run(u), expected_tiled_add(48));
}

TEST(UnswitchGuards, NonlinearOrLoadDependentGuardsAreLeftAlone) {
  TiledAdd t;
  // (o*16 + i)/3 mixes the tile variable and the inner one in one atom: no full-tile predicate.
  Stmt mixed = t.build((t.o * 16 + t.i) / 3 < 11);
  EXPECT_TRUE(ir::structural_equal(unswitch_guards(mixed), mixed));
  Stmt load = t.build(ir::Load::make(t.in, {t.i}) < 3.0f);
  EXPECT_TRUE(ir::structural_equal(unswitch_guards(load), load));
}

TEST(UnswitchGuards, GuardOnALetBoundInsideIsLeftAlone) {
  TiledAdd t;
  Var x("x");
  Expr idx = t.o * 16 + t.i;
  Stmt store = ir::Store::make(t.out, ir::Load::make(t.in, {idx}) + 1.0f, {idx});
  Stmt s =
      serial_loop(t.o, 3,
                  ir::LetStmt::make(
                      x, t.o * 2, serial_loop(t.i, 16, ir::IfThenElse::make(x + t.i < 20, store))));
  Stmt u = unswitch_guards(s);
  const auto* outer = u.as<ir::For>();
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->body.as<ir::IfThenElse>(), nullptr) << ir::to_string(u);
}

TEST(UnswitchGuards, InvariantGuardIsHoistedOutOfTheInnerLoopWithoutADeadCopy) {
  // for o: for i: if (o*16 < 20) store  ->  for o: if (o*16 < 20) for i: store  ->  (the hoisted
  // guard bounds o) for o in [0, 2): for i: store
  TiledAdd t;
  Stmt s = t.build(t.o * 16 < 20);
  Stmt u = unswitch_guards(s);
  const auto* outer = u.as<ir::For>();
  ASSERT_NE(outer, nullptr) << ir::to_string(u);
  const int64_t* tiles = ir::as_const_int(outer->extent);
  ASSERT_NE(tiles, nullptr) << ir::to_string(u);
  EXPECT_EQ(*tiles, 2) << ir::to_string(u);
  const auto* inner = outer->body.as<ir::For>();
  ASSERT_NE(inner, nullptr) << ir::to_string(u);
  EXPECT_NE(inner->body.as<ir::Store>(), nullptr) << ir::to_string(u);
  EXPECT_EQ(t.run(u), expected_tiled_add(32));
}

TEST(UnswitchGuards, GuardsOnALoopsOwnVariableBecomeItsBoundOthersStay) {
  // for o: for i: if (i < 5 && o*16 + i < 40 && 3*i + 1 < 14) store: i < 5 and 3*i + 1 < 14
  // (i < ceil(13/3) = 5) become i's bound; the tile guard is left to unswitching.
  TiledAdd t;
  Stmt s = t.build(ir::And::make(ir::And::make(t.i < 5, t.o * 16 + t.i < 40), t.i * 3 + 1 < 14));
  Stmt u = unswitch_guards(s);
  const std::vector<float> want =
      expected_tiled_add_where(5, [](int o, int i) { return o * 16 + i < 40; });
  EXPECT_EQ(t.run(u), want) << ir::to_string(u);
  EXPECT_EQ(t.run(s), want);
  EXPECT_EQ(ir::to_string(u).find("i < 5"), std::string::npos) << ir::to_string(u);
  EXPECT_EQ(ir::to_string(u).find("14"), std::string::npos) << ir::to_string(u);
  // A guard that never holds removes the serial_loop.
  Stmt none = unswitch_guards(t.build(t.i * 2 < 0));
  EXPECT_EQ(ir::to_string(none).find("out["), std::string::npos) << ir::to_string(none);
}

TEST(UnswitchGuards, SeveralBoundaryTilesKeepTheirGuards) {
  // for o in [0, 3): for i in [0, 16): if (o*8 + i < 20): the tiles o = 1 and o = 2 both fail
  // the full-tile test (o*8 + 15 < 20), so the else copy keeps the variable o and the guard.
  TiledAdd t;
  Stmt s = t.build(t.o * 8 + t.i < 20);
  Stmt u = unswitch_guards(s);
  const std::vector<float> want =
      expected_tiled_add_where(16, [](int o, int i) { return o * 8 + i < 20; });
  EXPECT_EQ(t.run(u), want) << ir::to_string(u);
  EXPECT_NE(ir::to_string(u).find("(o*8)"), std::string::npos) << ir::to_string(u);
}

/// A register-tiled matmul whose splits divide none of the extents: the full tiles must be
/// vectorized (a float32x16 store) and everything must match the reference, with and without a
/// local accumulator, a parallel fused outer serial_loop and an unroll pragma.
TEST(UnswitchGuards, OddMatmulVectorizesItsFullTiles) {
  te::Workload w = matmul_workload(37, 45, 29);
  std::vector<schedule::Step> tiled = {Split{"C", "i", 8}, Split{"C", "j", 16}, Split{"C", "k", 8},
                                       Reorder{"C", {"i.o", "j.o", "k.o", "i.i", "k.i", "j.i"}},
                                       Annotate{"C", "j.i", ir::ForKind::Vectorized}};
  ir::LoweredFunc f = expect_lowers_correctly(w, tiled);
  // An unpredicated 16-wide store: a full tile (the boundary tiles' stores carry " if (...)").
  EXPECT_GE(count_in(f, "= x16(0f)\n"), 1) << ir::to_string(f);

  std::vector<schedule::Step> cached = {CacheWrite{"C", ir::MemoryScope::Local},
                                        Split{"C", "i", 8},
                                        Split{"C", "j", 16},
                                        Reorder{"C", {"i.o", "j.o", "i.i", "j.i"}},
                                        Fuse{"C", {"i.o", "j.o"}},
                                        Annotate{"C", "i.o@j.o", ir::ForKind::Parallel},
                                        ComputeAt{"C.local", "C", "i.o@j.o"},
                                        Split{"C.local", "k", 8},
                                        Reorder{"C.local", {"k.o", "k.i", "i", "j"}},
                                        Annotate{"C.local", "j", ir::ForKind::Vectorized},
                                        PragmaUnroll{"C", "i.o@j.o", 64}};
  ir::LoweredFunc g = expect_lowers_correctly(w, cached);
  EXPECT_GE(count_in(g, "= x16(0f)\n"), 1) << ir::to_string(g);
}

/// N = 33 in tiles of 16 leaves a last tile of one column; M = 37 in tiles of 8 one of 5 rows.
/// Each boundary tile is one tile (its offset known), so its guards become serial_loop bounds: the
/// column tail is one scalar lane, not 16 masked ones, and nothing is predicated.
TEST(UnswitchGuards, BoundaryTilesOfAnOddMatmulRunUnmasked) {
  te::Workload w = matmul_workload(37, 33, 29);
  std::vector<schedule::Step> cached = {CacheWrite{"C", ir::MemoryScope::Local},
                                        Split{"C", "i", 8},
                                        Split{"C", "j", 16},
                                        Reorder{"C", {"i.o", "j.o", "i.i", "j.i"}},
                                        Annotate{"C", "j.i", ir::ForKind::Vectorized},
                                        ComputeAt{"C.local", "C", "j.o"},
                                        Reorder{"C.local", {"k", "i", "j"}},
                                        Annotate{"C.local", "j", ir::ForKind::Vectorized}};
  ir::LoweredFunc f = expect_lowers_correctly(w, cached);
  // The only `if`s left are the unswitched tile tests; no store or load carries a predicate.
  std::istringstream lines(ir::to_string(f));
  int predicated = 0;
  for (std::string line; std::getline(lines, line);) {
    const size_t code = line.find_first_not_of(' ');
    predicated += line.find(" if (", code) != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(predicated, 0) << ir::to_string(f);
  EXPECT_GE(count_in(f, "x16("), 1) << ir::to_string(f);
  EXPECT_GE(count_in(f, "B[((k.1*33) + 32)]"), 1) << "the column tail is one scalar lane\n"
                                                  << ir::to_string(f);
}

TEST(UnswitchGuards, GpuKernelsKeepTheirGuardsInPlace) {
  // On a GPU a tile predicate may depend on threadIdx; copies of a body with barriers in
  // divergent branches would be undefined behaviour, so lower() does not unswitch there.
  te::Workload w = matmul_workload(37, 45, 29);
  const std::vector<schedule::Step> steps = {Split{"C", "i", 8},
                                             Split{"C", "j", 16},
                                             Reorder{"C", {"i.o", "j.o", "i.i", "j.i", "k"}},
                                             Annotate{"C", "i.o", ir::ForKind::BlockY},
                                             Annotate{"C", "j.o", ir::ForKind::BlockX},
                                             Annotate{"C", "i.i", ir::ForKind::ThreadY},
                                             Annotate{"C", "j.i", ir::ForKind::ThreadX}};
  ir::LoweredFunc f = lower(schedule::apply_steps(w, steps),
                            target::Target::parse("cuda -arch=sm_80"), function_name(w));
  EXPECT_EQ(count_in(f, "} else {"), 0) << ir::to_string(f);
  EXPECT_GE(count_in(f, "if ("), 1) << ir::to_string(f);
  EXPECT_TRUE(runs_like_reference(w, f));
}

}  // namespace
}  // namespace tensortune::lower

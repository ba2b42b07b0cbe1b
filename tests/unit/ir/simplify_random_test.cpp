// SPDX-License-Identifier: Apache-2.0
// Randomised soundness of the simplifier and of const_bound / can_prove: random affine, div, mod,
// min, max and select expressions over bounded variables, checked by the interpreter on random
// assignments within the ranges (seeded, so every run checks the same cases).
#include "tensortune/ir/eval.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/ir/ops.h"
#include "tensortune/ir/simplify.h"
#include "tensortune/support/rng.h"

#include <gtest/gtest.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace tensortune::ir {
namespace {

class ExprGenerator {
 public:
  explicit ExprGenerator(uint64_t seed) : rng_(seed) {
    for (const char* name : {"a", "b", "c", "d"}) {
      vars_.emplace_back(name);
      int64_t lo = rng_.uniform_int(-8, 4);
      ranges_[vars_.back().get()] = ConstBound{lo, lo + rng_.uniform_int(0, 20)};
    }
  }

  Expr expr(int depth) {
    if (depth == 0 || rng_.uniform() < 0.2) {
      return leaf();
    }
    switch (rng_.uniform_int(0, 11)) {
      case 0:
      case 1:
        return expr(depth - 1) + expr(depth - 1);
      case 2:
        return expr(depth - 1) - expr(depth - 1);
      case 3:
        return expr(depth - 1) * constant(-4, 9);
      case 4:  // products of variables stay shallow, so no int32 overflow
        return expr(depth > 2 ? 1 : depth - 1) * expr(depth > 2 ? 1 : depth - 1);
      case 5:
      case 6:
        return expr(depth - 1) / divisor();
      case 7:
      case 8:
        return expr(depth - 1) % divisor();
      case 9:
        return min(expr(depth - 1), expr(depth - 1));
      case 10:
        return max(expr(depth - 1), expr(depth - 1));
      default:
        return select(condition(depth - 1), expr(depth - 1), expr(depth - 1));
    }
  }

  Expr condition(int depth) {
    Expr a = expr(depth);
    Expr b = rng_.uniform() < 0.5 ? expr(depth) : constant(-10, 30);
    switch (rng_.uniform_int(0, 7)) {
      case 0:
        return a < b;
      case 1:
        return a <= b;
      case 2:
        return a > b;
      case 3:
        return a >= b;
      case 4:
        return a == b;
      case 5:
        return a != b;
      case 6:
        return (a < b) && (a > constant(-5, 5));
      default:
        return !(a < b) || (b == constant(0, 3));
    }
  }

  /// A 4-lane integer expression of ramps and broadcasts of scalar expressions.
  Expr vector_expr(int depth) {
    if (depth == 0 || rng_.uniform() < 0.25) {
      Expr base = expr(1);
      if (rng_.uniform() < 0.4) {
        return Broadcast::make(base, kLanes);
      }
      return Ramp::make(base, constant(-3, 3), kLanes);
    }
    Expr a = vector_expr(depth - 1);
    switch (rng_.uniform_int(0, 6)) {
      case 0:
        return a + vector_expr(depth - 1);
      case 1:
        return a - vector_expr(depth - 1);
      case 2:
        return a * Broadcast::make(constant(-3, 5), kLanes);
      case 3:
        return a / Broadcast::make(divisor(), kLanes);
      case 4:
        return a % Broadcast::make(divisor(), kLanes);
      case 5:
        return min(a, vector_expr(depth - 1));
      default:
        return select(a < vector_expr(depth - 1), a, vector_expr(depth - 1));
    }
  }

  /// Out[0:4] = value, with the generator's variables bound by lets to `values`.
  Stmt store_with_lets(const Buffer& out,
                       const Expr& value,
                       const std::unordered_map<const VarNode*, int64_t>& values) const {
    Stmt s = Store::make(out, value, {Ramp::make(0, 1, kLanes)});
    for (const Var& v : vars_) {
      s = LetStmt::make(v, IntImm::make(DataType::int32(), values.at(v.get())), s);
    }
    return s;
  }

  static constexpr int kLanes = 4;

  std::unordered_map<const VarNode*, int64_t> assignment() {
    std::unordered_map<const VarNode*, int64_t> values;
    for (const Var& v : vars_) {
      const ConstBound& r = ranges_.at(v.get());
      values[v.get()] = rng_.uniform_int(r.min, r.max);
    }
    return values;
  }

  const VarRanges& ranges() const { return ranges_; }

 private:
  Expr leaf() {
    if (rng_.uniform() < 0.7) {
      return vars_[rng_.pick(vars_.size())];
    }
    return constant(-10, 10);
  }
  Expr constant(int64_t lo, int64_t hi) {
    return IntImm::make(DataType::int32(), rng_.uniform_int(lo, hi));
  }
  Expr divisor() {
    int64_t c = rng_.uniform_int(1, 9);
    return IntImm::make(DataType::int32(), rng_.uniform() < 0.15 ? -c : c);
  }

  support::Rng rng_;
  std::vector<Var> vars_;
  VarRanges ranges_;
};

bool contains(const std::optional<ConstBound>& b, int64_t v) {
  return !b || (b->min <= v && v <= b->max);
}

TEST(SimplifyRandom, SimplifiedExpressionsEvaluateEqual) {
  int simplified_smaller = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    ExprGenerator gen(seed);
    for (int n = 0; n < 50; ++n) {
      Expr e = gen.expr(4);
      Expr s = simplify(e, gen.ranges());
      std::optional<ConstBound> eb = const_bound(e, gen.ranges());
      std::optional<ConstBound> sb = const_bound(s, gen.ranges());
      simplified_smaller += to_string(s).size() < to_string(e).size() ? 1 : 0;
      for (int trial = 0; trial < 12; ++trial) {
        auto values = gen.assignment();
        int64_t expected = eval_int(e, values);
        ASSERT_EQ(eval_int(s, values), expected)
            << "seed " << seed << ": " << to_string(e) << "\n  simplified: " << to_string(s);
        ASSERT_TRUE(contains(eb, expected)) << "const_bound of " << to_string(e);
        ASSERT_TRUE(contains(sb, expected)) << "const_bound of " << to_string(s);
      }
    }
  }
  // The generator makes plenty of foldable expressions; most must come out smaller.
  EXPECT_GT(simplified_smaller, 1500);
}

TEST(SimplifyRandom, ProvenConditionsHoldEverywhere) {
  int proven = 0;
  for (uint64_t seed = 100; seed < 140; ++seed) {
    ExprGenerator gen(seed);
    for (int n = 0; n < 50; ++n) {
      Expr c = gen.condition(2);
      Expr s = simplify(c, gen.ranges());
      bool is_proven = can_prove(c, gen.ranges());
      proven += is_proven ? 1 : 0;
      for (int trial = 0; trial < 12; ++trial) {
        auto values = gen.assignment();
        int64_t truth = eval_int(c, values);
        ASSERT_EQ(eval_int(s, values), truth) << to_string(c) << " -> " << to_string(s);
        ASSERT_TRUE(!is_proven || truth == 1) << "proved " << to_string(c);
      }
    }
  }
  EXPECT_GT(proven, 20);
}

TEST(SimplifyRandom, SimplifiedVectorExpressionsStoreEqualLanes) {
  Buffer out("Out", DataType::int32(), {ExprGenerator::kLanes});
  LoweredFunc f;
  f.name = "f";
  f.params = {out};
  for (uint64_t seed = 300; seed < 330; ++seed) {
    ExprGenerator gen(seed);
    for (int n = 0; n < 30; ++n) {
      Expr e = gen.vector_expr(3);
      Expr s = simplify(e, gen.ranges());
      for (int trial = 0; trial < 6; ++trial) {
        auto values = gen.assignment();
        std::vector<int32_t> expected(ExprGenerator::kLanes);
        std::vector<int32_t> actual(ExprGenerator::kLanes);
        f.body = gen.store_with_lets(out, e, values);
        eval(f, {expected.data()});
        f.body = gen.store_with_lets(out, s, values);
        eval(f, {actual.data()});
        ASSERT_EQ(actual, expected) << to_string(e) << "\n  simplified: " << to_string(s);
      }
    }
  }
}

TEST(SimplifyRandom, SimplifyIsIdempotent) {
  int stable = 0;
  int total = 0;
  for (uint64_t seed = 200; seed < 230; ++seed) {
    ExprGenerator gen(seed);
    for (int n = 0; n < 40; ++n) {
      Expr once = simplify(gen.expr(3), gen.ranges());
      Expr twice = simplify(once, gen.ranges());
      stable += to_string(once) == to_string(twice) ? 1 : 0;
      ++total;
    }
  }
  EXPECT_EQ(stable, total);
}

}  // namespace
}  // namespace tensortune::ir

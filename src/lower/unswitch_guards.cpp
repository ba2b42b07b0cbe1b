// SPDX-License-Identifier: Apache-2.0
// Tile unswitching of split guards; see unswitch_guards.h. One walker both finds the full-tile
// predicates of the guards under a loop and, given one predicate, rewrites the guards it decides to
// `true`; because it recomputes predicates instead of matching nodes, it works on renamed copies.
#include "tensortune/lower/unswitch_guards.h"

#include "freshen.h"
#include "tensortune/ir/ir_equal.h"
#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/ir/simplify.h"

#include <algorithm>
#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tensortune::lower {
namespace {

/// `d < 0` is the comparison; nullopt for anything but an integer <, <=, >, >=.
std::optional<ir::Expr> negative_form(const ir::Expr& cmp) {
  auto scalar_int = [](const ir::Expr& a) {
    return a.type().is_int() && a.type().is_scalar();
  };
  if (const auto* op = cmp.as<ir::Lt>(); op != nullptr && scalar_int(op->a)) {
    return op->a - op->b;
  }
  if (const auto* op = cmp.as<ir::Le>(); op != nullptr && scalar_int(op->a)) {
    return op->a - op->b - ir::make_const(op->a.type(), int64_t{1});
  }
  if (const auto* op = cmp.as<ir::Gt>(); op != nullptr && scalar_int(op->a)) {
    return op->b - op->a;
  }
  if (const auto* op = cmp.as<ir::Ge>(); op != nullptr && scalar_int(op->a)) {
    return op->b - op->a - ir::make_const(op->a.type(), int64_t{1});
  }
  return std::nullopt;
}

/// Walks one loop body. Collect mode: gathers the distinct full-tile predicates of its guards.
/// Assume mode: replaces each guard comparison whose predicate equals `assumed` by true.
class GuardWalker : public ir::IRMutator {
 public:
  /// `outer`: the ranges of the loops around the body (the body's own loop included). With
  /// `assumed`, the walker rewrites the comparisons whose predicate it is, knowing that it `holds`
  /// (or not).
  explicit GuardWalker(const ir::VarRanges& outer,
                       std::optional<ir::Expr> assumed = std::nullopt,
                       bool holds = true)
      : outer_(outer), assumed_(std::move(assumed)), holds_(holds) {}

  const std::vector<ir::Expr>& predicates() const { return predicates_; }

 protected:
  using ir::IRMutator::visit;

  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    const int64_t* min = ir::as_const_int(op->min);
    const int64_t* extent = ir::as_const_int(op->extent);
    if (min != nullptr && extent != nullptr && *extent > 0) {
      ranges_[op->var.get()] = ir::ConstBound{*min, *min + *extent - 1};
    } else {
      unranged_.insert(op->var.get());
    }
    ++loops_;
    ir::Stmt out = ir::IRMutator::visit(op, s);
    --loops_;
    ranges_.erase(op->var.get());
    unranged_.erase(op->var.get());
    return out;
  }
  ir::Stmt visit(const ir::LetStmt* op, const ir::Stmt& s) override {
    unranged_.insert(op->var.get());
    ir::Stmt out = ir::IRMutator::visit(op, s);
    unranged_.erase(op->var.get());
    return out;
  }
  ir::Stmt visit(const ir::IfThenElse* op, const ir::Stmt& s) override {
    ir::Expr condition = rewrite(op->condition);
    ir::Stmt then_case = mutate(op->then_case);
    ir::Stmt else_case = op->else_case.defined() ? mutate(op->else_case) : op->else_case;
    if (condition.same_as(op->condition) && then_case.same_as(op->then_case) &&
        else_case.same_as(op->else_case)) {
      return s;
    }
    return ir::IfThenElse::make(condition, then_case, else_case);
  }

 private:
  ir::Expr rewrite(const ir::Expr& c) {
    if (const auto* op = c.as<ir::And>()) {
      ir::Expr a = rewrite(op->a);
      ir::Expr b = rewrite(op->b);
      return a.same_as(op->a) && b.same_as(op->b) ? c : ir::And::make(a, b);
    }
    bool invariant = false;
    std::optional<ir::Expr> p = predicate(c, &invariant);
    if (!p) {
      return c;
    }
    if (assumed_) {
      if (!ir::structural_equal(*p, *assumed_)) {
        return c;
      }
      // In the else copy the predicate is false: a comparison that does not depend on the inner
      // loops is then false as well (otherwise some iterations may still pass it).
      if (!holds_) {
        return invariant ? ir::make_const(c.type(), int64_t{0}) : c;
      }
      return ir::make_const(c.type(), int64_t{1});
    }
    for (const ir::Expr& q : predicates_) {
      if (ir::structural_equal(*p, q)) {
        return c;
      }
    }
    predicates_.push_back(*p);
    return c;
  }

  /// The comparison holds for every iteration of the loops around it inside the body iff the
  /// returned predicate (in variables defined outside the body) holds. nullopt when the comparison
  /// is not inside such a loop (then it is a per-iteration test, not a tile's) or has no bound. A
  /// comparison that does not use the inner loops' variables is hoisted out of them unchanged.
  std::optional<ir::Expr> predicate(const ir::Expr& cmp, bool* invariant) const {
    std::optional<ir::Expr> d = negative_form(cmp);
    if (!d) {
      return std::nullopt;
    }
    *invariant = true;
    ir::post_order_visit(*d, [&](const ir::Expr& node) {
      if (const auto* v = node.as<ir::VarNode>()) {
        *invariant = *invariant && ranges_.count(v) == 0;
      }
    });
    std::optional<ir::Expr> max = loops_ > 0 ? ir::max_over(*d, ranges_) : std::nullopt;
    if (!max) {
      return std::nullopt;
    }
    bool uses_inner = false;
    ir::post_order_visit(*max, [&](const ir::Expr& node) {
      if (const auto* v = node.as<ir::VarNode>()) {
        uses_inner = uses_inner || unranged_.count(v) != 0 || ranges_.count(v) != 0;
      }
    });
    if (uses_inner) {
      return std::nullopt;
    }
    // max < 0, written `x < c` rather than `(x - c) < 0` when max is `x - c`.
    ir::Expr rhs = ir::make_const(max->type(), int64_t{0});
    ir::Expr lhs = *max;
    if (const auto* sub = lhs.as<ir::Sub>();
        sub != nullptr && ir::as_const_int(sub->b) != nullptr) {
      rhs = sub->b;
      lhs = sub->a;
    }
    return ir::simplify(lhs < rhs, outer_);
  }

  const ir::VarRanges& outer_;
  std::optional<ir::Expr> assumed_;
  bool holds_;
  ir::VarRanges ranges_;
  std::unordered_set<const ir::VarNode*> unranged_;
  std::vector<ir::Expr> predicates_;
  int loops_ = 0;  // loops inside the body around the current node
};

bool uses_var(const ir::Expr& e, const ir::VarNode* v) {
  bool found = false;
  ir::post_order_visit(e, [&](const ir::Expr& node) { found = found || node.get() == v; });
  return found;
}

int64_t count_stmts(const ir::Stmt& s) {
  class Counter : public ir::IRVisitor {
   public:
    using ir::IRVisitor::visit;
    int64_t n = 0;

   protected:
    void visit(const ir::Store* op) override {
      ++n;
      ir::IRVisitor::visit(op);
    }
    void visit(const ir::For* op) override {
      ++n;
      ir::IRVisitor::visit(op);
    }
  } counter;
  counter.visit(s);
  return counter.n;
}

/// The constant `e` folds to with `var` set to `value`; nullopt when it does not fold.
std::optional<int64_t> value_at(const ir::Expr& e, const ir::VarNode* var, int64_t value) {
  ir::VarMap map;
  map[var] = ir::make_const(var->type, value);
  const ir::Expr folded = ir::simplify(ir::substitute(e, map));  // as_const_int points into it
  const int64_t* k = ir::as_const_int(folded);
  return k != nullptr ? std::optional<int64_t>(*k) : std::nullopt;
}

/// The one value of `var` in its range `r` for which `p` (a predicate in `var` only) is false,
/// or nullopt when there are none or several, `p` uses another variable, or the range is long.
/// In the else copy of `if (p)` the variable then is that constant: the boundary tile of a split
/// is usually the last tile alone, and with its offset known its guards become loop bounds.
std::optional<int64_t> sole_failing_value(const ir::Expr& p,
                                          const ir::VarNode* var,
                                          ir::ConstBound r) {
  constexpr int64_t kMaxValues = 256;
  bool other_vars = false;
  ir::post_order_visit(p, [&](const ir::Expr& node) {
    const auto* v = node.as<ir::VarNode>();
    other_vars = other_vars || (v != nullptr && v != var);
  });
  if (other_vars || r.max - r.min >= kMaxValues) {
    return std::nullopt;
  }
  std::optional<int64_t> failing;
  for (int64_t value = r.min; value <= r.max; ++value) {
    const std::optional<int64_t> holds = value_at(p, var, value);
    if (!holds || (*holds == 0 && failing)) {
      return std::nullopt;
    }
    if (*holds == 0) {
      failing = value;
    }
  }
  return failing;
}

/// Turns guards on a loop's own variable into its bound: `for (v, m, e) { if (a*v + b < 0 && c)
/// S }` with constants a > 0, b becomes `for (v, m, e') { if (c) S }`, e' = min(e, ceil(-b/a) - m)
/// (no loop when e' <= 0). A boundary tile whose offset is known (sole_failing_value) thus runs
/// exactly its live iterations: a vectorized loop of 32 lanes with one live lane becomes one
/// scalar iteration instead of 32 masked lanes, and its accumulators stay in registers.
class GuardsToBounds : public ir::IRMutator {
 protected:
  using ir::IRMutator::visit;

  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    ir::Stmt out = ir::IRMutator::visit(op, s);
    const auto* loop = out.as<ir::For>();
    const int64_t* min = ir::as_const_int(loop->min);
    const int64_t* extent = ir::as_const_int(loop->extent);
    const auto* guard = loop->body.as<ir::IfThenElse>();
    if (min == nullptr || extent == nullptr || guard == nullptr || guard->else_case.defined()) {
      return out;
    }
    int64_t end = *min + *extent;
    std::vector<ir::Expr> kept;
    std::vector<ir::Expr> conjuncts = {guard->condition};
    while (!conjuncts.empty()) {
      ir::Expr c = conjuncts.back();
      conjuncts.pop_back();
      if (const auto* a = c.as<ir::And>()) {
        conjuncts.push_back(a->a);
        conjuncts.push_back(a->b);
        continue;
      }
      std::optional<int64_t> bound = upper_bound(c, loop->var);
      if (bound) {
        end = std::min(end, *bound);
      } else {
        kept.push_back(c);
      }
    }
    if (end == *min + *extent) {
      return out;
    }
    if (end <= *min) {
      return ir::Evaluate::make(ir::make_const(ir::DataType::int32(), int64_t{0}));
    }
    ir::Stmt body = guard->then_case;
    if (!kept.empty()) {
      ir::Expr condition = kept.back();
      for (size_t i = kept.size() - 1; i-- > 0;) {
        condition = ir::And::make(kept[i], condition);
      }
      body = ir::IfThenElse::make(condition, body, ir::Stmt());
    }
    return ir::For::make(loop->var, loop->min, ir::make_const(loop->extent.type(), end - *min),
                         loop->for_kind, body, loop->auto_unroll_max_step);
  }

 private:
  /// `c` is `a*v + b < 0` with constants a > 0 and b: the exclusive upper bound ceil(-b/a) of v.
  static std::optional<int64_t> upper_bound(const ir::Expr& c, const ir::Var& v) {
    std::optional<ir::Expr> d = negative_form(c);
    if (!d) {
      return std::nullopt;
    }
    const std::optional<int64_t> b = value_at(*d, v.get(), 0);
    const std::optional<int64_t> ab = value_at(*d, v.get(), 1);
    if (!b || !ab || *ab <= *b) {
      return std::nullopt;
    }
    const int64_t a = *ab - *b;
    ir::Expr rest =
        ir::simplify(*d - (v * ir::make_const(v.type(), a) + ir::make_const(v.type(), *b)));
    const int64_t* zero = ir::as_const_int(rest);
    if (zero == nullptr || *zero != 0) {
      return std::nullopt;
    }
    // a*v + b < 0  <=>  v < -b/a  <=>  v < ceil(-b/a)
    const int64_t num = -*b;
    return num >= 0 ? (num + a - 1) / a : -((-num) / a);
  }
};

class Unswitcher : public ir::IRMutator {
 protected:
  using ir::IRMutator::visit;

  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    const int64_t* min = ir::as_const_int(op->min);
    const int64_t* extent = ir::as_const_int(op->extent);
    if (min != nullptr && extent != nullptr && *extent > 0) {
      outer_[op->var.get()] = ir::ConstBound{*min, *min + *extent - 1};
    }
    // A vectorized loop turns its guards into store predicates; splitting it would only stop it
    // from being vectorized.
    ir::Stmt body =
        op->for_kind == ir::ForKind::Vectorized ? op->body : unswitch(op->var.get(), op->body);
    body = mutate(body);
    outer_.erase(op->var.get());
    if (body.same_as(op->body)) {
      return s;
    }
    return ir::For::make(op->var, op->min, op->extent, op->for_kind, body,
                         op->auto_unroll_max_step);
  }

 private:
  /// The body of the loop over `var` with the guards this loop decides unswitched.
  ir::Stmt unswitch(const ir::VarNode* var, ir::Stmt body) const {
    GuardWalker collect(outer_);
    collect.mutate(body);
    int unswitched = 0;
    const int64_t stmts = count_stmts(body);
    for (const ir::Expr& p : collect.predicates()) {
      const int64_t* value = ir::as_const_int(p);
      if (value != nullptr) {
        if (*value != 0) {
          body = ir::simplify(GuardWalker(outer_, p).mutate(body));  // holds everywhere: drop it
        }
        continue;
      }
      // Decided by an outer loop (or by none): leave it to that loop.
      if (!uses_var(p, var) || unswitched == kMaxUnswitchPerLoop ||
          (stmts << unswitched) > kMaxUnswitchBodyStmts) {
        continue;
      }
      ir::Stmt full = GuardWalker(outer_, p).mutate(body);
      if (full.same_as(body)) {
        continue;
      }
      full = ir::simplify(full);  // `if (true)` must be gone before vectorize_loops sees it
      ir::Stmt partial = GuardWalker(outer_, p, false).mutate(body);
      const auto range = outer_.find(var);
      if (std::optional<int64_t> v =
              range == outer_.end() ? std::nullopt : sole_failing_value(p, var, range->second)) {
        ir::VarMap map;
        map[var] = ir::make_const(var->type, *v);
        partial = ir::substitute(partial, map);
      }
      partial = ir::simplify(partial);
      const auto* noop = partial.as<ir::Evaluate>();  // simplify's "nothing to do"
      const bool nothing_left = noop != nullptr && ir::as_const_int(noop->value) != nullptr;
      body = ir::IfThenElse::make(p, full, nothing_left ? ir::Stmt() : freshen(partial));
      ++unswitched;
    }
    return body;
  }

  ir::VarRanges outer_;
};

}  // namespace

ir::Stmt unswitch_guards(const ir::Stmt& s) {
  Unswitcher unswitcher;
  ir::Stmt out = unswitcher.mutate(s);
  ir::Stmt bounded = GuardsToBounds().mutate(out);
  return bounded.same_as(out) ? out : ir::simplify(bounded);
}

}  // namespace tensortune::lower

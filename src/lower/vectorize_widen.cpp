// SPDX-License-Identifier: Apache-2.0
// Widening: the loop variable becomes ramp(min, 1, lanes); whatever depends on it becomes a
// vector, the rest stays scalar and is broadcast where it meets a vector. Guards that depend on
// the variable become store and load predicates, and loads under a vector select are predicated
// by its condition, so no lane reads or writes what the scalar loop would not.
#include "vectorize_widen.h"

#include "tensortune/ir/ir_equal.h"
#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <utility>

namespace tensortune::lower {
namespace {

ir::Expr scalar_part(const ir::Expr& e) {
  if (e.type().is_scalar()) {
    return e;
  }
  if (const auto* b = e.as<ir::Broadcast>()) {
    return b->value;
  }
  return ir::Expr();
}

ir::Expr make_ramp(const ir::Expr& base, const ir::Expr& stride, int lanes) {
  ir::Expr s = ir::simplify(stride);
  if (ir::is_const_int(s, 0)) {
    return ir::Broadcast::make(base, lanes);
  }
  return ir::Ramp::make(base, s, lanes);
}

ir::Expr and_predicate(const ir::Expr& a, const ir::Expr& b) {
  if (!a.defined()) {
    return b;
  }
  return b.defined() ? (a && b) : a;
}

/// Appends the conjuncts of `c` (a && b && ...) to `out`.
void conjuncts(const ir::Expr& c, std::vector<ir::Expr>& out) {
  if (const auto* a = c.as<ir::And>()) {
    conjuncts(a->a, out);
    conjuncts(a->b, out);
  } else {
    out.push_back(c);
  }
}

/// Drops the clamps min(max(e, lo), hi) of a load's indices that the conditions `known` already
/// bound (e >= lo and e < hi + 1, or e <= hi): te::pad reads data[min(max(y - 1, 0), H - 1)] under
/// select(y - 1 >= 0 && y - 1 < H, ...), so the scalar loop never reads out of bounds; predicated
/// by the same condition, a vector load reads nothing in the lanes the clamp protected, and
/// without the clamp its index stays a ramp: a masked vector load instead of a gather.
class Unclamp : public ir::IRMutator {
 public:
  explicit Unclamp(const std::vector<ir::Expr>& known) : known_(known) {}

 protected:
  using ir::IRMutator::visit;
  ir::Expr visit(const ir::Min* op, const ir::Expr& e) override {
    const auto* inner = op->a.as<ir::Max>();
    const int64_t* hi = ir::as_const_int(op->b);
    const int64_t* lo = inner != nullptr ? ir::as_const_int(inner->b) : nullptr;
    if (lo != nullptr && hi != nullptr && bounded(inner->a, *lo, *hi)) {
      return mutate(inner->a);
    }
    return ir::IRMutator::visit(op, e);
  }

 private:
  bool bounded(const ir::Expr& x, int64_t lo, int64_t hi) const {
    bool above = false;
    bool below = false;
    for (const ir::Expr& c : known_) {
      if (const auto* ge = c.as<ir::Ge>()) {
        const int64_t* b = ir::as_const_int(ge->b);
        above = above || (b != nullptr && *b >= lo && ir::structural_equal(ge->a, x));
      } else if (const auto* lt = c.as<ir::Lt>()) {
        const int64_t* b = ir::as_const_int(lt->b);
        below = below || (b != nullptr && *b <= hi + 1 && ir::structural_equal(lt->a, x));
      } else if (const auto* le = c.as<ir::Le>()) {
        const int64_t* b = ir::as_const_int(le->b);
        below = below || (b != nullptr && *b <= hi && ir::structural_equal(le->a, x));
      }
    }
    return above && below;
  }
  const std::vector<ir::Expr>& known_;
};

class Widen : public ir::IRMutator {
 public:
  Widen(const ir::Var& var, ir::Expr min, int lanes, const ir::VarRanges& ranges)
      : var_(var), min_(std::move(min)), lanes_(lanes), ranges_(ranges) {}

  bool failed() const { return failed_; }

 protected:
  using ir::IRMutator::visit;

  ir::Expr visit(const ir::VarNode* op, const ir::Expr& e) override {
    return op == var_.get() ? ir::Ramp::make(min_, ir::make_const(min_.type(), int64_t{1}), lanes_)
                            : e;
  }
  ir::Expr visit(const ir::Add* op, const ir::Expr& e) override {
    return binary(op, e, [this](const ir::Expr& a, const ir::Expr& b) { return add(a, b); });
  }
  ir::Expr visit(const ir::Sub* op, const ir::Expr& e) override {
    return binary(op, e, [this](const ir::Expr& a, const ir::Expr& b) { return sub(a, b); });
  }
  ir::Expr visit(const ir::Mul* op, const ir::Expr& e) override {
    return binary(op, e, [this](const ir::Expr& a, const ir::Expr& b) { return mul(a, b); });
  }
  ir::Expr visit(const ir::Div* op, const ir::Expr& e) override {
    return binary(op, e, [](const ir::Expr& a, const ir::Expr& b) { return a / b; });
  }
  ir::Expr visit(const ir::Mod* op, const ir::Expr& e) override {
    return binary(op, e, [](const ir::Expr& a, const ir::Expr& b) { return a % b; });
  }
  ir::Expr visit(const ir::Min* op, const ir::Expr& e) override {
    return binary(op, e, [](const ir::Expr& a, const ir::Expr& b) { return ir::min(a, b); });
  }
  ir::Expr visit(const ir::Max* op, const ir::Expr& e) override {
    return binary(op, e, [](const ir::Expr& a, const ir::Expr& b) { return ir::max(a, b); });
  }
  ir::Expr visit(const ir::Eq* op, const ir::Expr& e) override {
    return binary(op, e, [](const ir::Expr& a, const ir::Expr& b) { return a == b; });
  }
  ir::Expr visit(const ir::Ne* op, const ir::Expr& e) override {
    return binary(op, e, [](const ir::Expr& a, const ir::Expr& b) { return a != b; });
  }
  ir::Expr visit(const ir::Lt* op, const ir::Expr& e) override {
    return binary(op, e, [](const ir::Expr& a, const ir::Expr& b) { return a < b; });
  }
  ir::Expr visit(const ir::Le* op, const ir::Expr& e) override {
    return binary(op, e, [](const ir::Expr& a, const ir::Expr& b) { return a <= b; });
  }
  ir::Expr visit(const ir::Gt* op, const ir::Expr& e) override {
    return binary(op, e, [](const ir::Expr& a, const ir::Expr& b) { return a > b; });
  }
  ir::Expr visit(const ir::Ge* op, const ir::Expr& e) override {
    return binary(op, e, [](const ir::Expr& a, const ir::Expr& b) { return a >= b; });
  }
  ir::Expr visit(const ir::And* op, const ir::Expr& e) override {
    return binary(op, e, [](const ir::Expr& a, const ir::Expr& b) { return a && b; });
  }
  ir::Expr visit(const ir::Or* op, const ir::Expr& e) override {
    return binary(op, e, [](const ir::Expr& a, const ir::Expr& b) { return a || b; });
  }
  ir::Expr visit(const ir::Not* op, const ir::Expr& e) override {
    ir::Expr a = mutate(op->a);
    return a.same_as(op->a) ? e : !a;
  }
  ir::Expr visit(const ir::Cast* op, const ir::Expr& e) override {
    ir::Expr v = mutate(op->value);
    return v.same_as(op->value) ? e : ir::Cast::make(op->type.with_lanes(v.type().lanes()), v);
  }
  ir::Expr visit(const ir::Call* op, const ir::Expr& e) override;
  ir::Expr visit(const ir::Select* op, const ir::Expr& e) override;
  ir::Expr visit(const ir::Load* op, const ir::Expr& e) override;
  ir::Expr visit(const ir::Ramp*, const ir::Expr& e) override { return fail(e); }
  ir::Expr visit(const ir::Broadcast*, const ir::Expr& e) override { return fail(e); }
  ir::Expr visit(const ir::Reduce*, const ir::Expr& e) override { return fail(e); }

  ir::Stmt visit(const ir::Store* op, const ir::Stmt& s) override;
  ir::Stmt visit(const ir::IfThenElse* op, const ir::Stmt& s) override;
  ir::Stmt visit(const ir::For*, const ir::Stmt& s) override { return fail(s); }
  ir::Stmt visit(const ir::Allocate*, const ir::Stmt& s) override { return fail(s); }
  ir::Stmt visit(const ir::LetStmt* op, const ir::Stmt& s) override {
    ir::Expr v = mutate(op->value);
    if (!v.same_as(op->value)) {
      return fail(s);
    }
    ir::Stmt body = mutate(op->body);
    return body.same_as(op->body) ? s : ir::LetStmt::make(op->var, op->value, body);
  }

 private:
  template <class T>
  ir::Expr fail(const T& node) {
    failed_ = true;
    return node;
  }
  ir::Stmt fail(const ir::Stmt& s) {
    failed_ = true;
    return s;
  }

  template <class Node, class F>
  ir::Expr binary(const Node* op, const ir::Expr& e, F f) {
    ir::Expr a = mutate(op->a);
    ir::Expr b = mutate(op->b);
    if (failed_ || (a.same_as(op->a) && b.same_as(op->b))) {
      return e;
    }
    return f(a, b);
  }

  ir::Expr add(const ir::Expr& a, const ir::Expr& b) const {
    const auto* ra = a.as<ir::Ramp>();
    const auto* rb = b.as<ir::Ramp>();
    if (ra != nullptr && rb != nullptr) {
      return make_ramp(ra->base + rb->base, ra->stride + rb->stride, lanes_);
    }
    if (ra != nullptr && scalar_part(b).defined()) {
      return make_ramp(ra->base + scalar_part(b), ra->stride, lanes_);
    }
    if (rb != nullptr && scalar_part(a).defined()) {
      return make_ramp(scalar_part(a) + rb->base, rb->stride, lanes_);
    }
    return a + b;
  }
  ir::Expr sub(const ir::Expr& a, const ir::Expr& b) const {
    const auto* ra = a.as<ir::Ramp>();
    const auto* rb = b.as<ir::Ramp>();
    if (ra != nullptr && rb != nullptr) {
      return make_ramp(ra->base - rb->base, ra->stride - rb->stride, lanes_);
    }
    if (ra != nullptr && scalar_part(b).defined()) {
      return make_ramp(ra->base - scalar_part(b), ra->stride, lanes_);
    }
    if (rb != nullptr && scalar_part(a).defined()) {
      return make_ramp(scalar_part(a) - rb->base,
                       ir::make_const(rb->stride.type(), int64_t{0}) - rb->stride, lanes_);
    }
    return a - b;
  }
  ir::Expr mul(const ir::Expr& a, const ir::Expr& b) const {
    const auto* ra = a.as<ir::Ramp>();
    const auto* rb = b.as<ir::Ramp>();
    if (ra != nullptr && rb == nullptr && scalar_part(b).defined()) {
      return make_ramp(ra->base * scalar_part(b), ra->stride * scalar_part(b), lanes_);
    }
    if (rb != nullptr && ra == nullptr && scalar_part(a).defined()) {
      return make_ramp(scalar_part(a) * rb->base, scalar_part(a) * rb->stride, lanes_);
    }
    return a * b;
  }

  bool lane0_on(const ir::Expr& cond) const;

  ir::Var var_;
  ir::Expr min_;
  int lanes_;
  const ir::VarRanges& ranges_;
  bool failed_ = false;
  ir::Expr predicate_;             // the lanes that run here; undefined = all
  std::vector<ir::Expr> known_;    // conjuncts of the vector conditions predicate_ holds, unwidened
  bool scalar_loads_safe_ = true;  // lane 0 provably runs here, so scalar loads are in bounds
};

ir::Expr Widen::visit(const ir::Call* op, const ir::Expr& e) {
  std::vector<ir::Expr> args;
  bool changed = false;
  for (const ir::Expr& a : op->args) {
    args.push_back(mutate(a));
    changed = changed || !args.back().same_as(a);
  }
  if (failed_ || !changed) {
    return e;
  }
  for (ir::Expr& a : args) {
    if (a.type().is_scalar()) {
      a = ir::Broadcast::make(a, lanes_);
    }
  }
  return ir::Call::make(op->op, std::move(args));
}

ir::Expr Widen::visit(const ir::Select* op, const ir::Expr& e) {
  ir::Expr c = mutate(op->condition);
  if (failed_) {
    return e;
  }
  ir::Expr t;
  ir::Expr f;
  if (c.type().is_scalar()) {
    t = mutate(op->true_value);
    f = mutate(op->false_value);
  } else {
    // Both arms run in every lane: each arm reads only in the lanes that choose it.
    const ir::Expr saved = predicate_;
    const bool saved_safe = scalar_loads_safe_;
    const size_t known = known_.size();
    predicate_ = and_predicate(saved, c);
    scalar_loads_safe_ = saved_safe && lane0_on(op->condition);
    conjuncts(op->condition, known_);
    t = mutate(op->true_value);
    known_.resize(known);
    predicate_ = and_predicate(saved, !c);
    scalar_loads_safe_ = saved_safe && lane0_on(!op->condition);
    f = mutate(op->false_value);
    predicate_ = saved;
    scalar_loads_safe_ = saved_safe;
  }
  if (failed_ ||
      (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))) {
    return e;
  }
  if (!c.type().is_scalar() || !t.type().is_scalar() || !f.type().is_scalar()) {
    t = t.type().is_scalar() ? ir::Broadcast::make(t, lanes_) : t;
    f = f.type().is_scalar() ? ir::Broadcast::make(f, lanes_) : f;
  }
  return ir::Select::make(c, t, f);
}

ir::Expr Widen::visit(const ir::Load* op, const ir::Expr& e) {
  std::vector<ir::Expr> indices;
  bool vector = false;
  for (const ir::Expr& i : op->indices) {
    // Under a vector condition the load is predicated by it (see Unclamp).
    indices.push_back(mutate(known_.empty() ? i : Unclamp(known_).mutate(i)));
    vector = vector || !indices.back().type().is_scalar();
  }
  ir::Expr pred = mutate(op->predicate);
  vector = vector || (pred.defined() && !pred.type().is_scalar());
  if (failed_) {
    return e;
  }
  if (!vector && (!predicate_.defined() || scalar_loads_safe_)) {
    bool same = pred.same_as(op->predicate);
    for (size_t d = 0; d < indices.size(); ++d) {
      same = same && indices[d].same_as(op->indices[d]);
    }
    return same ? e : ir::Load::make(op->buffer, std::move(indices), pred);
  }
  if (!vector) {
    // A scalar load where lane 0 may be off: read it only in the lanes that run.
    indices[0] = ir::Broadcast::make(indices[0], lanes_);
  }
  if (pred.defined() && pred.type().is_scalar()) {
    pred = ir::Broadcast::make(pred, lanes_);
  }
  return ir::Load::make(op->buffer, std::move(indices), and_predicate(pred, predicate_));
}

ir::Stmt Widen::visit(const ir::Store* op, const ir::Stmt& s) {
  std::vector<ir::Expr> indices;
  bool injective = false;
  for (const ir::Expr& i : op->indices) {
    indices.push_back(mutate(i));
    if (!failed_ && !indices.back().type().is_scalar() &&
        indices.back().as<ir::Ramp>() == nullptr) {
      // A fused and split index ((x*4 + lane) / 8, % 8) is a ramp once simplified with ranges.
      indices.back() = ir::simplify(indices.back(), ranges_);
    }
    if (const auto* ramp = indices.back().as<ir::Ramp>()) {
      const int64_t* stride = ir::as_const_int(ramp->stride);
      injective = injective || (stride != nullptr && *stride != 0);
    }
  }
  ir::Expr value = mutate(op->value);
  ir::Expr pred = mutate(op->predicate);
  if (failed_ || !injective) {
    // A store whose lanes may share an address (a reduction into one element) stays scalar.
    return fail(s);
  }
  if (value.type().is_scalar()) {
    value = ir::Broadcast::make(value, lanes_);
  }
  if (pred.defined() && pred.type().is_scalar()) {
    pred = ir::Broadcast::make(pred, lanes_);
  }
  return ir::Store::make(op->buffer, value, std::move(indices), and_predicate(pred, predicate_));
}

bool Widen::lane0_on(const ir::Expr& cond) const {
  ir::VarMap lane0{{var_.get(), min_}};
  return ir::can_prove(ir::substitute(cond, lane0), ranges_);
}

ir::Stmt Widen::visit(const ir::IfThenElse* op, const ir::Stmt& s) {
  ir::Expr c = mutate(op->condition);
  if (failed_) {
    return s;
  }
  if (c.type().is_scalar()) {
    ir::Stmt t = mutate(op->then_case);
    ir::Stmt f = mutate(op->else_case);
    return ir::IfThenElse::make(c, t, f);
  }
  const ir::Expr saved = predicate_;
  const bool saved_safe = scalar_loads_safe_;
  const size_t known = known_.size();
  predicate_ = and_predicate(saved, c);
  scalar_loads_safe_ = saved_safe && lane0_on(op->condition);
  conjuncts(op->condition, known_);
  ir::Stmt t = mutate(op->then_case);
  known_.resize(known);
  ir::Stmt f;
  if (op->else_case.defined()) {
    predicate_ = and_predicate(saved, !c);
    scalar_loads_safe_ = saved_safe && lane0_on(!op->condition);
    f = mutate(op->else_case);
  }
  predicate_ = saved;
  scalar_loads_safe_ = saved_safe;
  return f.defined() ? ir::Seq::make({t, f}) : t;
}

}  // namespace

ir::Stmt widen_loop_body(const ir::Var& var,
                         const ir::Expr& min,
                         int lanes,
                         const ir::Stmt& body,
                         const ir::VarRanges& ranges) {
  Widen widen(var, min, lanes, ranges);
  ir::Stmt out = widen.mutate(body);
  return widen.failed() ? ir::Stmt() : out;
}

}  // namespace tensortune::lower

// SPDX-License-Identifier: Apache-2.0
// Symbolic interval arithmetic over index expressions (after TVM's arith::IntSet and Halide's
// Bounds): relaxed variables span their range, other variables stay as symbols, so the region a
// compute_at stage must produce is a box with symbolic mins and constant extents.
#include "tensortune/lower/bound_inference.h"

#include "stage_domain.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <algorithm>

namespace tensortune::lower {
namespace {

/// [lo, hi]; both undefined when unbounded.
struct Interval {
  ir::Expr lo, hi;
  bool bounded() const { return lo.defined() && hi.defined(); }
};

bool uses_relaxed(const ir::Expr& e, const ir::VarRanges& relaxed) {
  bool found = false;
  ir::post_order_visit(e, [&](const ir::Expr& n) {
    if (const auto* v = n.as<ir::VarNode>()) {
      found = found || relaxed.count(v) != 0;
    }
  });
  return found;
}

bool both_const(const Interval& i) {
  return ir::as_const_int(i.lo) != nullptr && ir::as_const_int(i.hi) != nullptr;
}

Interval scale(const Interval& i, int64_t c) {
  ir::Expr k = index_const(c);
  return c >= 0 ? Interval{i.lo * k, i.hi * k} : Interval{i.hi * k, i.lo * k};
}

class IntervalOf {
 public:
  explicit IntervalOf(const ir::VarRanges& relaxed) : relaxed_(relaxed) {}

  Interval of(const ir::Expr& e) const {
    if (!e.type().is_int() || !e.type().is_scalar()) {
      return {};
    }
    if (!uses_relaxed(e, relaxed_)) {
      return {e, e};
    }
    if (const auto* v = e.as<ir::VarNode>()) {
      const ir::ConstBound& b = relaxed_.at(v);
      return {index_const(b.min), index_const(b.max)};
    }
    if (const auto* op = e.as<ir::Add>()) {
      return combine(op->a, op->b, [](const Interval& a, const Interval& b) {
        return Interval{a.lo + b.lo, a.hi + b.hi};
      });
    }
    if (const auto* op = e.as<ir::Sub>()) {
      return combine(op->a, op->b, [](const Interval& a, const Interval& b) {
        return Interval{a.lo - b.hi, a.hi - b.lo};
      });
    }
    if (const auto* op = e.as<ir::Min>()) {
      return combine(op->a, op->b, [](const Interval& a, const Interval& b) {
        return Interval{ir::min(a.lo, b.lo), ir::min(a.hi, b.hi)};
      });
    }
    if (const auto* op = e.as<ir::Max>()) {
      return combine(op->a, op->b, [](const Interval& a, const Interval& b) {
        return Interval{ir::max(a.lo, b.lo), ir::max(a.hi, b.hi)};
      });
    }
    if (const auto* op = e.as<ir::Select>()) {
      return combine(op->true_value, op->false_value, [](const Interval& a, const Interval& b) {
        return Interval{ir::min(a.lo, b.lo), ir::max(a.hi, b.hi)};
      });
    }
    if (const auto* op = e.as<ir::Mul>()) {
      return mul(op->a, op->b);
    }
    if (const auto* op = e.as<ir::Div>()) {
      return div(op->a, op->b);
    }
    if (const auto* op = e.as<ir::Mod>()) {
      return mod(op->a, op->b);
    }
    if (const auto* op = e.as<ir::Cast>()) {
      const ir::DataType from = op->value.type();
      if (from.is_int() && from.bits() <= e.type().bits()) {
        Interval i = of(op->value);
        return i.bounded() ? Interval{ir::cast(e.type(), i.lo), ir::cast(e.type(), i.hi)}
                           : Interval{};
      }
    }
    return {};
  }

 private:
  template <class F>
  Interval combine(const ir::Expr& a, const ir::Expr& b, F f) const {
    Interval ia = of(a);
    Interval ib = of(b);
    if (!ia.bounded() || !ib.bounded()) {
      return {};
    }
    return f(ia, ib);
  }

  Interval mul(const ir::Expr& a, const ir::Expr& b) const {
    Interval ia = of(a);
    Interval ib = of(b);
    if (!ia.bounded() || !ib.bounded()) {
      return {};
    }
    if (const int64_t* c = ir::as_const_int(b)) {
      return scale(ia, *c);
    }
    if (const int64_t* c = ir::as_const_int(a)) {
      return scale(ib, *c);
    }
    if (!both_const(ia) || !both_const(ib)) {
      return {};
    }
    int64_t corners[4] = {*ir::as_const_int(ia.lo) * *ir::as_const_int(ib.lo),
                          *ir::as_const_int(ia.lo) * *ir::as_const_int(ib.hi),
                          *ir::as_const_int(ia.hi) * *ir::as_const_int(ib.lo),
                          *ir::as_const_int(ia.hi) * *ir::as_const_int(ib.hi)};
    return {index_const(*std::min_element(corners, corners + 4)),
            index_const(*std::max_element(corners, corners + 4))};
  }

  Interval div(const ir::Expr& a, const ir::Expr& b) const {
    const int64_t* c = ir::as_const_int(b);
    Interval ia = of(a);
    if (c == nullptr || *c == 0 || !ia.bounded()) {
      return {};
    }
    ir::Expr k = index_const(*c);
    // Floor division is monotone in the numerator: non-decreasing for c > 0.
    return *c > 0 ? Interval{ia.lo / k, ia.hi / k} : Interval{ia.hi / k, ia.lo / k};
  }

  Interval mod(const ir::Expr& a, const ir::Expr& b) const {
    const int64_t* c = ir::as_const_int(b);
    if (c == nullptr || *c <= 0) {
      return {};
    }
    Interval ia = of(a);
    if (ia.bounded() && both_const(ia)) {
      int64_t lo = *ir::as_const_int(ia.lo);
      int64_t hi = *ir::as_const_int(ia.hi);
      auto floor_div = [](int64_t x, int64_t y) {
        return x / y - ((x % y != 0) && (x < 0));
      };
      if (floor_div(lo, *c) == floor_div(hi, *c)) {
        int64_t base = floor_div(lo, *c) * *c;
        return {index_const(lo - base), index_const(hi - base)};
      }
    }
    return {index_const(0), index_const(*c - 1)};
  }

  const ir::VarRanges& relaxed_;
};

std::vector<const ir::Load*> loads_of(const ir::Buffer& buffer,
                                      const std::vector<ir::Expr>& exprs) {
  std::vector<const ir::Load*> loads;
  for (const ir::Expr& e : exprs) {
    ir::post_order_visit(e, [&](const ir::Expr& n) {
      if (const auto* load = n.as<ir::Load>(); load != nullptr && load->buffer.same_as(buffer)) {
        loads.push_back(load);
      }
    });
  }
  return loads;
}

/// Union of intervals as (min, constant extent); false when no constant extent is found.
bool union_of(const std::vector<Interval>& intervals,
              const ir::VarRanges& known,
              ir::Expr* min,
              int64_t* extent) {
  const ir::Expr base = ir::simplify(intervals[0].lo, known);
  int64_t lo_off = 0;
  int64_t hi_off = 0;
  bool constant = true;
  for (size_t n = 0; n < intervals.size() && constant; ++n) {
    ir::Expr dl = ir::simplify(intervals[n].lo - base, known);
    ir::Expr dh = ir::simplify(intervals[n].hi - base, known);
    const int64_t* l = ir::as_const_int(dl);
    const int64_t* h = ir::as_const_int(dh);
    constant = l != nullptr && h != nullptr;
    if (constant) {
      lo_off = n == 0 ? *l : std::min(lo_off, *l);
      hi_off = n == 0 ? *h : std::max(hi_off, *h);
    }
  }
  if (constant) {
    *min = ir::simplify(base + index_const(lo_off), known);
    *extent = hi_off - lo_off + 1;
    return true;
  }
  ir::Expr lo = intervals[0].lo;
  ir::Expr hi = intervals[0].hi;
  for (size_t n = 1; n < intervals.size(); ++n) {
    lo = ir::min(lo, intervals[n].lo);
    hi = ir::max(hi, intervals[n].hi);
  }
  std::optional<ir::ConstBound> span = ir::const_bound(ir::simplify(hi - lo, known), known);
  if (!span) {
    return false;
  }
  *min = ir::simplify(lo, known);
  *extent = span->max + 1;
  return true;
}

}  // namespace

Region infer_region(const ir::Buffer& buffer,
                    const std::vector<ir::Expr>& exprs,
                    const ir::VarRanges& relaxed,
                    const ir::VarRanges& known) {
  Region region;
  std::vector<const ir::Load*> loads = loads_of(buffer, exprs);
  region.read = !loads.empty();
  if (!region.read) {
    return region;
  }
  IntervalOf interval(relaxed);
  const std::vector<int64_t>& shape = buffer.shape();
  for (size_t d = 0; d < shape.size(); ++d) {
    std::vector<Interval> intervals;
    for (const ir::Load* load : loads) {
      TT_CHECK(load->indices.size() == shape.size())
          << "bound inference: '" << buffer.name() << "' read with the wrong rank";
      intervals.push_back(interval.of(load->indices[d]));
      if (!intervals.back().bounded()) {
        region.unbounded_dim = static_cast<int>(d);
        return region;
      }
    }
    ir::Expr min;
    int64_t extent = 0;
    if (!union_of(intervals, known, &min, &extent)) {
      region.unbounded_dim = static_cast<int>(d);
      return region;
    }
    std::optional<ir::ConstBound> min_bound = ir::const_bound(min, known);
    if (!min_bound || min_bound->min < 0) {
      min = ir::simplify(ir::max(min, index_const(0)), known);
    }
    region.min.push_back(min);
    region.extent.push_back(std::max<int64_t>(1, std::min(extent, shape[d])));
  }
  return region;
}

}  // namespace tensortune::lower

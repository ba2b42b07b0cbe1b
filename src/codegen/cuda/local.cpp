// SPDX-License-Identifier: Apache-2.0
// Thread-private slices of local buffers. A local buffer allocated outside the threadIdx loops
// (e.g. an accumulator tile computed at a block loop) becomes one array per thread, of which each
// thread touches only the elements at offset c.x*threadIdx.x + c.y*threadIdx.y + c.z*threadIdx.z.
// When every access has that same thread part (and the bound loops start at 0), subtracting it
// maps each thread's elements one to one onto a much smaller array, often a single register.
// What is left may still have holes where the other threads' elements were: a layout
// [v][threads][inner] leaves v * threads * inner + i, which becomes v * inner + i (each thread
// index's span squeezed out, outermost first); then, when every index left is a multiple of one
// stride (interleaved tiles: v * T + thread), it is divided by it, so the slice is dense. A
// vector access (a ramp of constant stride, e.g. a float4 of the accumulator stored to global
// memory) counts as its first and last lanes, and its stride bounds the divisor, so its lanes stay
// evenly spaced in the slice.
#include "codegen/cuda/internal.h"
#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/linear.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <unordered_map>

namespace tensortune::codegen::cuda {
namespace {

/// A thread index's place in a local buffer's index: coefficient `stride`, `extent` threads.
struct ThreadSpan {
  int64_t stride = 1;
  int64_t extent = 1;
};

/// What the accesses of one local buffer allow so far.
struct LocalUse {
  bool ok = true;
  bool seen = false;
  std::map<ir::ForKind, int64_t> thread_part;  // coefficient per threadIdx dimension
  std::vector<ThreadSpan> squeezed;            // thread spans removed from the index, in order
  int64_t size = 0;                            // elements the reduced index needs
  int64_t stride = 0;       // gcd of the reduced indices' terms (0: all of them are 0)
  int64_t ramp_stride = 0;  // gcd of the vector accesses' lane strides (0: none)
  /// Each access's index without its thread part, with the loop ranges around it.
  std::vector<std::pair<ir::Expr, ir::VarRanges>> rests;
};

/// `e` / `d` where `d` divides every coefficient and the constant of `e`'s linear form (exact, no
/// division left).
ir::Expr divide_exactly(const ir::Expr& e, int64_t d) {
  ir::LinearForm lf = ir::linear_form(e);
  TT_CHECK(ir::common_divisor(lf) % d == 0) << "divide_exactly: not a sum of multiples of " << d;
  lf.constant /= d;
  for (auto& term : lf.terms) {
    term.second /= d;
  }
  return ir::from_linear_form(std::move(lf));
}

/// An index left without its thread part is `low + high * span.stride * span.extent` where the
/// thread's own place was `thread * span.stride`: a layout [high][threads][low]. Each thread
/// keeps `low + high * span.stride`, one to one, when `low` stays in [0, span.stride) (checked
/// over `ranges` when given). Interleaved accumulators (v * threads + thread) become dense this
/// way. Nothing when the index has no such form.
std::optional<ir::Expr> squeeze_thread_span(const ir::Expr& rest,
                                            const ThreadSpan& span,
                                            const ir::VarRanges* ranges) {
  const int64_t period = span.stride * span.extent;
  const ir::LinearForm lf = ir::linear_form(rest);
  int64_t q = lf.constant / period;
  if (lf.constant % period < 0) {
    --q;
  }
  ir::Expr high = ir::make_const(rest.type(), q * span.stride);
  ir::Expr low = ir::make_const(rest.type(), lf.constant - q * period);
  for (const auto& [term, coeff] : lf.terms) {
    if (coeff % period == 0) {
      high = high + term * ir::make_const(rest.type(), coeff / span.extent);
    } else {
      low = low + term * ir::make_const(rest.type(), coeff);
    }
  }
  if (ranges != nullptr) {
    const std::optional<ir::ConstBound> bound =
        ir::const_bound(ir::simplify(low, *ranges), *ranges);
    if (!bound || bound->min < 0 || bound->max >= span.stride) {
      return std::nullopt;
    }
  }
  return ir::simplify(high + low);
}

class Analysis : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;

  std::map<const ir::BufferNode*, LocalUse> uses;
  /// Every thread-bound loop variable -> 0 (the substitution that removes the thread part).
  ir::VarMap zero;

 protected:
  void visit(const ir::For* op) override {
    bool thread = ir::is_thread_kind(op->for_kind);
    if (thread) {
      thread_vars_[op->var.get()] = op->for_kind;
      zero[op->var.get()] = ir::make_const(op->var.type(), int64_t{0});
      const int64_t* threads = ir::as_const_int(op->extent);
      int64_t& largest = thread_extents_[op->for_kind];
      largest = threads != nullptr && largest >= 0 ? std::max(largest, *threads) : -1;
      if (!ir::is_const_int(op->min, 0)) {
        offset_vars_.insert(op->var.get());
      }
    }
    const int64_t* min = ir::as_const_int(op->min);
    const int64_t* extent = ir::as_const_int(op->extent);
    if (min != nullptr && extent != nullptr && *extent >= 1) {
      ranges_[op->var.get()] = ir::ConstBound{*min, *min + *extent - 1};
    }
    thread_depth_ += thread ? 1 : 0;
    ir::IRVisitor::visit(op);
    thread_depth_ -= thread ? 1 : 0;
    ranges_.erase(op->var.get());
  }
  void visit(const ir::LetStmt* op) override {
    std::optional<ir::ConstBound> bound = ir::const_bound(op->value, ranges_);
    if (bound.has_value()) {
      ranges_[op->var.get()] = *bound;
    }
    ir::IRVisitor::visit(op);
    ranges_.erase(op->var.get());
  }
  void visit(const ir::Allocate* op) override {
    if (op->buffer.scope() == ir::MemoryScope::Local && thread_depth_ == 0) {
      uses[op->buffer.get()] = LocalUse();
    }
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Load* op) override {
    access(op->buffer, op->indices);
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    access(op->buffer, op->indices);
    ir::IRVisitor::visit(op);
  }

 private:
  void access(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices) {
    auto it = uses.find(buffer.get());
    if (it == uses.end() || !it->second.ok) {
      return;
    }
    LocalUse& use = it->second;
    if (indices.size() != 1) {
      use.ok = false;
      return;
    }
    ir::Expr index = indices[0];
    ir::Expr last_lane;  // a ramp's last lane, beside its base
    if (const auto* ramp = index.as<ir::Ramp>()) {
      const int64_t* stride = ir::as_const_int(ramp->stride);
      if (stride == nullptr || *stride <= 0) {
        use.ok = false;
        return;
      }
      use.ramp_stride = std::gcd(use.ramp_stride, *stride);
      index = ramp->base;
      last_lane = ramp->base + ir::make_const(ramp->base.type(), *stride * (ramp->lanes - 1));
    }
    std::map<ir::ForKind, int64_t> part;
    use.ok = index.type().is_scalar() && split(index, &part);
    for (auto p = part.begin(); p != part.end();) {
      p = p->second == 0 ? part.erase(p) : std::next(p);
    }
    use.ok = use.ok && (!use.seen || part == use.thread_part);
    if (!use.ok) {
      return;
    }
    use.seen = true;
    use.thread_part = part;
    // Simplified as Shrink::reduced does, so the stride found here divides what it divides.
    for (const ir::Expr& e : {index, last_lane}) {
      if (!e.defined()) {
        continue;
      }
      ir::Expr rest = ir::simplify(ir::substitute(e, zero));
      use.ok = use.ok && ir::const_bound(rest, ranges_).has_value();
      use.rests.emplace_back(rest, ranges_);
    }
  }

 public:
  /// After the walk: the size of each usable buffer's slice, its indices divided by the stride.
  void finish() {
    for (auto& [node, use] : uses) {
      if (!use.ok || !use.seen) {
        continue;
      }
      squeeze(use);
      use.stride = use.ramp_stride;
      for (const auto& [rest, ranges] : use.rests) {
        use.stride = std::gcd(use.stride, ir::common_divisor(ir::linear_form(rest)));
      }
      use.stride = use.stride == 0 ? 1 : use.stride;
      for (const auto& [rest, ranges] : use.rests) {
        std::optional<ir::ConstBound> bound =
            ir::const_bound(ir::simplify(divide_exactly(rest, use.stride), ranges), ranges);
        use.ok = use.ok && bound.has_value() && bound->min >= 0;
        use.size = use.ok ? std::max(use.size, bound->max + 1) : use.size;
      }
    }
  }

 private:
  /// Adds the thread part of `e` to `part`; false when a thread index appears in `e` other than
  /// as a term of a sum with a constant coefficient, or is offset.
  bool split(const ir::Expr& e, std::map<ir::ForKind, int64_t>* part) const {
    for (const auto& [atom, coeff] : ir::linear_form(e).terms) {
      if (const auto* v = atom.as<ir::VarNode>()) {
        auto it = thread_vars_.find(v);
        if (it != thread_vars_.end()) {
          (*part)[it->second] += coeff;
          if (offset_vars_.count(v) != 0) {
            return false;
          }
        }
        continue;
      }
      bool mentions = false;
      ir::post_order_visit(atom, [&](const ir::Expr& x) {
        const auto* v = x.as<ir::VarNode>();
        mentions = mentions || (v != nullptr && thread_vars_.count(v) != 0);
      });
      if (mentions) {
        return false;
      }
    }
    return true;
  }

  /// Removes each thread index's span from the indices left, outermost span first.
  void squeeze(LocalUse& use) const {
    std::vector<ThreadSpan> spans;
    for (const auto& [kind, stride] : use.thread_part) {
      const auto threads = thread_extents_.find(kind);
      if (stride > 0 && threads != thread_extents_.end() && threads->second > 1) {
        spans.push_back(ThreadSpan{stride, threads->second});
      }
    }
    std::sort(spans.begin(), spans.end(),
              [](const ThreadSpan& a, const ThreadSpan& b) { return a.stride > b.stride; });
    for (const ThreadSpan& span : spans) {
      std::vector<std::pair<ir::Expr, ir::VarRanges>> squeezed;
      for (const auto& [rest, ranges] : use.rests) {
        std::optional<ir::Expr> e = squeeze_thread_span(rest, span, &ranges);
        if (!e) {
          break;
        }
        squeezed.emplace_back(*e, ranges);
      }
      if (squeezed.size() == use.rests.size()) {
        use.rests = std::move(squeezed);
        use.squeezed.push_back(span);
      }
    }
  }

  std::unordered_map<const ir::VarNode*, ir::ForKind> thread_vars_;
  std::map<ir::ForKind, int64_t> thread_extents_;  // the largest loop per index; -1: unknown
  std::set<const ir::VarNode*> offset_vars_;
  ir::VarRanges ranges_;
  int thread_depth_ = 0;
};

class Shrink : public ir::IRMutator {
 public:
  struct Replacement {
    ir::Buffer buffer;
    std::vector<ThreadSpan> squeezed;
    int64_t stride = 1;
  };
  Shrink(std::map<const ir::BufferNode*, Replacement> replacements, ir::VarMap zero)
      : replacements_(std::move(replacements)), zero_(std::move(zero)) {}

 protected:
  using ir::IRMutator::visit;

  ir::Expr visit(const ir::Load* op, const ir::Expr& e) override {
    auto it = replacements_.find(op->buffer.get());
    if (it == replacements_.end()) {
      return ir::IRMutator::visit(op, e);
    }
    return ir::Load::make(it->second.buffer, {reduced_index(op->indices[0], it->second)},
                          mutate(op->predicate));
  }
  ir::Stmt visit(const ir::Store* op, const ir::Stmt& s) override {
    auto it = replacements_.find(op->buffer.get());
    if (it == replacements_.end()) {
      return ir::IRMutator::visit(op, s);
    }
    return ir::Store::make(it->second.buffer, mutate(op->value),
                           {reduced_index(op->indices[0], it->second)}, mutate(op->predicate));
  }
  ir::Stmt visit(const ir::Allocate* op, const ir::Stmt& s) override {
    auto it = replacements_.find(op->buffer.get());
    if (it == replacements_.end()) {
      return ir::IRMutator::visit(op, s);
    }
    return ir::Allocate::make(it->second.buffer, mutate(op->body));
  }

 private:
  /// A scalar index reduced, or a ramp with its base reduced and its stride divided.
  ir::Expr reduced_index(const ir::Expr& index, const Replacement& r) {
    if (const auto* ramp = index.as<ir::Ramp>()) {
      const int64_t stride = *ir::as_const_int(ramp->stride);  // checked by the analysis
      return ir::Ramp::make(reduced(ramp->base, r),
                            ir::make_const(ramp->stride.type(), stride / r.stride), ramp->lanes);
    }
    return reduced(index, r);
  }
  ir::Expr reduced(const ir::Expr& index, const Replacement& r) {
    ir::Expr rest = ir::simplify(ir::substitute(index, zero_));
    for (const ThreadSpan& span : r.squeezed) {
      std::optional<ir::Expr> e = squeeze_thread_span(rest, span, nullptr);
      TT_CHECK(e.has_value()) << "shrink_local_buffers: an index lost its checked form";
      rest = *e;
    }
    return mutate(ir::simplify(divide_exactly(rest, r.stride)));
  }

  std::map<const ir::BufferNode*, Replacement> replacements_;
  ir::VarMap zero_;
};

}  // namespace

ir::Stmt shrink_local_buffers(const ir::Stmt& kernel) {
  Analysis analysis;
  analysis.visit(kernel);
  analysis.finish();
  std::map<const ir::BufferNode*, Shrink::Replacement> replacements;
  for (const auto& [node, use] : analysis.uses) {
    int64_t elements = 1;
    for (int64_t d : node->shape) {
      elements *= d;
    }
    if (use.ok && use.seen && !use.thread_part.empty() && use.size < elements) {
      replacements.emplace(
          node, Shrink::Replacement{ir::Buffer(node->name, node->dtype, {use.size}, node->scope),
                                    use.squeezed, use.stride});
    }
  }
  if (replacements.empty()) {
    return kernel;
  }
  Shrink shrink(std::move(replacements), analysis.zero);
  return shrink.mutate(kernel);
}

}  // namespace tensortune::codegen::cuda

// SPDX-License-Identifier: Apache-2.0
// Cross-thread reductions (TVM's allreduce, done in the printer) of the loops
// plan_cross_thread_reductions found: each thread accumulates its iterations into a private
// partial initialised to op's identity; the block's threads along x then combine their partials
// (warp shuffles, plus one shared slot per warp when x spans several warps; a shared-memory tree
// when x is neither a power of two up to 32 nor a multiple of 32); every thread receives the
// same total; and B[idx] = B[idx] op total is stored once (by every thread when B is a
// thread-private local buffer).
#include "codegen/cuda/internal.h"
#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <cstdio>

namespace tensortune::codegen::cuda {
namespace {

/// The loop body with every update of the reduced element redirected to the partial.
class ToPartial : public ir::IRMutator {
 public:
  ToPartial(const CrossThreadReduction& r, ir::Buffer partial)
      : r_(r), partial_(std::move(partial)) {}

 protected:
  using ir::IRMutator::visit;

  ir::Expr visit(const ir::Load* op, const ir::Expr& e) override {
    if (op->buffer.same_as(r_.buffer)) {
      return ir::Load::make(partial_, {zero()});
    }
    return ir::IRMutator::visit(op, e);
  }
  ir::Stmt visit(const ir::Store* op, const ir::Stmt& s) override {
    if (op->buffer.same_as(r_.buffer)) {
      return ir::Store::make(partial_, mutate(op->value), {zero()});
    }
    return ir::IRMutator::visit(op, s);
  }

 private:
  static ir::Expr zero() { return ir::IntImm::make(ir::DataType::index(), 0); }

  const CrossThreadReduction& r_;
  ir::Buffer partial_;
};

bool shufflable(ir::DataType t) {
  return t.is_scalar() && (t.is_float() || ((t.is_int() || t.is_uint()) && t.bits() >= 32));
}

std::string hex_mask(int64_t threads) {
  if (threads >= 32) {
    return "0xffffffffu";
  }
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%xu", static_cast<unsigned>((uint64_t{1} << threads) - 1));
  return buf;
}

}  // namespace

std::string KernelPrinter::combine(ir::ReduceKind kind,
                                   const std::string& a,
                                   const std::string& b,
                                   const std::string& type) {
  switch (kind) {
    case ir::ReduceKind::Sum:
      return "(" + a + " + " + b + ")";
    case ir::ReduceKind::Prod:
      return "(" + a + " * " + b + ")";
    case ir::ReduceKind::Maximum:
      ctx_.helpers->max = true;
      return "tt_max<" + type + ">(" + a + ", " + b + ")";
    case ir::ReduceKind::Minimum:
      ctx_.helpers->min = true;
      return "tt_min<" + type + ">(" + a + ", " + b + ")";
  }
  return "";
}

void KernelPrinter::cross_thread_reduction(const ir::For* op, bool sole_in_scope) {
  const CrossThreadReduction r = cross_thread_update(op);
  const ir::DataType dtype = r.buffer.dtype();
  const std::string type = c_type(dtype, "buffer '" + r.buffer.name() + "'");
  const ir::Buffer partial(r.buffer.name() + "_rf", dtype, {1}, ir::MemoryScope::Local);
  const std::string acc = names_.get(partial.get(), partial.name()) + "[0]";
  if (!sole_in_scope) {
    open("");
  }
  line(type + " " + names_.get(partial.get(), partial.name()) + "[1];");
  line(acc + " = " + expr(ir::reduce_identity(r.reducer, dtype)) + ";");

  // This thread's iterations; threads beyond the loop's extent keep the identity.
  const int64_t extent = *ir::as_const_int(op->extent);
  open(extent < ctx_.block[0] ? "if (threadIdx.x < " + std::to_string(extent) + ")" : "");
  const std::string value = ir::is_const_int(op->min, 0) ? std::string("threadIdx.x")
                                                         : "(threadIdx.x + " + expr(op->min) + ")";
  line("const " + c_type(op->var.type(), "loop '" + op->var.name() + "'") + " " +
       names_.get(op->var.get(), op->var.name()) + " = " + value + ";");
  enter_range(op->var, op->min, op->extent);
  const auto x = static_cast<size_t>(ir::ForKind::ThreadX);
  ++bound_[x];
  ++thread_depth_;
  stmt(ToPartial(r, partial).mutate(op->body), true);
  --thread_depth_;
  --bound_[x];
  ranges_.erase(op->var.get());
  close();

  // A local buffer is a copy per thread: each stores the total, so each needs it.
  combine_across_threads(r.reducer, acc, dtype, type, r.buffer.scope() == ir::MemoryScope::Local);

  // The total into the element: once, or by every thread into its own copy of a local buffer.
  const ir::Expr total = ir::Load::make(partial, {ir::IntImm::make(ir::DataType::index(), 0)});
  const ir::Stmt update = ir::Store::make(
      r.buffer, ir::reduce_combine(r.reducer, ir::Load::make(r.buffer, {r.index}), total),
      {r.index});
  store(update.as<ir::Store>());
  if (!sole_in_scope) {
    close();
  }
}

// Every thread of the block runs this; afterwards `acc` holds the row's total (the threads that
// share threadIdx.y and threadIdx.z) in its thread x = 0, and in all of them when `everywhere`.
void KernelPrinter::combine_across_threads(ir::ReduceKind kind,
                                           const std::string& acc,
                                           ir::DataType dtype,
                                           const std::string& type,
                                           bool everywhere) {
  const int64_t width = ctx_.block[0];
  const int64_t rows = ctx_.block[1] * ctx_.block[2];
  const int64_t threads = width * rows;
  const bool power_of_two = (width & (width - 1)) == 0;
  std::string row = ctx_.block[1] > 1 ? "threadIdx.y" : "";
  if (ctx_.block[2] > 1) {
    const std::string z = "threadIdx.z * " + std::to_string(ctx_.block[1]) + "u";
    row = row.empty() ? z : "(" + row + " + " + z + ")";
  }
  auto shared_array = [&](int64_t elements) {
    std::string name = "tt_red" + std::to_string(shared_.size());
    shared_.push_back(
        SharedArray{type, name, elements, (elements * dtype.bytes() + 15) / 16 * 16, false});
    shared_bytes_ += shared_.back().bytes;
    return name;
  };
  auto slot = [&](const std::string& name, int64_t per_row, const std::string& offset) {
    std::string base = row.empty() ? "" : row + " * " + std::to_string(per_row) + "u + ";
    return name + "[" + base + offset + "]";
  };
  auto shuffle_down = [&](int64_t segment, const std::string& mask) {
    for (int64_t offset = segment / 2; offset >= 1; offset /= 2) {
      line(acc + " = " +
           combine(kind, acc,
                   "__shfl_down_sync(" + mask + ", " + acc + ", " + std::to_string(offset) + ", " +
                       std::to_string(segment) + ")",
                   type) +
           ";");
    }
  };
  if (shufflable(dtype) && power_of_two && width <= 32 && (threads <= 32 || threads % 32 == 0)) {
    // Each row is a segment of one warp: shuffle down to its first lane (and broadcast).
    const std::string mask = hex_mask(threads);
    shuffle_down(width, mask);
    if (everywhere) {
      line(acc + " = __shfl_sync(" + mask + ", " + acc + ", 0, " + std::to_string(width) + ");");
    }
    return;
  }
  if (shufflable(dtype) && width % 32 == 0) {
    // Whole warps per row: reduce each warp, then every thread combines the row's warp totals.
    const int64_t warps = width / 32;
    const std::string red = shared_array(rows * warps);
    shuffle_down(32, "0xffffffffu");
    open("if ((threadIdx.x % 32u) == 0u)");
    line(slot(red, warps, "threadIdx.x / 32u") + " = " + acc + ";");
    close();
    line("__syncthreads();");
    line(acc + " = " + slot(red, warps, "0u") + ";");
    line("#pragma unroll");
    open("for (unsigned tt_w = 1u; tt_w < " + std::to_string(warps) + "u; ++tt_w)");
    line(acc + " = " + combine(kind, acc, slot(red, warps, "tt_w"), type) + ";");
    close();
    line("__syncthreads();");  // the slots are free for the next reduction
    return;
  }
  // A tree over shared memory: halve the live range of each row until its first slot is left.
  const std::string red = shared_array(threads);
  int64_t half = 1;
  while (half * 2 < width) {
    half *= 2;
  }
  const std::string mine = slot(red, width, "threadIdx.x");
  line(mine + " = " + acc + ";");
  line("__syncthreads();");
  line("#pragma unroll");
  open("for (unsigned tt_s = " + std::to_string(half) + "u; tt_s > 0u; tt_s >>= 1)");
  open("if (threadIdx.x < tt_s && threadIdx.x + tt_s < " + std::to_string(width) + "u)");
  line(mine + " = " + combine(kind, mine, slot(red, width, "threadIdx.x + tt_s"), type) + ";");
  close();
  line("__syncthreads();");
  close();
  line(acc + " = " + slot(red, width, "0u") + ";");
  line("__syncthreads();");  // the slots are free for the next reduction
}

}  // namespace tensortune::codegen::cuda

// SPDX-License-Identifier: Apache-2.0
// Candidates for the measurer's tests: a small matmul lowered with real schedules, and
// hand-built kernels with the same parameters that crash, spin, exhaust memory, compute wrong
// values, leave elements unwritten or fail to compile.
#pragma once

#include "tensortune/ir/ops.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/te/operators.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::measure::testing {

inline te::Workload matmul_workload(int n) {
  return te::make_workload("matmul:M=" + std::to_string(n) + ",N=" + std::to_string(n) +
                           ",K=" + std::to_string(n));
}

inline ir::LoweredFunc lower_steps(const te::Workload& w, std::vector<schedule::Step> steps) {
  return lower::lower(w, schedule::Schedule{w.key(), std::move(steps)}, target::Target());
}

/// The default schedule of `w` (the reference's kernel).
inline ir::LoweredFunc default_kernel(const te::Workload& w) {
  return lower_steps(w, {});
}

/// A tiled matmul: tile (i, j) by (ti, tj), parallel outer rows, vectorized inner columns.
inline ir::LoweredFunc tiled_matmul(const te::Workload& w, int64_t ti, int64_t tj) {
  using namespace schedule;  // NOLINT(google-build-using-namespace)
  return lower_steps(w, {Tile{"C", "i", "j", ti, tj},
                         Reorder{"C", {"i.o", "j.o", "k", "i.i", "j.i"}},
                         Annotate{"C", "i.o", ir::ForKind::Parallel},
                         Annotate{"C", "j.i", ir::ForKind::Vectorized}});
}

/// A kernel with the parameters of `base` and the flattened body `body`.
inline ir::LoweredFunc with_body(const ir::LoweredFunc& base, ir::Stmt body) {
  ir::LoweredFunc f = base;
  f.body = std::move(body);
  return f;
}

inline const ir::Buffer& output_of(const ir::LoweredFunc& f) {
  return f.params.back();
}

inline ir::Stmt store1(const ir::Buffer& b, ir::Expr value, ir::Expr index) {
  return ir::Store::make(b, std::move(value), {std::move(index)});
}

inline ir::Expr load1(const ir::Buffer& b, ir::Expr index) {
  return ir::Load::make(b, {std::move(index)});
}

/// Writes 1.0 every 4 MiB upwards from the output until it leaves mapped memory.
inline ir::LoweredFunc segfault_kernel(const ir::LoweredFunc& base) {
  ir::Var i("i");
  return with_body(base, ir::For::make(i, 0, 2000, ir::ForKind::Serial,
                                       store1(output_of(base), ir::Expr(1.0f),
                                              ir::Expr(i) * ir::Expr(1 << 20))));
}

/// Adds 1 to C[0] about 2^62 times (float adds cannot be folded without fast-math).
inline ir::LoweredFunc spinning_kernel(const ir::LoweredFunc& base) {
  ir::Var a("a");
  ir::Var b("b");
  const ir::Buffer& c = output_of(base);
  ir::Stmt add = store1(c, load1(c, 0) + ir::Expr(1.0f), 0);
  ir::Stmt inner = ir::For::make(b, 0, INT32_MAX, ir::ForKind::Serial, add);
  return with_body(base, ir::For::make(a, 0, INT32_MAX, ir::ForKind::Serial, inner));
}

/// Allocates a 16 GiB scratch buffer (tt_alloc aborts when the worker's memory limit refuses).
inline ir::LoweredFunc runaway_allocation_kernel(const ir::LoweredFunc& base) {
  ir::Buffer scratch("scratch", ir::DataType::float32(), {int64_t{1} << 32});
  ir::Var i("i");
  const ir::Buffer& c = output_of(base);
  ir::Stmt fill = ir::For::make(i, 0, 1 << 20, ir::ForKind::Serial,
                                store1(scratch, ir::Expr(2.0f), ir::Expr(i) * ir::Expr(1024)));
  return with_body(base, ir::Allocate::make(
                             scratch, ir::Seq::make({fill, store1(c, load1(scratch, 1024), 0)})));
}

/// Writes 0.5 into every element of the output.
inline ir::LoweredFunc wrong_values_kernel(const ir::LoweredFunc& base) {
  const ir::Buffer& c = output_of(base);
  ir::Var i("i");
  return with_body(base, ir::For::make(i, 0, static_cast<int32_t>(c.num_elements()),
                                       ir::ForKind::Serial, store1(c, ir::Expr(0.5f), i)));
}

/// A hand-written matmul (C = A B, all n x n) that skips the last row of C.
inline ir::LoweredFunc unwritten_row_kernel(const ir::LoweredFunc& base, int n) {
  const ir::Buffer& a = base.params[0];
  const ir::Buffer& b = base.params[1];
  const ir::Buffer& c = output_of(base);
  ir::Var i("i");
  ir::Var j("j");
  ir::Var k("k");
  ir::Expr ij = ir::Expr(i) * n + j;
  ir::Stmt init = store1(c, ir::Expr(0.0f), ij);
  ir::Stmt update = store1(c, load1(c, ij) + load1(a, ir::Expr(i) * n + k) * load1(b, ir::Expr(k) * n + j), ij);
  ir::Stmt row = ir::For::make(
      j, 0, n, ir::ForKind::Serial,
      ir::Seq::make({init, ir::For::make(k, 0, n, ir::ForKind::Serial, update)}));
  return with_body(base, ir::For::make(i, 0, n - 1, ir::ForKind::Serial, row));
}

/// A kernel LLVM code generation rejects: its name is not a C identifier.
inline ir::LoweredFunc compile_error_kernel(const ir::LoweredFunc& base) {
  ir::LoweredFunc f = base;
  f.name = "not a C identifier";
  return f;
}

}  // namespace tensortune::measure::testing

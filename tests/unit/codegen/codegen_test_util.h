// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the codegen tests: hand-made flattened LoweredFuncs, buffers of test data,
// and a call through the kernel ABI.
#pragma once

#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"
#include "tensortune/support/rng.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::codegen::testing {

inline const ir::DataType kF32 = ir::DataType::float32();

/// The host target ("native"), resolved by codegen.
inline target::Target host() {
  return target::Target();
}

/// The GPU target the CUDA generator tests print for.
inline target::Target gpu() {
  return target::Target::parse("cuda -arch=sm_90");
}

/// A one-dimensional buffer of `n` elements of `t`.
inline ir::Buffer buffer(const std::string& name,
                         ir::DataType t,
                         int64_t n,
                         ir::MemoryScope scope = ir::MemoryScope::Global) {
  return ir::Buffer(name, t, {n}, scope);
}

inline ir::LoweredFunc make_func(const std::string& name,
                                 std::vector<ir::Buffer> params,
                                 size_t num_inputs,
                                 ir::Stmt body) {
  ir::LoweredFunc f;
  f.name = name;
  f.params = std::move(params);
  f.num_inputs = num_inputs;
  f.body = std::move(body);
  return f;
}

/// for (var = 0; var < extent; ++var) body.
inline ir::Stmt loop(const ir::Var& var,
                     int extent,
                     ir::Stmt body,
                     ir::ForKind kind = ir::ForKind::Serial) {
  return ir::For::make(var, 0, extent, kind, std::move(body));
}

inline ir::Expr load(const ir::Buffer& b, ir::Expr index, ir::Expr predicate = ir::Expr()) {
  return ir::Load::make(b, {std::move(index)}, std::move(predicate));
}

inline ir::Stmt store(const ir::Buffer& b,
                      ir::Expr value,
                      ir::Expr index,
                      ir::Expr predicate = ir::Expr()) {
  return ir::Store::make(b, std::move(value), {std::move(index)}, std::move(predicate));
}

inline ir::Expr ramp(ir::Expr base, int stride, int lanes) {
  return ir::Ramp::make(std::move(base), ir::Expr(stride), lanes);
}

/// `n` uniform floats in [lo, hi) from a fixed seed.
inline std::vector<float> random_floats(size_t n,
                                        uint64_t seed,
                                        float lo = -2.0f,
                                        float hi = 2.0f) {
  support::Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) {
    x = rng.uniform_float(lo, hi);
  }
  return v;
}

/// Calls `kernel` with the given buffers and returns its status.
inline int32_t call(const Artifact& kernel, const std::vector<void*>& buffers) {
  return kernel(buffers.data());
}

/// True when a and b agree to within `rel` relative (or `abs_tol` absolute) error.
inline bool close(double a, double b, double rel = 1e-5, double abs_tol = 1e-6) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b);
  }
  return std::fabs(a - b) <= abs_tol + rel * std::fabs(b);
}

}  // namespace tensortune::codegen::testing

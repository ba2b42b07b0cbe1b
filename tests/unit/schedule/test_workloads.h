// SPDX-License-Identifier: Apache-2.0
// Small workloads shared by the schedule tests, built with te::placeholder / te::compute, and
// helpers to read a loop state.
#pragma once

#include "tensortune/ir/ops.h"
#include "tensortune/schedule/loop_state.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/workload.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tensortune::schedule::testing {

/// A[64,32] x B[32,48] -> C[64,48] (axes i, j, reduction k), then D = relu(C) (axes i, j).
/// Stages: A, B, C, D; D is the output.
inline te::Workload matmul_relu(int64_t m = 64, int64_t n = 48, int64_t k = 32) {
  te::Tensor a = te::placeholder({m, k}, ir::DataType::float32(), "A");
  te::Tensor b = te::placeholder({k, n}, ir::DataType::float32(), "B");
  ir::IterVar rk = te::reduce_axis(k, "k");
  te::Tensor c = te::compute(
      {m, n},
      [&](const std::vector<ir::Var>& ax) {
        return te::sum(a(ax[0], rk.var) * b(rk.var, ax[1]), {rk});
      },
      "C", "matmul");
  te::Tensor d = te::compute(
      {m, n},
      [&](const std::vector<ir::Var>& ax) { return ir::max(c(ax[0], ax[1]), ir::Expr(0.0f)); }, "D",
      "elemwise");
  return te::Workload("matmul_relu", {a, b}, {d});
}

/// A[64,32] x B[32,48] -> C[64,48]; C is the output.
inline te::Workload matmul(int64_t m = 64, int64_t n = 48, int64_t k = 32) {
  te::Tensor a = te::placeholder({m, k}, ir::DataType::float32(), "A");
  te::Tensor b = te::placeholder({k, n}, ir::DataType::float32(), "B");
  ir::IterVar rk = te::reduce_axis(k, "k");
  te::Tensor c = te::compute(
      {m, n},
      [&](const std::vector<ir::Var>& ax) {
        return te::sum(a(ax[0], rk.var) * b(rk.var, ax[1]), {rk});
      },
      "C", "matmul");
  return te::Workload("matmul", {a, b}, {c});
}

/// A[16,8] -> B = A * 2 -> C = B + A; C is the output. B and C both read A.
inline te::Workload elemwise_chain() {
  te::Tensor a = te::placeholder({16, 8}, ir::DataType::float32(), "A");
  te::Tensor b = te::compute(
      {16, 8}, [&](const std::vector<ir::Var>& ax) { return a(ax[0], ax[1]) * ir::Expr(2.0f); },
      "B", "elemwise");
  te::Tensor c = te::compute(
      {16, 8}, [&](const std::vector<ir::Var>& ax) { return b(ax[0], ax[1]) + a(ax[0], ax[1]); },
      "C", "elemwise");
  return te::Workload("elemwise_chain", {a}, {c});
}

/// "name:extent" for each leaf axis of `stage`, outermost first.
inline std::vector<std::string> leaves(const LoopState& state, const std::string& stage) {
  std::vector<std::string> out;
  for (const Axis& iter : state.stage(stage).leaf_axes) {
    out.push_back(iter.name + ":" + std::to_string(iter.extent));
  }
  return out;
}

/// The message of the ScheduleError `fn` throws, or "" (with a test failure) when it throws none.
template <class Fn>
std::string schedule_error(Fn fn) {
  try {
    fn();
  } catch (const ScheduleError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ScheduleError";
  return "";
}

}  // namespace tensortune::schedule::testing

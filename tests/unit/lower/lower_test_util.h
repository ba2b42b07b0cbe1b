// SPDX-License-Identifier: Apache-2.0
// Helpers of the lowering tests: lower a scheduled workload, run it with ir::eval on random
// inputs (outputs poisoned first) and compare with the naive reference interpreter.
#pragma once

#include "common/reference.h"
#include "tensortune/ir/eval.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace tensortune::lower {

inline constexpr ir::MemoryScope kLocal = ir::MemoryScope::Local;

/// Fills every output with NaN (floats) or a sentinel (ints), so unwritten elements show.
inline void poison_outputs(testing::HostBuffers& buffers) {
  for (size_t i = buffers.num_inputs(); i < buffers.size(); ++i) {
    ir::DataType t = buffers.dtype(i);
    for (size_t n = 0; n < buffers.num_elements(i); ++n) {
      if (t == ir::DataType::float32()) {
        static_cast<float*>(buffers.data(i))[n] = std::numeric_limits<float>::quiet_NaN();
      } else if (t == ir::DataType::float64()) {
        static_cast<double*>(buffers.data(i))[n] = std::numeric_limits<double>::quiet_NaN();
      } else if (t == ir::DataType::int32()) {
        static_cast<int32_t*>(buffers.data(i))[n] = -123456789;
      }
    }
  }
}

/// Runs `f` (a lowering of `workload`) with ir::eval and checks it against the reference.
inline ::testing::AssertionResult runs_like_reference(const te::Workload& workload,
                                                      const ir::LoweredFunc& f,
                                                      uint64_t seed = 7) {
  testing::HostBuffers buffers(workload);
  buffers.fill_inputs(seed);
  poison_outputs(buffers);
  try {
    ir::eval(f, buffers.args());
  } catch (const Error& e) {
    return ::testing::AssertionFailure() << "eval failed: " << e.what() << "\n" << ir::to_string(f);
  }
  ::testing::AssertionResult result = testing::outputs_match_reference(workload, buffers);
  if (!result) {
    result << "\n" << ir::to_string(f);
  }
  return result;
}

/// Applies `steps`, lowers for a CPU target three ways (full pipeline, before flattening, without
/// vectorize/unroll) and checks each against the reference. Returns the fully lowered function.
inline ir::LoweredFunc expect_lowers_correctly(const te::Workload& workload,
                                               const std::vector<schedule::Step>& steps,
                                               uint64_t seed = 7) {
  schedule::LoopState state = schedule::apply_steps(workload, steps);
  target::Target cpu;
  LowerOptions verified;
  verified.verify_each_pass = true;
  ir::LoweredFunc full = lower(state, cpu, function_name(workload), verified);
  EXPECT_TRUE(runs_like_reference(workload, full, seed));
  LowerOptions unflattened = verified;
  unflattened.stop_before_flatten = true;
  EXPECT_TRUE(runs_like_reference(workload, lower(state, cpu, "f", unflattened), seed));
  LowerOptions plain = verified;
  plain.vectorize_and_unroll = false;
  EXPECT_TRUE(runs_like_reference(workload, lower(state, cpu, "f", plain), seed));
  return full;
}

/// The lowering without vectorize/unroll (and so without unswitched copies of guarded tiles): the
/// loop structure the schedule asked for, for tests that check where things are placed.
inline ir::LoweredFunc lower_plain(const te::Workload& workload,
                                   const std::vector<schedule::Step>& steps) {
  LowerOptions plain;
  plain.vectorize_and_unroll = false;
  return lower(schedule::apply_steps(workload, steps), target::Target(), function_name(workload),
               plain);
}

/// matmul of [m, k] x [k, n] named A, B -> C.
inline te::Workload matmul_workload(int64_t m, int64_t n, int64_t k) {
  te::Tensor a = te::placeholder({m, k}, ir::DataType::float32(), "A");
  te::Tensor b = te::placeholder({k, n}, ir::DataType::float32(), "B");
  return te::Workload("matmul", {a, b}, {te::matmul(a, b)});
}

/// The number of occurrences of `needle` in the printed function.
inline int count_in(const ir::LoweredFunc& f, const std::string& needle) {
  std::string text = ir::to_string(f);
  int count = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) {
    ++count;
  }
  return count;
}

}  // namespace tensortune::lower

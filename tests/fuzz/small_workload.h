// SPDX-License-Identifier: Apache-2.0
// Lowering a small workload for this host and checking ir::eval of it against the naive
// reference: the differential oracle of the workload_spec and schedule_replay targets.
#pragma once

#include "common/reference.h"
#include "fuzz_common.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/ir/eval.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/te/workload.h"

#include <cstdint>

namespace tensortune::fuzz {

/// Small enough to interpret within milliseconds under ASan: every tensor and the FLOP count are
/// bounded, so a valid spec cannot make the fuzzer allocate gigabytes or run for seconds.
inline bool is_small(const te::Workload& workload) {
  constexpr int64_t kMaxElements = int64_t{1} << 12;
  constexpr double kMaxFlops = 1 << 16;
  if (workload.flop_count() > kMaxFlops) {
    return false;
  }
  for (const te::OperationRef& op : workload.ops()) {
    int64_t elements = 1;
    for (int64_t extent : op->output.shape()) {
      if (extent < 0 || extent > kMaxElements || elements * extent > kMaxElements) {
        return false;
      }
      elements *= extent;
    }
  }
  return workload.max_reduction_length() <= kMaxElements;
}

/// The host target, resolved once.
inline const target::Target& host_target() {
  static const target::Target host = codegen::resolve_host(target::Target::parse("llvm -cores=1"));
  return host;
}

/// Lowers `state`, interprets it and aborts when its outputs differ from the reference.
inline void check_against_reference(const te::Workload& workload,
                                    const schedule::LoopState& state) {
  ir::LoweredFunc func = lower::lower(state, host_target(), lower::function_name(workload));
  testing::HostBuffers buffers(workload);
  buffers.fill_inputs(7);
  ir::eval(func, buffers.args());
  ::testing::AssertionResult same = testing::outputs_match_reference(workload, buffers);
  if (!same) {
    finding("wrong result for " + workload.name() + ": " + same.message());
  }
}

}  // namespace tensortune::fuzz

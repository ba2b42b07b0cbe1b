// SPDX-License-Identifier: Apache-2.0
// Private to src/measure: a GPU workload's reference runs its default schedule on the host CPU
// (Builder::build_for_host); made parallel here, since a GEMM 4096^3 takes many minutes serially.
#pragma once

#include "tensortune/ir/stmt.h"

namespace tensortune::measure::detail {

/// `func` with the outermost loop of each top-level loop nest made parallel where that is safe:
/// a serial loop every store inside which writes an index that uses the loop's variable (a
/// data-parallel axis of a default schedule's stage: each iteration writes its own elements; a
/// reduction axis outermost, as in a full reduction, stays serial). Inner loops are unchanged.
ir::LoweredFunc parallel_outer_loops(const ir::LoweredFunc& func);

}  // namespace tensortune::measure::detail

// SPDX-License-Identifier: Apache-2.0
// Layout rewriting done ahead of time: the stages computed at the root from constant inputs alone
// (a weight copied into a blocked layout) move out of the kernel into its prepare function.
#pragma once

#include "tensortune/ir/stmt.h"

#include <vector>

namespace tensortune::lower {

/// `constant_inputs[i]` says whether input parameter i is constant (te::Workload's
/// constant_inputs). A root-level nest (under root allocations and sequences only) whose every
/// read is a constant input, a buffer of an earlier hoisted nest or one it writes itself (a
/// reduction's accumulator), and whose every write is a global buffer allocated at the root,
/// moves into `prepare`, unless a nest that stays writes one of the buffers it reads or writes
/// (then that nest stays too, and so on). The buffers the moved nests write become `prepacked`
/// parameters and lose their allocations. A function with no such nest is returned unchanged.
/// Works on flattened IR.
ir::LoweredFunc hoist_prepacked(ir::LoweredFunc func, const std::vector<bool>& constant_inputs);

}  // namespace tensortune::lower

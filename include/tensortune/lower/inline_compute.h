// SPDX-License-Identifier: Apache-2.0
// Inlining: reads of an inlined stage's buffer are replaced by its element expression.
#pragma once

#include "tensortune/ir/expr.h"

#include <unordered_map>
#include <vector>

namespace tensortune::lower {

/// The element definition of an inlined stage: out[axes] = body.
struct InlinedStage {
  std::vector<ir::Var> axes;
  ir::Expr body;
};
/// Inlined stages by output buffer.
using InlineMap = std::unordered_map<const ir::BufferNode*, InlinedStage>;

/// Replaces every Load of a buffer in `inlined` by that stage's body with its axes bound to the
/// load's indices. Bodies in `inlined` must already be free of inlined loads (add producers
/// first); the result then reads no inlined buffer.
ir::Expr inline_compute(const ir::Expr& e, const InlineMap& inlined);

}  // namespace tensortune::lower

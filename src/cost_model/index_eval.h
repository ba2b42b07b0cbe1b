// SPDX-License-Identifier: Apache-2.0
// A tolerant integer evaluator for index expressions, used to measure how an access moves when
// one loop variable steps (finite differences at a fixed base point). Private to cost_model.
#pragma once

#include "tensortune/ir/expr.h"

#include <cstdint>
#include <unordered_map>

namespace tensortune::cost_model {

/// Values of loop variables and the definitions of let-bound variables.
struct EvalEnv {
  std::unordered_map<const ir::VarNode*, int64_t> values;
  std::unordered_map<const ir::VarNode*, ir::Expr> lets;
};

/// Evaluates lane `lane` of an integer-valued expression. Never throws: unknown variables, loads
/// and calls read 0, division by zero gives 0, floats are truncated and arithmetic saturates.
/// Integer Div/Mod are floor division/modulo, as in the IR.
int64_t eval_index(const ir::Expr& e, const EvalEnv& env, int lane = 0);

}  // namespace tensortune::cost_model

// SPDX-License-Identifier: Apache-2.0
// A small interpreter for loop IR: the living definition of its semantics and the test oracle for
// lowering without LLVM or a GPU. Parallel and GPU loops run serially; vectors lane by lane.
#pragma once

#include "tensortune/ir/expr.h"
#include "tensortune/ir/stmt.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace tensortune::ir {

/// Runs `f` on raw dense buffers: `args[i]` points to `f.params[i]`'s elements (float32 as float,
/// int32 as int32_t, ...), the same ABI as a compiled kernel. Works on flattened and unflattened
/// IR. A function with prepacked buffers gets them allocated for the call, runs its prepare body,
/// then its body.
/// Semantics: integer Div/Mod are floor division/modulo, integer arithmetic wraps at the type's
/// width; float32 results are rounded to float after every operation and intrinsics use the float
/// versions of <cmath>; float min/max propagate NaN; float->int casts truncate; Select evaluates
/// only the chosen arm (lane by lane); And/Or evaluate both operands; predicated-off lanes are not
/// accessed; a vector store reads all its lanes before writing. Allocate gives fresh memory
/// poisoned with NaN (floats) or 0xDE bytes (integers), so a read of an unset local propagates
/// NaN instead of throwing.
/// Throws InternalError on an out-of-bounds access (naming the buffer and the index, so a bad
/// schedule is caught, not silent), on integer division by zero, on a cast of NaN or an
/// out-of-range float to an integer, on a variable or buffer used outside its scope, or on an
/// unsupported construct (Reduce, float16/bfloat16 arithmetic).
void eval(const LoweredFunc& f, const std::vector<void*>& args);

/// Evaluates a scalar integer expression with the given variable values (for simplifier tests).
int64_t eval_int(const Expr& e, const std::unordered_map<const VarNode*, int64_t>& vars);
/// Evaluates a scalar float expression (as double) with the given integer variable values.
double eval_float(const Expr& e, const std::unordered_map<const VarNode*, int64_t>& vars);

}  // namespace tensortune::ir

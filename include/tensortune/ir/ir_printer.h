// SPDX-License-Identifier: Apache-2.0
// The canonical text form of the IR: stable, documented, used as the test oracle and hashed into
// workload keys. Variable and buffer names are made unique on output (a name used by two different
// variables gets a ".1", ".2" suffix, in order of first appearance), so the text never depends on
// pointers.
#pragma once

#include "tensortune/ir/expr.h"
#include "tensortune/ir/stmt.h"

#include <iosfwd>
#include <string>

namespace tensortune::ir {

/// Fully parenthesised infix text: "((i*8) + j)", "float32(x)", "A[i, j]", "ramp(x, 1, 16)",
/// "x16(y)" for broadcasts, "sum(A[i, k]*B[k, j], axes=[k:512])" for reductions.
std::string to_string(const Expr& e);
/// One statement per line, two spaces of indent per level:
///   for (i, 0, 64) parallel {        // kind omitted when serial
///     C[i] = 0f
///   }
std::string to_string(const Stmt& s);
/// "func NAME(float32 A[64, 64], ...) {" + body + "}"; inputs first, then outputs.
std::string to_string(const LoweredFunc& f);

std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);

}  // namespace tensortune::ir

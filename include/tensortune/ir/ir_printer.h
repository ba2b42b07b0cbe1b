// SPDX-License-Identifier: Apache-2.0
// The canonical text form of the IR: stable, documented, used as the test oracle and hashed into
// workload keys. Variable and buffer names are made unique on output: variables and buffers share
// one name space per printed root, and a name hint already taken by a different variable or buffer
// gets the first free suffix ".1", ".2", ... in order of first appearance (an empty hint prints as
// "v" or "buf"), so the text never depends on pointers.
#pragma once

#include "tensortune/ir/expr.h"
#include "tensortune/ir/stmt.h"

#include <iosfwd>
#include <string>

namespace tensortune::ir {

/// Fully parenthesised infix text. The grammar, by node kind:
///   IntImm      int32: "-5"; bool: "true" / "false"; other types: "int64(5)", "uint8(7)"
///   FloatImm    float32: shortest round-trip decimal + "f": "0f", "1.5f", "-0f", "1e-05f";
///               non-finite float32 and other float types: "float32(-inf)", "float32(nan)",
///               "float64(0.1)", "float16(1.5)"
///   Var         its unique name (see above)
///   arithmetic  "(a + b)", "(a - b)", "(a*b)", "(a/b)", "(a % b)", "min(a, b)", "max(a, b)"
///   logic       "(a == b)", "(a != b)", "(a < b)", "(a <= b)", "(a > b)", "(a >= b)",
///               "(a && b)", "(a || b)", "!a"
///   Select      "select(c, t, f)"           Cast       "float32(x)", "int32x4(v)"
///   Load        "A[i, j]"; predicated: "(A[ramp(i, 1, 4)] if (p))" (the predicate is wrapped
///               in parentheses unless it prints them itself, e.g. a comparison)
///   Ramp        "ramp(base, stride, lanes)"  Broadcast  "x16(y)"
///   Call        "exp(x)", "pow(x, y)"
///   Reduce      "sum((A[i, k]*B[k, j]), axes=[k:512])", several axes "axes=[k:64, r:3]"
///   undefined   "<undefined>"
/// Example: "((i*8) + j)".
std::string to_string(const Expr& e);
/// One statement per line (each line ends in a newline), two spaces of indent per level:
///   for (i, 0, 64) parallel auto_unroll(16) {   // "for (var, min, extent)"; the kind is
///     C[i] = 0f                                 // omitted when serial, auto_unroll(N) when > 0
///   }
///   A[ramp(i, 1, 4)] = x4(0f) if (ramp(i, 1, 4) < x4(10))   // predicated store
///   allocate float32 T[4, 4] local {                     // scope: global, local or shared
///     ...
///   }
///   if (cond) {            // "} else {" ... "}" when there is an else branch
///     ...
///   }
///   let x = value {        // the body is the scope of x
///     ...
///   }
///   evaluate(x)
/// A Seq prints its statements one after another (an empty Seq prints nothing).
std::string to_string(const Stmt& s);
/// "func NAME(float32 A[64, 64], float32 B[64, 64], out float32 C[64, 64]) {" + newline, the
/// body indented by one level, then "}" + newline; inputs first, then the outputs marked "out".
std::string to_string(const LoweredFunc& f);

std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);

}  // namespace tensortune::ir

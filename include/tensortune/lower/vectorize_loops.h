// SPDX-License-Identifier: Apache-2.0
// Vectorization: loops annotated Vectorized become vector statements (Ramp indices, Broadcast
// scalars, guards turned into store/load predicates).
#pragma once

#include "tensortune/ir/stmt.h"

namespace tensortune::lower {

/// Replaces each Vectorized loop of constant extent whose body can be widened safely by vector
/// code. A body that cannot (an inner loop or allocation, a let or a store not depending on the
/// loop variable, a store whose lanes could collide, a read of a buffer the body writes at another
/// index) keeps its loop, still annotated Vectorized, so codegen can emit a loop with a hint.
ir::Stmt vectorize_loops(const ir::Stmt& s);

}  // namespace tensortune::lower

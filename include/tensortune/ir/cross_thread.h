// SPDX-License-Identifier: Apache-2.0
// Reductions across the threads of a GPU block (TVM's allreduce): a loop bound to threadIdx
// whose body updates, outside the buffers it allocates, one element at an index that does not
// use the loop's variable. Lowering refuses the forms the CUDA generator cannot combine (so the
// search drops them before building) and the generator finds the same loops on its final IR:
// one analysis serves both.
#pragma once

#include "tensortune/ir/stmt.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tensortune::ir {

/// The reducer of `B[idx] = B[idx] op value` (op: +, -, *, min, max; B[idx] first for -), a
/// scalar, unpredicated store whose value reads B only there; nullopt for any other store.
std::optional<ReduceKind> reduction_update_kind(const Store& store);

/// A loop that reduces across threads, and its update.
struct CrossThreadReduction {
  const For* loop = nullptr;
  const Store* update = nullptr;  ///< the first one, when the body has several of the same element
  ReduceKind reducer = ReduceKind::Sum;
};

/// Called with a loop that cannot be combined and why, as a phrase whose subject is the loop
/// ("stores to 'B' at an index ..."); it must throw.
using CrossThreadFailure = std::function<void(const For& loop, const std::string& reason)>;

/// The cross-thread reductions of one kernel (a top-level GPU loop nest). `fail` is called for a
/// loop the CUDA generator cannot combine: not bound to threadIdx.x, stores of other kinds
/// beside the update, more than one updated element or an index that changes inside the loop,
/// not one kind of `B[idx] = B[idx] op value`, B read elsewhere, an update under a condition
/// that does not depend on the loop, a loop bound to threadIdx inside it or threadIdx.x around
/// it, or a place not every thread of the block reaches (a condition or loop bounds that depend
/// on threadIdx, a thread loop narrower than the block): the combine has barriers.
std::vector<CrossThreadReduction> find_cross_thread_reductions(const Stmt& kernel,
                                                               const CrossThreadFailure& fail);

/// The update of a loop find_cross_thread_reductions accepted, found again without the checks
/// (after a pass that rewrote the body: the CUDA generator's thread-private local buffers).
/// nullopt when the loop has no store outside its own allocations that is such an update.
std::optional<CrossThreadReduction> cross_thread_update(const For& loop);

}  // namespace tensortune::ir

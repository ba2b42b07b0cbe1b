// SPDX-License-Identifier: Apache-2.0
// annotate: how a leaf axis runs (vectorize, unroll, parallel, a GPU binding,
// or serial again). Only the loop-structure rules are checked here; GPU
// bindings (a reduction axis on threadIdx.x included) are checked when lowered.
#include "../annotation_names.h"
#include "primitives.h"
#include "tensortune/support/error.h"

namespace tensortune::schedule {

LoopState apply_primitive(const LoopState& state, const Annotate& step) {
  const char* what = ir::is_gpu_kind(step.kind) ? "bind" : annotation_name(step.kind);
  LoopState next = state;
  Stage& stage = stage_for_step(next, what, step.stage);
  int index = leaf_for_step(stage, what, step.axis);
  Axis& iter = stage.leaf_axes[static_cast<size_t>(index)];
  bool runs_concurrently = step.kind == ir::ForKind::Vectorized ||
                           step.kind == ir::ForKind::Parallel || ir::is_gpu_kind(step.kind);
  if (runs_concurrently && iter.kind == ir::IterKind::Reduce) {
    // Concurrent iterations of a reduction would race on the accumulator, except across the
    // threads of a block along x, which the CUDA generator combines (a cross-thread reduction).
    if (step.kind != ir::ForKind::ThreadX) {
      throw ScheduleError(std::string(what) + ": axis '" + step.axis + "' of stage '" + step.stage +
                          "' is a reduction axis" +
                          (ir::is_gpu_kind(step.kind)
                               ? " (only threadIdx.x may run a reduction across threads)"
                               : ""));
    }
  }
  if (step.kind == ir::ForKind::Vectorized &&
      index + 1 != static_cast<int>(stage.leaf_axes.size())) {
    throw ScheduleError("vectorize: axis '" + step.axis + "' of stage '" + step.stage +
                        "' is not the innermost axis (axes: " + join_names(leaf_names(stage)) +
                        ")");
  }
  iter.annotation = step.kind;
  return next;
}

}  // namespace tensortune::schedule

// SPDX-License-Identifier: Apache-2.0
// Private to src/schedule: one apply_primitive() overload per step kind (one
// file each in this folder) and the checks they share. Every check throws
// ScheduleError prefixed with the step word.
#pragma once

#include "tensortune/schedule/loop_state.h"
#include "tensortune/schedule/step.h"

#include <string>
#include <vector>

namespace tensortune::schedule {

// One overload per Step alternative; a missing one is a compile error in
// schedule.cpp.
LoopState apply_primitive(const LoopState& state, const Split& step);
LoopState apply_primitive(const LoopState& state, const Fuse& step);
LoopState apply_primitive(const LoopState& state, const Reorder& step);
LoopState apply_primitive(const LoopState& state, const Tile& step);
LoopState apply_primitive(const LoopState& state, const Annotate& step);
LoopState apply_primitive(const LoopState& state, const PragmaUnroll& step);
LoopState apply_primitive(const LoopState& state, const ComputeAt& step);
LoopState apply_primitive(const LoopState& state, const ComputeInline& step);
LoopState apply_primitive(const LoopState& state, const ComputeRoot& step);
LoopState apply_primitive(const LoopState& state, const CacheWrite& step);
LoopState apply_primitive(const LoopState& state, const CacheRead& step);

/// ScheduleError ("<what>: ...") unless every block names a distinct dimension of `shape` and
/// its factor divides the extent or the block is padded.
void check_layout_blocks(const char* what,
                         const std::string& tensor,
                         const std::vector<LayoutBlock>& blocks,
                         const std::vector<int64_t>& shape);
/// Where the element at `indices` lives in the blocked layout: x / f in place of a blocked x, then
/// x % f for each block in order.
std::vector<ir::Expr> blocked_indices(const std::vector<LayoutBlock>& blocks,
                                      std::vector<ir::Expr> indices);
/// The axes of a blocked layout of a tensor whose axes are `axes` (checked blocks): a blocked axis
/// is replaced by a variable of the same name over extent / f, and "<name>.b" over f is appended
/// per block; `source[d]` is the original index d in terms of them (outer * f + inner); `shape`
/// is the blocked buffer's (the new axes' extents).
struct BlockedAxes {
  std::vector<ir::IterVar> axes;
  std::vector<ir::Expr> source;
  std::vector<int64_t> shape;
};
BlockedAxes blocked_axes(const std::vector<ir::IterVar>& axes,
                         const std::vector<LayoutBlock>& blocks);

/// "a, b, c".
std::string join_names(const std::vector<std::string>& names);
/// The names of the stage's leaf axes, outermost first.
std::vector<std::string> leaf_names(const Stage& stage);

/// The stage named `name`; ScheduleError "<what>: no stage 'X' (stages: ...)"
/// otherwise.
Stage& stage_for_step(LoopState& state, const char* what, const std::string& name);
const Stage& stage_for_step(const LoopState& state, const char* what, const std::string& name);
/// Index of leaf `axis`; ScheduleError "<what>: stage 'C' has no axis 'k.o'
/// (axes: i, j, k)".
int leaf_for_step(const Stage& stage, const char* what, const std::string& axis);
/// ScheduleError unless the stage computes something (placeholders have no
/// loops to schedule).
void require_compute(const Stage& stage, const char* what);
/// ScheduleError when `name` is already used by a root, leaf or intermediate
/// axis of the stage.
void require_fresh_axis_name(const Stage& stage, const char* what, const std::string& name);

/// Stages attached at `stage_name`'s axis `from` are moved to its axis `to`
/// (split and fuse keep attachments at the loop that replaced their axis).
void move_attachments(LoopState& state,
                      const std::string& stage_name,
                      const std::vector<std::string>& from,
                      const std::string& to);
/// Names of the stages attached (compute_at) at any axis of `stage_name`, in
/// stage order.
std::vector<std::string> attached_stages(const LoopState& state, const std::string& stage_name);
/// `base` if no stage has that name, else base.1, base.2, ...
std::string unique_stage_name(const LoopState& state, const std::string& base);

/// Splits leaf `axis` in place into axis.o and axis.i (shared by split and
/// tile).
void split_axis(LoopState& state,
                const char* what,
                const std::string& stage_name,
                const std::string& axis,
                int64_t factor,
                bool nparts);
/// Puts the listed leaves in this order, in the positions they occupied (shared
/// by reorder, tile).
void reorder_axes(LoopState& state,
                  const char* what,
                  const std::string& stage_name,
                  const std::vector<std::string>& order);

}  // namespace tensortune::schedule

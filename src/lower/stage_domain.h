// SPDX-License-Identifier: Apache-2.0
// Private to src/lower: the iteration domain of one stage as lowered. Leaf loops get fresh
// variables and extents recomputed from the stage's (possibly region-restricted) root extents;
// each root axis is expressed through the leaf variables by replaying the split/fuse relations
// backwards; guards keep every value within its extent where a split does not divide.
#pragma once

#include "tensortune/ir/expr.h"
#include "tensortune/ir/simplify.h"
#include "tensortune/schedule/loop_state.h"

#include <cstdint>
#include <vector>

namespace tensortune::lower {

/// An index-typed constant.
inline ir::Expr index_const(int64_t v) {
  return ir::IntImm::make(ir::DataType::index(), v);
}

/// A condition that must hold for the body to run; it uses leaf variables up to `depth` (the
/// index of its innermost leaf, -1 for none) and is placed right inside that loop.
struct Guard {
  ir::Expr condition;
  int depth = -1;
  bool on_reduce_axis = false;
};

struct StageDomain {
  const schedule::Stage* stage = nullptr;
  std::vector<ir::Var> leaf_vars;
  std::vector<int64_t> leaf_extents;
  /// Per root axis (data-parallel ones, then reduction ones): the extent lowered, the value in
  /// leaf variables relative to the region, and the region's offset (0 unless compute_at).
  std::vector<int64_t> root_extents;
  std::vector<ir::Expr> root_local;
  std::vector<ir::Expr> root_offset;
  std::vector<Guard> guards;
  size_t num_data_par = 0;
  /// Index of the first leaf derived from a reduction axis (leaf count when none).
  size_t first_reduce_leaf = 0;

  /// The value of root axis `r` in the full tensor: offset + local.
  ir::Expr root_value(size_t r) const;
  /// Ranges of the leaf variables, [0, extent - 1].
  ir::VarRanges leaf_ranges() const;
};

/// Builds the domain of `stage` with root extents `root_extents` and offsets `root_offset`
/// (defined for every root axis). `full_extents` are the op's own extents: with an offset, the
/// guard offset + local < full is added unless provable under `known`.
StageDomain make_stage_domain(const schedule::Stage& stage,
                              std::vector<int64_t> root_extents,
                              std::vector<ir::Expr> root_offset,
                              const std::vector<int64_t>& full_extents,
                              const ir::VarRanges& known);

/// The op's own root extents: output shape, then reduction axis extents.
std::vector<int64_t> full_root_extents(const schedule::Stage& stage);
/// The op's root axis variables in the same order.
std::vector<ir::Var> root_axis_vars(const schedule::Stage& stage);

}  // namespace tensortune::lower

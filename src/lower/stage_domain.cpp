// SPDX-License-Identifier: Apache-2.0
// Replays a stage's split/fuse relations: forwards for the extents, backwards for the value of
// every axis in leaf variables (parent = outer * factor + inner; fused parents by / and %), and
// tracks the largest value each axis can take so that only real tails get a guard.
#include "stage_domain.h"

#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

namespace tensortune::lower {
namespace {

struct AxisInfo {
  int64_t extent = 0;
  bool reduce = false;
  bool split_outer = false;
  ir::Expr value;
  int64_t max = 0;
  int depth = -1;
};

AxisInfo make_axis(int64_t extent, bool reduce, bool split_outer) {
  AxisInfo info;
  info.extent = extent;
  info.reduce = reduce;
  info.split_outer = split_outer;
  return info;
}

using AxisMap = std::map<std::string, AxisInfo>;

AxisInfo& axis(AxisMap& axes, const schedule::Stage& stage, const std::string& name) {
  auto it = axes.find(name);
  TT_CHECK(it != axes.end()) << "lowering: stage '" << stage.name << "' has no axis '" << name
                             << "' in its relations";
  return it->second;
}

void check_extent(const schedule::Stage& stage, const std::string& name, int64_t extent) {
  if (extent > std::numeric_limits<int32_t>::max()) {
    throw ScheduleError("lowering: axis '" + name + "' of stage '" + stage.name + "' has " +
                        std::to_string(extent) + " iterations, more than int32 indices allow");
  }
}

/// Forward: extents of every derived axis from the root extents.
void derive_extents(const schedule::Stage& stage, AxisMap& axes) {
  for (const schedule::Relation& relation : stage.relations) {
    if (const auto* split = std::get_if<schedule::SplitRelation>(&relation)) {
      const AxisInfo parent = axis(axes, stage, split->parent);
      TT_CHECK(split->factor > 0) << "split of '" << split->parent << "' by " << split->factor;
      AxisInfo outer =
          make_axis((parent.extent + split->factor - 1) / split->factor, parent.reduce, true);
      // A factor beyond the parent's extent leaves one outer iteration: the inner loop then only
      // needs the parent's extent (no guard, no idle iterations).
      AxisInfo inner = make_axis(std::min(split->factor, parent.extent), parent.reduce, false);
      axes[split->outer] = outer;
      axes[split->inner] = inner;
      continue;
    }
    const auto& fuse = std::get<schedule::FuseRelation>(relation);
    int64_t extent = 1;
    const bool reduce = axis(axes, stage, fuse.parents.at(0)).reduce;
    for (const std::string& name : fuse.parents) {
      const AxisInfo& parent = axis(axes, stage, name);
      if (parent.reduce != reduce) {
        throw ScheduleError("fuse: axes of stage '" + stage.name + "' fused into '" + fuse.fused +
                            "' mix data-parallel and reduction axes");
      }
      extent *= parent.extent;
      check_extent(stage, fuse.fused, extent);
    }
    axes[fuse.fused] = make_axis(extent, reduce, false);
  }
}

/// Backward: the value (and largest value) of every axis in leaf variables.
void derive_values(const schedule::Stage& stage, AxisMap& axes) {
  for (auto it = stage.relations.rbegin(); it != stage.relations.rend(); ++it) {
    if (const auto* split = std::get_if<schedule::SplitRelation>(&*it)) {
      const AxisInfo& outer = axis(axes, stage, split->outer);
      const AxisInfo& inner = axis(axes, stage, split->inner);
      AxisInfo& parent = axis(axes, stage, split->parent);
      TT_CHECK(outer.value.defined() && inner.value.defined())
          << "lowering: axis '" << split->parent << "' of stage '" << stage.name
          << "' is split but a piece is neither a loop nor split further";
      parent.value = outer.value * index_const(split->factor) + inner.value;
      parent.max = outer.max * split->factor + inner.max;
      parent.depth = std::max(outer.depth, inner.depth);
      continue;
    }
    const auto& fuse = std::get<schedule::FuseRelation>(*it);
    const AxisInfo fused = axis(axes, stage, fuse.fused);
    TT_CHECK(fused.value.defined()) << "lowering: fused axis '" << fuse.fused << "' unused";
    int64_t stride = 1;
    for (size_t k = fuse.parents.size(); k-- > 0;) {
      AxisInfo& parent = axis(axes, stage, fuse.parents[k]);
      ir::Expr v = fused.value;
      if (stride > 1) {
        v = v / index_const(stride);
      }
      int64_t max = fused.max / stride;
      if (k > 0) {
        v = v % index_const(parent.extent);
        max = std::min(max, parent.extent - 1);
      }
      parent.value = v;
      parent.max = max;
      parent.depth = fused.depth;
      stride *= parent.extent;
    }
  }
}

}  // namespace

ir::Expr StageDomain::root_value(size_t r) const {
  if (ir::is_const_int(root_offset[r], 0)) {
    return root_local[r];
  }
  return root_offset[r] + root_local[r];
}

ir::VarRanges StageDomain::leaf_ranges() const {
  ir::VarRanges ranges;
  for (size_t k = 0; k < leaf_vars.size(); ++k) {
    ranges[leaf_vars[k].get()] = ir::ConstBound{0, leaf_extents[k] - 1};
  }
  return ranges;
}

std::vector<int64_t> full_root_extents(const schedule::Stage& stage) {
  std::vector<int64_t> extents = stage.op->output.shape();
  for (const ir::IterVar& r : stage.op->reduce_axes()) {
    extents.push_back(r.extent);
  }
  return extents;
}

std::vector<ir::Var> root_axis_vars(const schedule::Stage& stage) {
  std::vector<ir::Var> vars;
  for (const ir::IterVar& a : stage.op->axes) {
    vars.push_back(a.var);
  }
  for (const ir::IterVar& r : stage.op->reduce_axes()) {
    vars.push_back(r.var);
  }
  TT_CHECK(vars.size() == stage.root_axes.size())
      << "lowering: stage '" << stage.name << "' has " << stage.root_axes.size()
      << " root axes but its op has " << vars.size();
  return vars;
}

StageDomain make_stage_domain(const schedule::Stage& stage,
                              std::vector<int64_t> root_extents,
                              std::vector<ir::Expr> root_offset,
                              const std::vector<int64_t>& full_extents,
                              const ir::VarRanges& known) {
  StageDomain d;
  d.stage = &stage;
  d.num_data_par = stage.op->axes.size();
  TT_CHECK(root_extents.size() == stage.root_axes.size() &&
           root_offset.size() == stage.root_axes.size())
      << "lowering: root extents of stage '" << stage.name << "'";
  AxisMap axes;
  std::vector<std::string> order;
  for (size_t r = 0; r < stage.root_axes.size(); ++r) {
    const schedule::Axis& iter = stage.root_axes[r];
    check_extent(stage, iter.name, root_extents[r]);
    axes[iter.name] = make_axis(root_extents[r], r >= d.num_data_par, false);
    order.push_back(iter.name);
  }
  derive_extents(stage, axes);
  for (const schedule::Relation& relation : stage.relations) {
    if (const auto* split = std::get_if<schedule::SplitRelation>(&relation)) {
      order.insert(order.end(), {split->outer, split->inner});
    } else {
      order.push_back(std::get<schedule::FuseRelation>(relation).fused);
    }
  }
  d.first_reduce_leaf = stage.leaf_axes.size();
  for (size_t k = 0; k < stage.leaf_axes.size(); ++k) {
    const schedule::Axis& leaf = stage.leaf_axes[k];
    AxisInfo& info = axis(axes, stage, leaf.name);
    d.leaf_vars.emplace_back(leaf.name);
    d.leaf_extents.push_back(info.extent);
    info.value = d.leaf_vars.back();
    info.max = info.extent - 1;
    info.depth = static_cast<int>(k);
    if (info.reduce && d.first_reduce_leaf == stage.leaf_axes.size()) {
      d.first_reduce_leaf = k;
    }
  }
  derive_values(stage, axes);
  d.root_extents = std::move(root_extents);
  d.root_offset = std::move(root_offset);
  for (const schedule::Axis& root : stage.root_axes) {
    const AxisInfo& info = axis(axes, stage, root.name);
    TT_CHECK(info.value.defined())
        << "lowering: root axis '" << root.name << "' of stage '" << stage.name << "' has no loop";
    d.root_local.push_back(info.value);
  }
  // A tail guard where an axis can run past its extent. The outer piece of a split needs none:
  // running past its extent makes the parent run past its own, which is guarded.
  for (const std::string& name : order) {
    const AxisInfo& info = axes.at(name);
    if (info.max >= info.extent && !info.split_outer) {
      d.guards.push_back(Guard{info.value < index_const(info.extent), info.depth, info.reduce});
    }
  }
  ir::VarRanges ranges = known;
  for (const auto& [var, range] : d.leaf_ranges()) {
    ranges[var] = range;
  }
  for (size_t r = 0; r < d.num_data_par; ++r) {
    if (ir::is_const_int(d.root_offset[r], 0) && d.root_extents[r] <= full_extents[r]) {
      continue;
    }
    ir::Expr cond = d.root_value(r) < index_const(full_extents[r]);
    if (!ir::can_prove(cond, ranges)) {
      d.guards.push_back(Guard{cond, axes.at(stage.root_axes[r].name).depth, false});
    }
  }
  return d;
}

}  // namespace tensortune::lower

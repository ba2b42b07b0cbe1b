// SPDX-License-Identifier: Apache-2.0
// cache_write: stage C's value is computed into a scratch buffer by a new stage
// "C.<scope>" (the original op under a new name and buffer), and C becomes an
// element-wise copy out of it, keeping its output buffer so the function's
// parameters do not change. With blocks, the scratch buffer has that blocked
// layout (a conv accumulator vectorized over output channels keeps them
// innermost) and the op computes over the blocked axes; a padded block rounds the
// blocks up (1000 output channels in blocks of 16: 63 blocks).
#include "primitives.h"
#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <memory>

namespace tensortune::schedule {
namespace {

void require_untouched(const LoopState& state, const Stage& stage) {
  bool untouched = stage.relations.empty() && stage.attach == AttachKind::Root &&
                   stage.leaf_axes.size() == stage.root_axes.size();
  for (size_t i = 0; untouched && i < stage.leaf_axes.size(); ++i) {
    const Axis& leaf = stage.leaf_axes[i];
    untouched = leaf.name == stage.root_axes[i].name && leaf.annotation == ir::ForKind::Serial &&
                leaf.auto_unroll_max_step == 0;
  }
  untouched = untouched && attached_stages(state, stage.name).empty();
  if (!untouched) {
    throw ScheduleError("cache_write: stage '" + stage.name +
                        "' was already scheduled; cache_write must come before "
                        "other steps on it");
  }
}

}  // namespace

LoopState apply_primitive(const LoopState& state, const CacheWrite& step) {
  LoopState next = state;
  const Stage& stage = stage_for_step(next, "cache_write", step.stage);
  require_compute(stage, "cache_write");
  require_untouched(next, stage);
  const te::Operation& original = *stage.op;
  std::string cache_name = unique_stage_name(next, step.stage + "." + scope_name(step.scope));

  check_layout_blocks("cache_write", step.stage, step.blocks, original.output.shape());
  auto cache = std::make_shared<te::Operation>(original);
  cache->name = cache_name;
  BlockedAxes blocked = blocked_axes(original.axes, step.blocks);
  ir::VarMap to_blocked;  // each blocked axis -> outer * factor + inner
  for (const LayoutBlock& b : step.blocks) {
    auto d = static_cast<size_t>(b.dim);
    ir::Expr source = blocked.source[d];
    const int64_t extent = original.output.shape()[d];
    if (b.pad && extent % b.factor != 0) {
      // The padding's points compute the last element's value again, so every read stays inside
      // its tensor; no copy out reads them. A padded cache_read of an input reads its padding
      // instead (redirect_reader drops the clamp), so the vectors of the blocks stay dense.
      source = ir::min(source, ir::make_const(source.type(), extent - 1));
    }
    to_blocked[original.axes[d].var.get()] = source;
  }
  cache->axes = blocked.axes;
  cache->body = to_blocked.empty() ? original.body : ir::substitute(original.body, to_blocked);
  cache->output = ir::Buffer(cache_name, original.output.dtype(), blocked.shape, step.scope);

  auto copy = std::make_shared<te::Operation>();
  copy->kind = te::OpKind::Compute;
  copy->name = original.name;
  copy->tag = "cache_copy";
  copy->output = original.output;
  copy->axes = original.axes;
  std::vector<ir::Expr> indices;
  for (const ir::IterVar& axis : original.axes) {
    indices.push_back(axis.var);
  }
  copy->body = ir::Load::make(cache->output, blocked_indices(step.blocks, std::move(indices)));
  copy->inputs = {cache};

  Stage cache_stage;
  cache_stage.name = cache_name;
  cache_stage.op = cache;
  cache_stage.root_axes = root_axes_of(*cache);
  cache_stage.leaf_axes = cache_stage.root_axes;

  Stage& rewritten = next.mutable_stage(step.stage);
  rewritten.op = copy;
  rewritten.root_axes = root_axes_of(*copy);
  rewritten.leaf_axes = rewritten.root_axes;
  next.insert_stage(static_cast<size_t>(next.stage_index(step.stage)), std::move(cache_stage));
  return next;
}

}  // namespace tensortune::schedule

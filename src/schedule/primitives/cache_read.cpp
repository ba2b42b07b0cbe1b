// SPDX-License-Identifier: Apache-2.0
// cache_read: a new stage "T.<scope>" copies tensor T into a buffer of that
// scope, and the chosen readers load from the copy instead (their ops are
// rebuilt with the loads redirected). A blocked copy (CacheRead::blocks) has the layout the
// blocks give, and the readers' indices are mapped to it: index x of a dimension blocked by f
// becomes x / f in place and x % f in the block's dimension at the end. A padded block's copy is
// rounded up to whole blocks, zero past the tensor's extent.
#include "../buffer_access.h"
#include "primitives.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <array>
#include <memory>

namespace tensortune::schedule {
namespace {

// Axis names of the copy: the producer's own for a compute; for a placeholder, te::compute's
// defaults (i, j, k, l, m, n, then a6, a7, ...).
std::vector<std::string> copy_axis_names(const te::Operation& producer) {
  static constexpr std::array<const char*, 6> kLetters = {"i", "j", "k", "l", "m", "n"};
  std::vector<std::string> names;
  for (size_t d = 0; d < producer.output.shape().size(); ++d) {
    if (!producer.is_placeholder()) {
      names.push_back(producer.axes[d].var.name());
    } else if (d < kLetters.size()) {
      names.emplace_back(kLetters[d]);
    } else {
      names.push_back("a" + std::to_string(d));
    }
  }
  return names;
}

std::shared_ptr<te::Operation> make_copy_op(const te::OperationRef& producer,
                                            const std::string& name,
                                            const CacheRead& step) {
  auto copy = std::make_shared<te::Operation>();
  copy->kind = te::OpKind::Compute;
  copy->name = name;
  copy->tag = "cache_copy";
  const ir::Buffer& source = producer->output;
  check_layout_blocks("cache_read", step.stage, step.blocks, source.shape());
  std::vector<ir::IterVar> axes;
  std::vector<std::string> names = copy_axis_names(*producer);
  for (size_t d = 0; d < names.size(); ++d) {
    axes.push_back(ir::IterVar{ir::Var(names[d]), source.shape()[d], ir::IterKind::DataPar});
  }
  BlockedAxes blocked = blocked_axes(axes, step.blocks);
  copy->output = ir::Buffer(name, source.dtype(), blocked.shape, step.scope);
  copy->axes = blocked.axes;
  // A padded block reads an element inside the tensor (its index clamped) and keeps zero past it.
  std::vector<ir::Expr> index = blocked.source;
  ir::Expr inside;
  for (const LayoutBlock& b : step.blocks) {
    const auto d = static_cast<size_t>(b.dim);
    const int64_t extent = source.shape()[d];
    if (!b.pad || extent % b.factor == 0) {
      continue;
    }
    const ir::Expr last = ir::make_const(index[d].type(), extent - 1);
    ir::Expr in = index[d] <= last;
    inside = inside.defined() ? (inside && in) : in;
    index[d] = ir::min(index[d], last);
  }
  ir::Expr value = ir::Load::make(source, index);
  copy->body =
      inside.defined() ? ir::select(inside, value, ir::make_const(source.dtype(), 0.0)) : value;
  copy->inputs = {producer};
  return copy;
}

std::vector<std::string> checked_readers(const LoopState& state, const CacheRead& step) {
  std::vector<std::string> consumers = state.consumers(step.stage);
  if (consumers.empty()) {
    throw ScheduleError("cache_read: stage '" + step.stage + "' has no consumers");
  }
  if (step.readers.empty()) {
    return consumers;
  }
  for (size_t n = 0; n < step.readers.size(); ++n) {
    const std::string& reader = step.readers[n];
    if (std::find(consumers.begin(), consumers.end(), reader) == consumers.end()) {
      throw ScheduleError("cache_read: stage '" + reader + "' does not read '" + step.stage +
                          "' (consumers: " + join_names(consumers) + ")");
    }
    if (std::find(step.readers.begin(), step.readers.begin() + static_cast<std::ptrdiff_t>(n),
                  reader) != step.readers.begin() + static_cast<std::ptrdiff_t>(n)) {
      throw ScheduleError("cache_read: reader '" + reader + "' listed twice");
    }
  }
  return step.readers;
}

/// Whether `x` is a padded cache_write's own index of a blocked axis, o * f + o.b over the
/// reader's axes o (extent n) and o.b (extent f), and n * f fits a copy padded to `padded`: the
/// points past the tensor are the cache's padding, which no copy out reads.
bool cache_padding_index(const te::Operation& reader, const ir::Expr& x, int64_t padded) {
  const auto* add = x.as<ir::Add>();
  const auto* mul = add != nullptr ? add->a.as<ir::Mul>() : nullptr;
  const auto* inner = add != nullptr ? add->b.as<ir::VarNode>() : nullptr;
  const auto* outer = mul != nullptr ? mul->a.as<ir::VarNode>() : nullptr;
  const int64_t* factor = mul != nullptr ? ir::as_const_int(mul->b) : nullptr;
  if (inner == nullptr || outer == nullptr || factor == nullptr ||
      inner->name != outer->name + ".b") {
    return false;
  }
  int64_t outer_extent = 0;
  int64_t inner_extent = 0;
  for (const ir::IterVar& axis : reader.axes) {
    if (axis.var.get() == outer)
      outer_extent = axis.extent;
    if (axis.var.get() == inner)
      inner_extent = axis.extent;
  }
  return inner_extent == *factor && outer_extent > 0 && outer_extent * *factor <= padded;
}

// The reader's op, loading from `cache` where it loaded from the producer.
te::OperationRef redirect_reader(const te::Operation& reader,
                                 const ir::Buffer& from,
                                 const te::OperationRef& cache,
                                 const std::vector<LayoutBlock>& blocks) {
  auto op = std::make_shared<te::Operation>(reader);
  IndexMap map;
  if (!blocks.empty()) {
    const std::vector<int64_t>& shape = from.shape();
    map = [&blocks, &shape, &reader](std::vector<ir::Expr> i) {
      // A padded cache_write's index clamped to the tensor's last element reads the copy's zero
      // padding instead: the same lanes, never stored, and a dense vector. Other clamps are the
      // compute's own meaning (an edge replicated) and stay.
      for (const LayoutBlock& b : blocks) {
        const auto d = static_cast<size_t>(b.dim);
        const auto* clamp = i[d].as<ir::Min>();
        const int64_t padded = (shape[d] + b.factor - 1) / b.factor * b.factor;
        if (b.pad && clamp != nullptr && ir::is_const_int(clamp->b, shape[d] - 1) &&
            cache_padding_index(reader, clamp->a, padded))
          i[d] = clamp->a;
      }
      return blocked_indices(blocks, std::move(i));
    };
  }
  op->body = redirect_loads(reader.body, from, cache->output, map);
  for (te::OperationRef& input : op->inputs) {
    if (input->output.same_as(from)) {
      input = cache;
    }
  }
  return op;
}

}  // namespace

LoopState apply_primitive(const LoopState& state, const CacheRead& step) {
  LoopState next = state;
  const Stage& stage = stage_for_step(next, "cache_read", step.stage);
  if (stage.attach == AttachKind::Inline) {
    throw ScheduleError("cache_read: stage '" + step.stage + "' is inlined and has no buffer");
  }
  constexpr int64_t kMaxRowPad = 64;
  if (step.row_pad < 0 || step.row_pad > kMaxRowPad) {
    throw ScheduleError("cache_read: row_pad " + std::to_string(step.row_pad) + " of '" +
                        step.stage + "' is outside 0.." + std::to_string(kMaxRowPad));
  }
  constexpr int64_t kMaxStages = 4;
  if (step.stages < 0 || step.stages > kMaxStages) {
    throw ScheduleError("cache_read: stages " + std::to_string(step.stages) + " of '" + step.stage +
                        "' is outside 0.." + std::to_string(kMaxStages));
  }
  std::vector<std::string> readers = checked_readers(next, step);
  std::string name = unique_stage_name(next, step.stage + "." + scope_name(step.scope));
  te::OperationRef producer = stage.op;
  std::shared_ptr<te::Operation> copy = make_copy_op(producer, name, step);

  Stage cache_stage;
  cache_stage.name = name;
  cache_stage.op = copy;
  cache_stage.root_axes = root_axes_of(*copy);
  cache_stage.leaf_axes = cache_stage.root_axes;
  cache_stage.row_pad = step.row_pad;
  cache_stage.stages = step.stages;
  for (const std::string& reader : readers) {
    next.replace_op(reader,
                    redirect_reader(*next.stage(reader).op, producer->output, copy, step.blocks));
  }
  next.insert_stage(static_cast<size_t>(next.stage_index(step.stage)) + 1, std::move(cache_stage));
  return next;
}

}  // namespace tensortune::schedule

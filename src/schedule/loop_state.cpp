// SPDX-License-Identifier: Apache-2.0
// The loop state: one stage per operation with its root and leaf axes, plus the
// producer/consumer queries the primitives and the search use. Consumers are
// found from the loads in each stage's current op, so cache_read/cache_write
// rewrites are seen without extra bookkeeping.
#include "tensortune/schedule/loop_state.h"

#include "buffer_access.h"
#include "tensortune/support/error.h"

#include <utility>

namespace tensortune::schedule {

int Stage::leaf_index(const std::string& axis_name) const {
  for (size_t i = 0; i < leaf_axes.size(); ++i) {
    if (leaf_axes[i].name == axis_name) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

std::vector<Axis> root_axes_of(const te::Operation& op) {
  std::vector<Axis> iters;
  if (op.is_placeholder()) {
    return iters;
  }
  for (const ir::IterVar& axis : op.axes) {
    iters.push_back(Axis{axis.var.name(), axis.extent, ir::IterKind::DataPar});
  }
  for (const ir::IterVar& axis : op.reduce_axes()) {
    iters.push_back(Axis{axis.var.name(), axis.extent, ir::IterKind::Reduce});
  }
  return iters;
}

LoopState::LoopState(te::Workload workload) : workload_(std::move(workload)) {
  for (const te::OperationRef& op : workload_.ops()) {
    Stage stage;
    stage.name = op->name;
    stage.op = op;
    stage.root_axes = root_axes_of(*op);
    stage.leaf_axes = stage.root_axes;
    for (const te::Tensor& out : workload_.outputs()) {
      stage.is_output = stage.is_output || out.op() == op;
    }
    stages_.push_back(std::move(stage));
  }
}

const Stage& LoopState::stage(const std::string& name) const {
  int index = stage_index(name);
  if (index < 0) {
    std::string names;
    for (const Stage& s : stages_) {
      names += (names.empty() ? "" : ", ") + s.name;
    }
    throw ScheduleError("no stage named '" + name + "' (stages: " + names + ")");
  }
  return stages_[static_cast<size_t>(index)];
}

Stage& LoopState::mutable_stage(const std::string& name) {
  return const_cast<Stage&>(static_cast<const LoopState*>(this)->stage(name));
}

int LoopState::stage_index(const std::string& name) const {
  for (size_t i = 0; i < stages_.size(); ++i) {
    if (stages_[i].name == name) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

bool LoopState::computed_within(const Stage& stage,
                                const std::string& target,
                                const std::string& axis) const {
  if (stage.attach != AttachKind::At || stage.attach_stage != target) {
    return false;
  }
  const Stage& t = this->stage(target);
  return t.leaf_index(stage.attach_axis) >= t.leaf_index(axis);
}

std::vector<std::string> LoopState::consumers(const std::string& name) const {
  const ir::Buffer& buffer = stage(name).op->output;
  std::vector<std::string> result;
  for (const Stage& s : stages_) {
    if (s.name != name && reads_buffer(*s.op, buffer)) {
      result.push_back(s.name);
    }
  }
  return result;
}

std::vector<std::string> LoopState::producers(const std::string& name) const {
  const Stage& consumer = stage(name);
  std::vector<std::string> result;
  for (const Stage& s : stages_) {
    if (s.name != name && reads_buffer(*consumer.op, s.op->output)) {
      result.push_back(s.name);
    }
  }
  return result;
}

void LoopState::insert_stage(size_t index, Stage stage) {
  TT_CHECK(index <= stages_.size()) << "stage index " << index << " out of range";
  TT_CHECK(stage_index(stage.name) < 0) << "duplicate stage name '" << stage.name << "'";
  stages_.insert(stages_.begin() + static_cast<std::ptrdiff_t>(index), std::move(stage));
}

void LoopState::replace_op(const std::string& name, te::OperationRef op) {
  Stage& s = mutable_stage(name);
  TT_CHECK(op != nullptr && op->kind == s.op->kind) << "replace_op: kind change for " << name;
  TT_CHECK(op->axes.size() == s.op->axes.size()) << "replace_op: axis count change for " << name;
  for (size_t i = 0; i < op->axes.size(); ++i) {
    TT_CHECK(op->axes[i].var.same_as(s.op->axes[i].var))
        << "replace_op: axis " << i << " of " << name << " is a different variable";
  }
  std::vector<ir::IterVar> old_reduce = s.op->reduce_axes();
  std::vector<ir::IterVar> new_reduce = op->reduce_axes();
  TT_CHECK(old_reduce.size() == new_reduce.size())
      << "replace_op: reduction axis count change for " << name;
  for (size_t i = 0; i < new_reduce.size(); ++i) {
    TT_CHECK(new_reduce[i].var.same_as(old_reduce[i].var))
        << "replace_op: reduction axis " << i << " of " << name << " is a different variable";
  }
  s.op = std::move(op);
}

}  // namespace tensortune::schedule

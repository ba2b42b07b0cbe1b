// SPDX-License-Identifier: Apache-2.0
// Lookups and checks shared by the primitives; each failure is a ScheduleError
// whose message starts with the step word and names the stage and axis.
#include "primitives.h"
#include "tensortune/support/error.h"

namespace tensortune::schedule {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : ", ") + names[i];
  }
  return out;
}

std::vector<std::string> leaf_names(const Stage& stage) {
  std::vector<std::string> names;
  for (const Axis& iter : stage.leaf_axes) {
    names.push_back(iter.name);
  }
  return names;
}

const Stage& stage_for_step(const LoopState& state, const char* what, const std::string& name) {
  int index = state.stage_index(name);
  if (index < 0) {
    std::vector<std::string> names;
    for (const Stage& s : state.stages()) {
      names.push_back(s.name);
    }
    throw ScheduleError(std::string(what) + ": no stage '" + name +
                        "' (stages: " + join_names(names) + ")");
  }
  return state.stages()[static_cast<size_t>(index)];
}

Stage& stage_for_step(LoopState& state, const char* what, const std::string& name) {
  stage_for_step(static_cast<const LoopState&>(state), what, name);
  return state.mutable_stage(name);
}

void require_compute(const Stage& stage, const char* what) {
  if (stage.is_placeholder()) {
    throw ScheduleError(std::string(what) + ": stage '" + stage.name +
                        "' is a placeholder (an input) and has no loops");
  }
}

int leaf_for_step(const Stage& stage, const char* what, const std::string& axis) {
  require_compute(stage, what);
  int index = stage.leaf_index(axis);
  if (index < 0) {
    throw ScheduleError(std::string(what) + ": stage '" + stage.name + "' has no axis '" + axis +
                        "' (axes: " + join_names(leaf_names(stage)) + ")");
  }
  return index;
}

void require_fresh_axis_name(const Stage& stage, const char* what, const std::string& name) {
  bool taken = stage.leaf_index(name) >= 0;
  for (const Axis& iter : stage.root_axes) {
    taken = taken || iter.name == name;
  }
  for (const Relation& relation : stage.relations) {
    if (const auto* split = std::get_if<SplitRelation>(&relation)) {
      taken = taken || split->parent == name || split->outer == name || split->inner == name;
    } else if (const auto* fuse = std::get_if<FuseRelation>(&relation)) {
      taken = taken || fuse->fused == name;
    }
  }
  if (taken) {
    throw ScheduleError(std::string(what) + ": stage '" + stage.name +
                        "' already has an axis named '" + name + "'");
  }
}

void move_attachments(LoopState& state,
                      const std::string& stage_name,
                      const std::vector<std::string>& from,
                      const std::string& to) {
  for (const Stage& s : state.stages()) {
    if (s.attach != AttachKind::At || s.attach_stage != stage_name) {
      continue;
    }
    for (const std::string& axis : from) {
      if (s.attach_axis == axis) {
        state.mutable_stage(s.name).attach_axis = to;
        break;
      }
    }
  }
}

std::vector<std::string> attached_stages(const LoopState& state, const std::string& stage_name) {
  std::vector<std::string> names;
  for (const Stage& s : state.stages()) {
    if (s.attach == AttachKind::At && s.attach_stage == stage_name) {
      names.push_back(s.name);
    }
  }
  return names;
}

std::string unique_stage_name(const LoopState& state, const std::string& base) {
  std::string name = base;
  for (int n = 1; state.stage_index(name) >= 0; ++n) {
    name = base + "." + std::to_string(n);
  }
  return name;
}

}  // namespace tensortune::schedule

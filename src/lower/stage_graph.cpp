// SPDX-License-Identifier: Apache-2.0
// The stage graph of a loop state as lowering sees it: inlined stages are substituted first, so
// consumers are those after inlining, and a compute_at stage must be read by its target alone
// (its region is inferred from that target's reads only).
#include "stage_graph.h"

#include "tensortune/ir/ir_visitor.h"
#include "tensortune/lower/inline_compute.h"
#include "tensortune/support/error.h"

namespace tensortune::lower {
namespace {

bool reads(const ir::Expr& body, const ir::Buffer& buffer) {
  bool found = false;
  ir::post_order_visit(body, [&](const ir::Expr& n) {
    if (const auto* load = n.as<ir::Load>()) {
      found = found || load->buffer.same_as(buffer);
    }
  });
  return found;
}

void find_attachments(const schedule::LoopState& state, StageGraph* graph) {
  const std::vector<schedule::Stage>& stages = state.stages();
  for (size_t s = 0; s < stages.size(); ++s) {
    const schedule::Stage& st = stages[s];
    if (st.is_placeholder()) {
      continue;
    }
    TT_USER_CHECK(!st.op->output.shape().empty())
        << "lowering: stage '" << st.name << "' has a rank-0 output; give it shape [1]";
    if (st.is_output && st.attach != schedule::AttachKind::Root) {
      throw ScheduleError("lowering: stage '" + st.name +
                          "' is an output of the workload and must be computed at the root");
    }
    if (st.attach == schedule::AttachKind::Inline && st.op->reduce() != nullptr) {
      throw ScheduleError("compute_inline: stage '" + st.name +
                          "' is a reduction and cannot be inlined");
    }
    if (st.attach != schedule::AttachKind::At) {
      continue;
    }
    int t = state.stage_index(st.attach_stage);
    if (t < 0 || stages[static_cast<size_t>(t)].is_placeholder() ||
        stages[static_cast<size_t>(t)].attach == schedule::AttachKind::Inline) {
      throw ScheduleError("compute_at: stage '" + st.name + "' is attached to '" + st.attach_stage +
                          "', which is not a stage with loops");
    }
    if (stages[static_cast<size_t>(t)].leaf_index(st.attach_axis) < 0) {
      throw ScheduleError("compute_at: stage '" + st.name + "' is attached at axis '" +
                          st.attach_axis + "' of stage '" + st.attach_stage +
                          "', which has no such axis");
    }
    graph->attached[{static_cast<size_t>(t), st.attach_axis}].push_back(s);
  }
}

void inline_bodies(const schedule::LoopState& state, StageGraph* graph) {
  const std::vector<schedule::Stage>& stages = state.stages();
  InlineMap inlined;
  graph->bodies.resize(stages.size());
  for (size_t s = 0; s < stages.size(); ++s) {
    const schedule::Stage& st = stages[s];
    if (st.is_placeholder()) {
      continue;
    }
    graph->bodies[s] = inline_compute(st.op->body, inlined);
    if (st.attach == schedule::AttachKind::Inline) {
      InlinedStage def;
      for (const ir::IterVar& a : st.op->axes) {
        def.axes.push_back(a.var);
      }
      def.body = graph->bodies[s];
      inlined[st.op->output.get()] = std::move(def);
    }
  }
}

/// A compute_at stage is computed for its target's reads only, so no other stage may read it,
/// except one computed inside the same loop of the target (whose reads then count as the
/// target's).
void check_consumers(const schedule::LoopState& state, const StageGraph& graph) {
  const std::vector<schedule::Stage>& stages = state.stages();
  for (size_t s = 0; s < stages.size(); ++s) {
    const schedule::Stage& st = stages[s];
    if (st.is_placeholder() || st.attach != schedule::AttachKind::At) {
      continue;
    }
    bool read_by_target = false;
    for (size_t c = 0; c < stages.size(); ++c) {
      const schedule::Stage& reader = stages[c];
      if (c == s || reader.is_placeholder() || reader.attach == schedule::AttachKind::Inline ||
          !reads(graph.bodies[c], st.op->output)) {
        continue;
      }
      // A reader computed within the same loop of the target, after `st` (its region is inferred
      // from the target's reads and that reader's).
      const bool within = state.computed_within(reader, st.attach_stage, st.attach_axis) &&
                          state.stage_index(reader.name) > state.stage_index(st.name);
      if (reader.name != st.attach_stage && !within) {
        throw ScheduleError("compute_at: stage '" + st.name + "' is computed at axis '" +
                            st.attach_axis + "' of stage '" + st.attach_stage +
                            "' but is also read by stage '" + reader.name +
                            "'; only its sole consumer, or a stage that consumer computes "
                            "inside that loop, can compute it");
      }
      read_by_target = true;
    }
    if (!read_by_target) {
      throw ScheduleError("compute_at: stage '" + st.name + "' is computed at axis '" +
                          st.attach_axis + "' of stage '" + st.attach_stage +
                          "', which does not read it");
    }
  }
}

}  // namespace

StageGraph analyze_stages(const schedule::LoopState& state) {
  StageGraph graph;
  find_attachments(state, &graph);
  inline_bodies(state, &graph);
  check_consumers(state, graph);
  return graph;
}

}  // namespace tensortune::lower

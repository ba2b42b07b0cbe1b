// SPDX-License-Identifier: Apache-2.0
// The loop structure a schedule has built so far: per stage, its root axes, its current loop nest
// (leaf axes), the split/fuse relations between them, annotations and its attach point. Lowering
// turns it into loop IR; the search reads it to generate and mutate steps.
#pragma once

#include "tensortune/ir/expr.h"
#include "tensortune/ir/stmt.h"
#include "tensortune/te/workload.h"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace tensortune::schedule {

/// One loop axis of a stage.
struct Axis {
  std::string name;
  /// Nominal trip count from the full tensor extents. For a stage attached with compute_at,
  /// lowering recomputes extents from the inferred region; relations stay valid either way.
  int64_t extent = 0;
  ir::IterKind kind = ir::IterKind::DataPar;
  ir::ForKind annotation = ir::ForKind::Serial;
  int64_t auto_unroll_max_step = 0;
};

/// parent = outer * factor + inner, outer over ceil(parent/factor), inner over [0, factor).
struct SplitRelation {
  std::string parent, outer, inner;
  int64_t factor = 0;
};
/// fused = ((p0 * e1 + p1) * e2 + p2) ..., so p_last = fused % e_last, and so on outward.
struct FuseRelation {
  std::vector<std::string> parents;
  std::string fused;
};
using Relation = std::variant<SplitRelation, FuseRelation>;

enum class AttachKind : uint8_t { Root, Inline, At };

struct Stage {
  std::string name;
  /// The operation computed by this stage; rewritten by cache_read/cache_write (a reader of a
  /// cached tensor reads the cache buffer), so it can differ from the workload's operation.
  te::OperationRef op;
  /// The op's data-parallel axes, then its reduction axes; names are the axis variable names.
  std::vector<Axis> root_axes;
  /// The current loop nest, outermost first.
  std::vector<Axis> leaf_axes;
  /// Applied in order; lowering replays them to express root axes through leaf loop variables.
  std::vector<Relation> relations;
  AttachKind attach = AttachKind::Root;
  /// When attach == At: the consumer stage and one of its leaf axes. It stays a leaf: a split of
  /// that axis moves the attachment to the inner piece ("j" -> "j.i"), a fuse to the fused axis.
  std::string attach_stage, attach_axis;
  bool is_output = false;
  /// Elements its buffer's rows are padded by (CacheRead::row_pad).
  int64_t row_pad = 0;
  /// The software pipeline depth its fetches ask for (CacheRead::stages).
  int64_t stages = 0;

  bool is_placeholder() const { return op->is_placeholder(); }
  /// Index of the leaf axis named `name`, or -1.
  int leaf_index(const std::string& name) const;
};

class LoopState {
 public:
  /// The initial state: one stage per operation of `workload`, root loops = leaf loops.
  explicit LoopState(te::Workload workload);

  const te::Workload& workload() const { return workload_; }
  /// All stages, producers before consumers (cache stages right before/after their tensor).
  const std::vector<Stage>& stages() const { return stages_; }
  /// The stage named `name`; ScheduleError listing the stage names when there is none.
  const Stage& stage(const std::string& name) const;
  Stage& mutable_stage(const std::string& name);
  /// Index in stages(), or -1.
  int stage_index(const std::string& name) const;
  /// Names of the stages whose (current) op reads stage `name`'s output buffer, in stage order.
  std::vector<std::string> consumers(const std::string& name) const;
  /// Names of the stages whose outputs stage `name`'s op reads.
  std::vector<std::string> producers(const std::string& name) const;
  /// Whether `stage` is computed at a loop of stage `target` at or inside its leaf `axis` (so a
  /// producer of `stage` computed at `axis` of `target` covers what `stage` reads there).
  bool computed_within(const Stage& stage,
                       const std::string& target,
                       const std::string& axis) const;

  /// Inserts `stage` at `index` (used by cache_read / cache_write).
  void insert_stage(size_t index, Stage stage);
  /// Replaces the op of stage `name`, keeping its loops (same axis variables required).
  void replace_op(const std::string& name, te::OperationRef op);

 private:
  te::Workload workload_;
  std::vector<Stage> stages_;
};

/// The initial root/leaf iterators of an operation (data-parallel axes, then reduction axes).
std::vector<Axis> root_axes_of(const te::Operation& op);

}  // namespace tensortune::schedule

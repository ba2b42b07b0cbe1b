// SPDX-License-Identifier: Apache-2.0
// Schedule steps: a closed set of plain values. Axes are referred to by name ("i", "i.o", "k.i",
// "i.o@j.o"), stages by their operation's name ("C", "C.local", "A.shared").
#pragma once

#include "tensortune/ir/expr.h"
#include "tensortune/ir/stmt.h"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace tensortune::schedule {

/// axis -> axis.o (outer), axis.i (inner). `factor` is the inner extent, or the outer extent when
/// `nparts` is set. A factor that does not divide the extent gives a guarded tail.
struct Split {
  std::string stage, axis;
  int64_t factor = 0;
  bool nparts = false;
};

/// Adjacent axes (outer to inner) -> one axis named "a@b@c".
struct Fuse {
  std::string stage;
  std::vector<std::string> axes;
};

/// The name of the axis Fuse makes of `axes`: "a@b@c" (one axis keeps its name).
std::string fused_axis_name(const std::vector<std::string>& axes);

/// Puts the listed axes in this order, in the loop positions they occupied; others stay.
struct Reorder {
  std::string stage;
  std::vector<std::string> order;
};

/// Split x by x_factor and y by y_factor, then order x.o, y.o, x.i, y.i (x and y adjacent, x
/// outer).
struct Tile {
  std::string stage, x, y;
  int64_t x_factor = 0, y_factor = 0;
};

/// Sets how an axis runs: Vectorized, Unrolled, Parallel, or a GPU binding (BlockX, ThreadX, ...);
/// Serial clears an annotation. GPU bindings are checked against the target when lowered.
struct Annotate {
  std::string stage, axis;
  ir::ForKind kind = ir::ForKind::Serial;
};

/// Asks the unroll pass to unroll loop nests under `axis` with at most `max_step` iterations.
struct PragmaUnroll {
  std::string stage, axis;
  int64_t max_step = 0;
};

/// Computes `stage` inside loop `target_axis` of its consumer `target_stage`, only for the region
/// that loop's body reads.
struct ComputeAt {
  std::string stage, target_stage, target_axis;
};

/// Substitutes the (non-reduction, non-output) stage's body into its consumers.
struct ComputeInline {
  std::string stage;
};

/// Computes the stage in full at the function's top level (undoes compute_at / compute_inline).
struct ComputeRoot {
  std::string stage;
};

/// One blocked dimension of a cache stage's buffer (cache_read, cache_write): dimension `dim` of
/// the tensor becomes dim / factor in place, and dim % factor a new dimension after the tensor's
/// own (the copy of conv weights OIHW with block {0, 16} is OIHW16o). With `outer_first`, dim /
/// factor moves before the tensor's own dimensions instead (outer_first blocks in their order):
/// a matmul's B [K, N] with {1, 64, outer_first} is [N/64, K, 64], the packed panels of a GEMM
/// kernel. `factor` must divide the dimension's extent, unless `pad`: then the buffer has
/// ceil(extent / factor) blocks. A cache_read copy holds zeros past the extent (B [1000, 513]
/// with {1, 32, outer_first, pad} is [17, 1000, 32], its last panel one column and 31 zeros); a
/// cache_write stage computes the last element again there, and the copy out never reads it.
struct LayoutBlock {
  int64_t dim = 0;
  int64_t factor = 1;
  bool outer_first = false;
  bool pad = false;
  bool operator==(const LayoutBlock& o) const {
    return dim == o.dim && factor == o.factor && outer_first == o.outer_first && pad == o.pad;
  }
};

/// Adds stage "<stage>.local" (or ".shared"/".global" by scope) that computes the stage's value
/// into a scratch buffer; the original stage becomes a copy from it. The stage must be untouched
/// by earlier steps. With `blocks` (see LayoutBlock), the scratch buffer has that blocked layout
/// and the new stage's axes are the blocked ones (axis "<name>.b" for the block of "<name>").
struct CacheWrite {
  std::string stage;
  ir::MemoryScope scope = ir::MemoryScope::Local;
  std::vector<LayoutBlock> blocks = {};
};

/// Adds stage "<stage>.local"/".shared"/".global" copying tensor `stage`; `readers` (all consumers
/// when empty) read the copy instead. With `blocks`, the copy has that blocked layout (its new
/// innermost dimensions in listed order; axis "<name>.b" for the block of axis "<name>") and the
/// readers' indices are mapped to it.
struct CacheRead {
  std::string stage;
  ir::MemoryScope scope = ir::MemoryScope::Local;
  std::vector<std::string> readers;
  std::vector<LayoutBlock> blocks = {};
  /// Elements added to the innermost dimension of the copy's buffer wherever it is allocated
  /// (its row pitch), so that copies transposed into shared memory fall in other banks; the copy
  /// and its readers still touch only the first `extent` elements of each row. 0 to 64.
  int64_t row_pad = 0;
  /// For a shared copy filled inside a serial loop of a CUDA kernel: the depth of that loop's
  /// software pipeline, the tiles in flight plus the one computed (2 to 4; 1: none; 0: the
  /// target's default). The deepest of a loop's copies counts; CPU targets ignore it.
  int64_t stages = 0;
};

using Step = std::variant<Split,
                          Fuse,
                          Reorder,
                          Tile,
                          Annotate,
                          PragmaUnroll,
                          ComputeAt,
                          ComputeInline,
                          ComputeRoot,
                          CacheWrite,
                          CacheRead>;

/// The step's kind as a short word ("split", "fuse", ...), as used in JSON. An Annotate step's
/// word is its loop kind: "serial", "parallel", "vectorize", "unroll", "blockIdx.x", ...,
/// "threadIdx.z" (its JSON has no separate annotation field).
const char* step_kind(const Step& step);
/// One readable line, e.g. "split C.i by 8", "vectorize C.j.i", "compute_at C.local C.j.o".
std::string to_string(const Step& step);
/// Value equality of steps (same kind and fields).
bool operator==(const Step& a, const Step& b);

/// "local", "shared", "global" and back (UserError on anything else).
const char* scope_name(ir::MemoryScope scope);
ir::MemoryScope parse_scope(const std::string& text);

}  // namespace tensortune::schedule

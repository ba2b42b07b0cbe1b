// SPDX-License-Identifier: Apache-2.0
// Linear access analysis of a buffer access: its stride with respect to each enclosing loop and
// its lanes, and the unique elements and cache lines it touches over the innermost loops.
#pragma once

#include "store_walker.h"
#include "tensortune/ir/expr.h"

#include <cstdint>
#include <vector>

namespace tensortune::cost_model {

/// Bytes per cache line assumed by the line counts.
inline constexpr int64_t kCacheLineBytes = 64;

/// How one access (a load or the store) moves through memory.
struct AccessPattern {
  ir::Buffer buffer;
  int lanes = 1;
  int64_t lane_stride = 0;       ///< elements between adjacent lanes (0: broadcast or scalar)
  std::vector<int64_t> strides;  ///< elements per step of each enclosing loop, outer to inner
};

/// Analyses an access of `buffer` at `indices` (one flattened index, or one per dimension) with
/// `lanes` lanes, by finite differences at the site's base point. Exact for indices linear in the
/// loop variables; a local linearisation otherwise (fused loops, clamps).
AccessPattern analyze_access(const ir::Buffer& buffer,
                             const std::vector<ir::Expr>& indices,
                             int lanes,
                             const StoreSite& site);

/// Unique elements and cache lines touched.
struct Footprint {
  double elements = 1;
  double lines = 1;
};

/// The footprint of the access over its lanes and its `levels` innermost loops (clamped to the
/// number of loops). Strided groups are combined as boxes; overlapping groups (a stencil, equal
/// strides) keep the density of the part already covered.
Footprint footprint(const AccessPattern& access, const std::vector<LoopInfo>& loops, size_t levels);

}  // namespace tensortune::cost_model

// SPDX-License-Identifier: Apache-2.0
// Access analysis for the features (Ansor, OSDI'20, section 5.2; Adams et al., SIGGRAPH'19): the
// stride of an index per loop comes from finite differences of the evaluated index, and footprints
// combine the (stride, extent) groups of the innermost loops into unique elements and lines.
#include "access_pattern.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace tensortune::cost_model {
namespace {

// The row-major flattened index as a double (so huge saturated values cannot overflow).
double flat_index(const std::vector<ir::Expr>& indices,
                  const std::vector<int64_t>& shape,
                  const EvalEnv& env,
                  int lane) {
  if (indices.size() == 1) {
    return static_cast<double>(eval_index(indices[0], env, lane));
  }
  double flat = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    double dim = d < shape.size() ? static_cast<double>(shape[d]) : 1.0;
    flat = flat * dim + static_cast<double>(eval_index(indices[d], env, lane));
  }
  return flat;
}

int64_t to_stride(double diff) {
  constexpr double kLimit = 4.0e18;
  return static_cast<int64_t>(std::clamp(diff, -kLimit, kLimit));
}

// (|stride|, extent) groups of the lanes and the `levels` innermost loops; equal strides merged
// (two loops moving the same way, as y and ry in a convolution, cover e1 + e2 - 1 positions).
std::vector<std::pair<double, double>> stride_groups(const AccessPattern& access,
                                                     const std::vector<LoopInfo>& loops,
                                                     size_t levels) {
  std::vector<std::pair<double, double>> groups;
  if (access.lanes > 1 && access.lane_stride != 0) {
    groups.emplace_back(std::fabs(static_cast<double>(access.lane_stride)), access.lanes);
  }
  size_t n = std::min(loops.size(), access.strides.size());
  for (size_t l = n - std::min(levels, n); l < n; ++l) {
    if (loops[l].extent > 1 && access.strides[l] != 0) {
      groups.emplace_back(std::fabs(static_cast<double>(access.strides[l])),
                          static_cast<double>(loops[l].extent));
    }
  }
  std::sort(groups.begin(), groups.end());
  std::vector<std::pair<double, double>> merged;
  for (const auto& g : groups) {
    if (!merged.empty() && merged.back().first == g.first) {
      merged.back().second += g.second - 1;
    } else {
      merged.push_back(g);
    }
  }
  return merged;
}

}  // namespace

AccessPattern analyze_access(const ir::Buffer& buffer,
                             const std::vector<ir::Expr>& indices,
                             int lanes,
                             const StoreSite& site) {
  AccessPattern access;
  access.buffer = buffer;
  access.lanes = std::max(1, lanes);
  EvalEnv env = site.env;
  const std::vector<int64_t>& shape = buffer.shape();
  double base = flat_index(indices, shape, env, 0);
  if (access.lanes > 1) {
    access.lane_stride = to_stride(flat_index(indices, shape, env, 1) - base);
  }
  access.strides.reserve(site.loops.size());
  for (const LoopInfo& loop : site.loops) {
    if (loop.extent < 2) {
      access.strides.push_back(0);
      continue;
    }
    int64_t& value = env.values[loop.var];
    ++value;
    access.strides.push_back(to_stride(flat_index(indices, shape, env, 0) - base));
    --value;
  }
  return access;
}

Footprint footprint(const AccessPattern& access,
                    const std::vector<LoopInfo>& loops,
                    size_t levels) {
  const double elem_bytes = std::max(1, access.buffer.dtype().bytes());
  const auto line = static_cast<double>(kCacheLineBytes);
  Footprint fp;
  double span = 1;                 // elements from the first to the last touched
  double span_bytes = elem_bytes;  // the same in bytes
  for (const auto& [stride, extent] : stride_groups(access, loops, levels)) {
    // Elements: a group at least as wide as the covered span repeats it; a narrower one overlaps
    // it and keeps its density.
    double new_span = span + stride * (extent - 1);
    fp.elements *= stride >= span ? extent : new_span / span;
    span = new_span;
    // Lines: groups that step less than a line only widen the contiguous range.
    double stride_bytes = stride * elem_bytes;
    double new_span_bytes = span_bytes + stride_bytes * (extent - 1);
    if (stride_bytes < line) {
      fp.lines = std::ceil(new_span_bytes / line);
    } else {
      fp.lines *= stride_bytes >= span_bytes ? extent : new_span_bytes / span_bytes;
    }
    span_bytes = new_span_bytes;
  }
  fp.lines = std::min(fp.lines, fp.elements);
  return fp;
}

}  // namespace tensortune::cost_model

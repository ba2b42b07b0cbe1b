// SPDX-License-Identifier: Apache-2.0
// The factors of the sketch rules' plausibility prior (SearchSpace::prior): what a hand-written
// CPU kernel gets right without measuring (full vectors, a register tile that hides FMA latency
// without spilling, an unroll budget that covers it, a parallel loop with work for every core).
// The plans multiply the factors that apply to their knobs.
#include "search/sketch/rules.h"
#include "search/sketch/split_factors.h"

#include <algorithm>

namespace tensortune::search::detail {

double vector_prior(int64_t length, int64_t reach) {
  if (reach <= 1 || (length >= reach && length % reach == 0)) {
    return 1.0;
  }
  if (length < reach) {  // narrow vectors: a scalar loop on AVX-512 does a sixteenth of the work
    return std::max(0.1, static_cast<double>(length) / static_cast<double>(reach));
  }
  return 0.5;  // a partial vector after whole ones
}

double register_tile_prior(int64_t vectors, int64_t registers, int64_t most) {
  // Two FMA ports with four cycles of latency want eight independent accumulators; a few
  // registers stay free for the broadcast input and the addresses.
  const int64_t low = std::min(registers / 4, std::max<int64_t>(1, most));
  const int64_t high = registers - registers / 8;
  if (vectors > 2 * registers) {
    return 0.05;
  }
  if (vectors > high) {
    return 0.3;
  }
  if (vectors < low) {
    return 2 * vectors >= low ? 0.6 : 0.3;
  }
  return 1.0;
}

double tile_loads_prior(int64_t fmas, int64_t loads) {
  // A core issues two FMAs and two or three loads a cycle, so a tile that loads one value per FMA
  // or more (8x1 vectors: 8 broadcasts and a vector for 8 FMAs) waits on its loads; 4x2 (6 for 8)
  // or 6x4 (10 for 24) does not. batch_matmul 12x128x128x64 on AVX2, the best of each tile in
  // three 1000-trial jobs: 4x2 vectors 0.148-0.168 ms, 8x1 0.221-0.242, 4x1 0.205-0.279.
  if (loads <= 0 || 4 * fmas >= 5 * loads) {
    return 1.0;
  }
  return fmas >= loads ? 0.6 : 0.35;
}

double parallel_prior(int64_t extent, int64_t cores) {
  if (cores <= 1) {
    return 1.0;
  }
  if (extent < cores) {
    return 0.2;
  }
  if (extent % cores != 0 && extent < 4 * cores) {
    return 0.6;  // one core idles for a large share of the run
  }
  return 1.0;
}

double unroll_prior(int64_t budget, int64_t body) {
  // Without unrolling, the accumulators of the register tile stay an indexed array in memory.
  return body <= 1 || budget >= body ? 1.0 : 0.4;
}

double tail_prior(int64_t extent, int64_t tile) {
  if (extent <= 0 || tile <= 1) {
    return 1.0;
  }
  // conv2d 64x56x56->64 3x3 on AVX2, three 1000-trial jobs: the best record whose register tile
  // is 16 columns wide (2 vectors, a partial last tile) reached 0.87-0.92 of the best overall, all
  // 8 columns wide; the 90th percentiles differ by the same factor.
  const int64_t tiles = (extent + tile - 1) / tile;
  return static_cast<double>(extent) / static_cast<double>(tiles * tile);
}

double location_prior(int64_t bytes, int64_t recompute) {
  return (bytes > kSpillBytes ? 0.5 : 1.0) * (recompute > 1 ? 0.3 : 1.0);
}

int64_t vector_reach(int64_t extent, int64_t lanes) {
  const std::vector<int64_t> lengths = vector_choices(extent);
  return std::min(lanes, *std::max_element(lengths.begin(), lengths.end()));
}

double vector_nest_prior(const std::vector<int64_t>& extents,
                         int64_t length,
                         int64_t reach,
                         int64_t parallel,
                         int64_t cores) {
  double p = vector_prior(length, reach);
  if (parallel >= 0) {
    int64_t extent = 1;
    for (size_t d = 0; d < extents.size() && static_cast<int64_t>(d) < parallel; ++d) {
      extent *= d + 1 == extents.size() ? (extents[d] + length - 1) / length : extents[d];
    }
    p *= parallel_prior(extent, cores);
  }
  return p;
}

}  // namespace tensortune::search::detail

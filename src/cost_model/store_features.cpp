// SPDX-License-Identifier: Apache-2.0
// The store row: arithmetic, loop structure, guards, allocations, per-buffer access patterns and
// the arithmetic intensity curve of one store (Ansor, OSDI'20, section 5.2; Adams et al.,
// SIGGRAPH'19). Counts are scaled by log2(1 + x) so that XGBoost's splits see orders of magnitude.
#include "store_features.h"

#include "access_pattern.h"
#include "feature_layout.h"
#include "op_counter.h"
#include "tensortune/ir/ir_equal.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

namespace tensortune::cost_model {
namespace {

// The buffer features of one buffer of the statement, raw (scaled when written into the row).
struct BufferUse {
  const ir::BufferNode* node = nullptr;
  std::array<double, kNumBufferScalars> raw{};
  // Unique bytes over the innermost 1, 2, ..., kIntensityLevels loops.
  std::array<double, kIntensityLevels> level_bytes{};
};

bool is_param(const ir::LoweredFunc& func, const ir::Buffer& b, bool outputs_only) {
  for (size_t i = outputs_only ? func.num_inputs : 0; i < func.params.size(); ++i) {
    if (func.params[i].same_as(b)) {
      return true;
    }
  }
  return false;
}

double product(const std::vector<LoopInfo>& loops, size_t begin, size_t end) {
  double p = 1;
  for (size_t l = begin; l < end; ++l) {
    p *= static_cast<double>(loops[l].extent);
  }
  return p;
}

BufferUse buffer_use(const AccessPattern& access,
                     const StoreSite& site,
                     double trips,
                     bool write,
                     const ir::LoweredFunc& func) {
  const std::vector<LoopInfo>& loops = site.loops;
  const size_t n = loops.size();
  const double eb = access.buffer.dtype().bytes();
  BufferUse use;
  use.node = access.buffer.get();
  auto& r = use.raw;
  r[kBufRead] = write ? 0 : 1;
  r[kBufWrite] = write ? 1 : 0;
  r[kBufBytes] = access.lanes * eb * trips;
  Footprint all = footprint(access, loops, n);
  r[kBufUniqueBytes] = all.elements * eb;
  r[kBufUniqueLines] = all.lines;
  r[kBufLinesL1] = footprint(access, loops, 1).lines;
  r[kBufLinesL2] = footprint(access, loops, 2).lines;
  r[kBufLinesL3] = footprint(access, loops, 3).lines;
  r[kBufLinesL4] = footprint(access, loops, 4).lines;
  for (int k = 0; k < kIntensityLevels; ++k) {
    use.level_bytes[k] = footprint(access, loops, static_cast<size_t>(k) + 1).elements * eb;
  }
  r[kBufUniqueBytesL1] = use.level_bytes[0];
  r[kBufUniqueBytesL2] = use.level_bytes[1];
  // The stride of the innermost loop (or lane) that moves the access.
  if (access.lanes > 1 && access.lane_stride != 0) {
    r[kBufStride] = std::fabs(static_cast<double>(access.lane_stride));
  } else {
    for (size_t l = n; l-- > 0;) {
      if (loops[l].extent > 1 && access.strides[l] != 0) {
        r[kBufStride] = std::fabs(static_cast<double>(access.strides[l]));
        break;
      }
    }
  }
  r[kBufInnermostStride] = n > 0 ? std::fabs(static_cast<double>(access.strides[n - 1])) : 0;
  r[kBufLanesContiguous] = access.lanes > 1 && std::llabs(access.lane_stride) == 1 ? 1 : 0;
  // Reuse carried by the innermost loop the index does not depend on.
  for (size_t l = n; l-- > 0;) {
    if (loops[l].extent > 1 && access.strides[l] == 0) {
      r[kBufReuseLoop] = 1;
      r[kBufReuseDistance] = product(loops, l + 1, n);
      r[kBufReuseBytes] = footprint(access, loops, n - 1 - l).elements * eb;
      break;
    }
  }
  r[kBufReuseCount] = trips * access.lanes / std::max(1.0, all.elements);
  r[kBufSize] = static_cast<double>(access.buffer.num_elements()) * eb;
  r[kBufScratch] = is_param(func, access.buffer, false) ? 0 : 1;
  for (size_t l = n; l-- > 0;) {
    if (loops[l].kind == ir::ForKind::ThreadX) {
      r[kBufThreadStride] = std::fabs(static_cast<double>(access.strides[l]));
      break;
    }
  }
  r[kBufShared] = access.buffer.scope() == ir::MemoryScope::Shared ? 1 : 0;
  return use;
}

// Folds another access of the same buffer into `into`: flags or-ed, bytes added, footprints and
// reuse maximised, strides kept from the first access (the store comes first).
void merge(BufferUse& into, const BufferUse& other) {
  for (int f = 0; f < kNumBufferScalars; ++f) {
    if (f == kBufBytes) {
      into.raw[f] += other.raw[f];
    } else if (f != kBufStride && f != kBufInnermostStride && f != kBufLanesContiguous &&
               f != kBufThreadStride) {
      into.raw[f] = std::max(into.raw[f], other.raw[f]);
    }
  }
  for (int k = 0; k < kIntensityLevels; ++k) {
    into.level_bytes[k] = std::max(into.level_bytes[k], other.level_bytes[k]);
  }
}

bool is_flag(int f) {
  return f == kBufRead || f == kBufWrite || f == kBufLanesContiguous || f == kBufReuseLoop ||
         f == kBufScratch || f == kBufShared;
}

int index_lanes(const ir::Store& store) {
  int lanes = store.value.type().lanes();
  for (const ir::Expr& index : store.indices) {
    lanes = std::max(lanes, index.type().lanes());
  }
  return lanes;
}

// Loop structure: counts, extents and annotations of the enclosing loops.
void loop_features(const StoreSite& site, StoreRow& row) {
  const std::vector<LoopInfo>& loops = site.loops;
  std::vector<float>& v = row.values;
  double parallel_extent = 1;
  double vector_extent = 1;
  double unroll_extent = 1;
  double max_step = 0;
  int serial = 0;
  int parallel = 0;
  int vectorized = 0;
  int unrolled = 0;
  size_t first_parallel = loops.size();
  double blocks = 1;
  std::array<double, 3> threads{{1, 1, 1}};
  bool gpu = false;
  for (size_t l = 0; l < loops.size(); ++l) {
    const LoopInfo& loop = loops[l];
    const auto extent = static_cast<double>(loop.extent);
    max_step = std::max(max_step, static_cast<double>(loop.auto_unroll_max_step));
    if (loop.kind == ir::ForKind::Parallel) {
      ++parallel;
      parallel_extent *= extent;
      first_parallel = std::min(first_parallel, l);
    } else if (loop.kind == ir::ForKind::Vectorized) {
      ++vectorized;
      vector_extent *= extent;
    } else if (loop.kind == ir::ForKind::Unrolled) {
      ++unrolled;
      unroll_extent *= extent;
    } else if (ir::is_gpu_kind(loop.kind)) {
      gpu = true;
      if (ir::is_thread_kind(loop.kind)) {
        const size_t d = loop.kind == ir::ForKind::ThreadX   ? 0
                         : loop.kind == ir::ForKind::ThreadY ? 1
                                                             : 2;
        threads[d] = std::max(threads[d], extent);
      } else {
        blocks *= extent;
      }
    } else {
      ++serial;
    }
  }
  if (gpu) {
    v[kGpuBlocks] = log_scale(blocks);
    v[kGpuThreadsX] = log_scale(threads[0]);
    v[kGpuThreadsY] = log_scale(threads[1]);
    v[kGpuThreadsZ] = log_scale(threads[2]);
    v[kGpuThreads] = log_scale(threads[0] * threads[1] * threads[2]);
  }
  v[kNumLoops] = log_scale(static_cast<double>(loops.size()));
  v[kTripCount] = log_scale(product(loops, 0, loops.size()));
  v[kInnermostExtent] = log_scale(loops.empty() ? 0 : static_cast<double>(loops.back().extent));
  v[kOutermostExtent] = log_scale(loops.empty() ? 0 : static_cast<double>(loops.front().extent));
  v[kNumSerialLoops] = log_scale(serial);
  v[kNumParallelLoops] = log_scale(parallel);
  v[kParallelExtent] = log_scale(parallel > 0 ? parallel_extent : 0);
  v[kParallelDepth] = log_scale(parallel > 0 ? static_cast<double>(first_parallel) + 1 : 0);
  v[kParallelLaunches] = log_scale(parallel > 0 ? product(loops, 0, first_parallel) : 0);
  v[kVectorLanes] = static_cast<float>(row.lanes);
  v[kNumVectorizedLoops] = log_scale(vectorized);
  v[kVectorizedLoopExtent] = log_scale(vectorized > 0 ? vector_extent : 0);
  v[kNumUnrolledLoops] = log_scale(unrolled);
  v[kUnrolledLoopExtent] = log_scale(unrolled > 0 ? unroll_extent : 0);
  v[kAutoUnrollMaxStep] = log_scale(max_step);
}

bool reads_own_element(const ir::Store& store, const OpCounts& ops) {
  return std::any_of(ops.loads.begin(), ops.loads.end(), [&](const ir::Load* load) {
    return load->buffer.same_as(store.buffer) && load->indices.size() == store.indices.size() &&
           std::equal(
               load->indices.begin(), load->indices.end(), store.indices.begin(),
               [](const ir::Expr& a, const ir::Expr& b) { return ir::structural_equal(a, b); });
  });
}

// Guards, the stored buffer and the enclosing allocations.
void context_features(const StoreSite& site,
                      const FunctionContext& context,
                      const OpCounts& ops,
                      const AccessPattern& store_access,
                      StoreRow& row) {
  const ir::Store& store = *site.store;
  std::vector<float>& v = row.values;
  auto count = context.stores_per_buffer.find(store.buffer.get());
  v[kSameBufferStores] = log_scale(count == context.stores_per_buffer.end() ? 1 : count->second);
  v[kGuards] = log_scale(site.guards);
  v[kPredicatedStore] = store.predicate.defined() ? 1 : 0;
  v[kPredicatedLoads] = log_scale(ops.predicated_loads);
  v[kIsOutput] = is_param(*context.func, store.buffer, true) ? 1 : 0;
  v[kIsScratch] = is_param(*context.func, store.buffer, false) ? 0 : 1;
  v[kIsReductionUpdate] = reads_own_element(store, ops) ? 1 : 0;
  v[kStoreContiguous] = row.lanes > 1 && std::llabs(store_access.lane_stride) == 1 ? 1 : 0;
  double alloc_bytes = 0;
  double local_bytes = 0;
  double shared_bytes = 0;
  for (const AllocInfo& alloc : site.allocs) {
    double bytes = static_cast<double>(alloc.buffer.num_elements()) * alloc.buffer.dtype().bytes();
    alloc_bytes += bytes;
    local_bytes += alloc.buffer.scope() == ir::MemoryScope::Local ? bytes : 0;
    // A pipeline asked for keeps that many copies of a shared tile (schedule::CacheRead::stages;
    // 0, the default and every schedule before it, counts one as it always did).
    shared_bytes +=
        alloc.buffer.scope() == ir::MemoryScope::Shared
            ? bytes * static_cast<double>(std::max<int64_t>(1, alloc.buffer.pipeline_stages()))
            : 0;
  }
  v[kAllocSharedBytes] = log_scale(shared_bytes);
  v[kNumAllocs] = log_scale(static_cast<double>(site.allocs.size()));
  v[kAllocBytes] = log_scale(alloc_bytes);
  v[kAllocLocalBytes] = log_scale(local_bytes);
  v[kAllocExecutions] =
      log_scale(site.allocs.empty() ? 0 : product(site.loops, 0, site.allocs.back().depth));
}

}  // namespace

float log_scale(double x) {
  return x > 0 ? static_cast<float>(std::log2(1.0 + x)) : 0.0f;
}

StoreRow store_row(const StoreSite& site, const FunctionContext& context) {
  const ir::Store& store = *site.store;
  const std::vector<LoopInfo>& loops = site.loops;
  StoreRow row;
  row.buffer = store.buffer.name();
  row.values.assign(kNumStoreFeatures, 0.0f);
  row.lanes = index_lanes(store);
  const double trips = product(loops, 0, loops.size());
  row.executions = trips * row.lanes;

  OpCounts ops = count_ops(store);
  for (int k = kFloatAddSub; k <= kCast; ++k) {
    row.values[k] = log_scale(ops.ops[k] * trips);
  }
  row.flops = ops.flops() * trips;
  row.values[kFlops] = log_scale(row.flops);

  // Buffers: the store first, then the loads in visiting order; one entry per buffer.
  AccessPattern store_access = analyze_access(store.buffer, store.indices, row.lanes, site);
  std::vector<BufferUse> uses{buffer_use(store_access, site, trips, true, *context.func)};
  for (const ir::Load* load : ops.loads) {
    AccessPattern access = analyze_access(load->buffer, load->indices, load->type.lanes(), site);
    BufferUse use = buffer_use(access, site, trips, false, *context.func);
    auto same = std::find_if(uses.begin(), uses.end(),
                             [&](const BufferUse& u) { return u.node == use.node; });
    if (same == uses.end()) {
      uses.push_back(use);
    } else {
      merge(*same, use);
    }
  }
  loop_features(site, row);
  context_features(site, context, ops, store_access, row);

  for (const BufferUse& use : uses) {
    row.bytes += use.raw[kBufBytes];
  }
  // Arithmetic intensity over the innermost 1..10 loops (all buffers, not only the top ones).
  for (int k = 0; k < kIntensityLevels; ++k) {
    size_t levels = std::min(loops.size(), static_cast<size_t>(k) + 1);
    double bytes = 0;
    for (const BufferUse& use : uses) {
      bytes += use.level_bytes[k];
    }
    double flops = ops.flops() * product(loops, loops.size() - levels, loops.size());
    row.values[kIntensityOffset + k] = log_scale(flops / std::max(1.0, bytes));
  }

  std::stable_sort(uses.begin(), uses.end(), [](const BufferUse& a, const BufferUse& b) {
    return a.raw[kBufBytes] > b.raw[kBufBytes];
  });
  for (size_t b = 0; b < uses.size() && b < static_cast<size_t>(kTopBuffers); ++b) {
    float* out = row.values.data() + kBufferOffset + b * kNumBufferScalars;
    for (int f = 0; f < kNumBufferScalars; ++f) {
      double x = uses[b].raw[f];
      out[f] = is_flag(f) ? static_cast<float>(x) : log_scale(x);
    }
  }
  return row;
}

}  // namespace tensortune::cost_model

// SPDX-License-Identifier: Apache-2.0
// Feature names and the program vector. Per-store rows follow Ansor (OSDI'20, section 5.2) and
// Adams et al. (SIGGRAPH'19); the program vector is a fixed-length summary of the rows so that a
// plain gradient-boosted ranker can read it.
#include "tensortune/cost_model/features.h"

#include "feature_layout.h"
#include "store_features.h"
#include "store_walker.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>

namespace tensortune::cost_model {
namespace {

constexpr std::array<const char*, kNumStoreScalars> kScalarNames = {"float_add_sub",
                                                                    "float_mul",
                                                                    "float_div_mod",
                                                                    "float_min_max",
                                                                    "float_fma",
                                                                    "float_math",
                                                                    "float_cmp",
                                                                    "int_add_sub",
                                                                    "int_mul",
                                                                    "int_div_mod",
                                                                    "int_min_max",
                                                                    "int_cmp",
                                                                    "bool_op",
                                                                    "select",
                                                                    "cast",
                                                                    "flops",
                                                                    "num_loops",
                                                                    "trip_count",
                                                                    "innermost_extent",
                                                                    "outermost_extent",
                                                                    "num_serial_loops",
                                                                    "num_parallel_loops",
                                                                    "parallel_extent",
                                                                    "parallel_depth",
                                                                    "parallel_launches",
                                                                    "vector_lanes",
                                                                    "num_vectorized_loops",
                                                                    "vectorized_loop_extent",
                                                                    "num_unrolled_loops",
                                                                    "unrolled_loop_extent",
                                                                    "auto_unroll_max_step",
                                                                    "same_buffer_stores",
                                                                    "copies",
                                                                    "guards",
                                                                    "predicated_store",
                                                                    "predicated_loads",
                                                                    "is_output",
                                                                    "is_scratch",
                                                                    "is_reduction_update",
                                                                    "store_contiguous",
                                                                    "num_allocs",
                                                                    "alloc_bytes",
                                                                    "alloc_local_bytes",
                                                                    "alloc_executions",
                                                                    "gpu_blocks",
                                                                    "gpu_threads_x",
                                                                    "gpu_threads_y",
                                                                    "gpu_threads_z",
                                                                    "gpu_threads",
                                                                    "alloc_shared_bytes"};

constexpr std::array<const char*, kNumBufferScalars> kBufferNames = {"read",
                                                                     "write",
                                                                     "bytes",
                                                                     "unique_bytes",
                                                                     "unique_lines",
                                                                     "lines_l1",
                                                                     "lines_l2",
                                                                     "lines_l3",
                                                                     "lines_l4",
                                                                     "unique_bytes_l1",
                                                                     "unique_bytes_l2",
                                                                     "stride",
                                                                     "innermost_stride",
                                                                     "lanes_contiguous",
                                                                     "reuse_loop",
                                                                     "reuse_distance",
                                                                     "reuse_bytes",
                                                                     "reuse_count",
                                                                     "size",
                                                                     "scratch",
                                                                     "thread_stride",
                                                                     "shared"};

/// Whole-function totals appended after the three aggregates of the rows.
enum Total : int {
  kTotalStores,
  kTotalFlops,
  kTotalBytes,
  kTotalExecutions,
  kTotalLoops,
  kTotalParallelLoops,
  kTotalMaxDepth,
  kTotalVectorStores,
  kTotalAllocBytes,
  kTotalParamBytes,
  kTotalIntensity,
  kNumTotals
};

constexpr std::array<const char*, kNumTotals> kTotalNames = {
    "stores",    "flops",         "bytes",       "executions",  "loops",    "parallel_loops",
    "max_depth", "vector_stores", "alloc_bytes", "param_bytes", "intensity"};

std::vector<std::string> make_store_names() {
  std::vector<std::string> names(kScalarNames.begin(), kScalarNames.end());
  for (int k = 1; k <= kIntensityLevels; ++k) {
    names.push_back("intensity_l" + std::to_string(k));
  }
  for (int b = 0; b < kTopBuffers; ++b) {
    for (const char* n : kBufferNames) {
      names.push_back("buf" + std::to_string(b) + "." + n);
    }
  }
  return names;
}

std::vector<std::string> make_program_names() {
  std::vector<std::string> names;
  for (const char* prefix : {"mean.", "max.", "top."}) {
    for (const std::string& n : store_feature_names()) {
      names.push_back(prefix + n);
    }
  }
  for (const char* n : kTotalNames) {
    names.push_back(std::string("total.") + n);
  }
  return names;
}

// Unrolled copies of a statement give rows that differ at most in their integer arithmetic (an
// offset added to the indices of each copy but the first). Rows with the same buffer and the same
// other features form a group; each row's kCopies is its group's size, and the program vector
// sees one row per group with the work of all its copies, so that unrolling a loop keeps the
// flops and bytes the model sees.
bool is_int_op(size_t f) {
  return f >= kIntAddSub && f <= kIntCmp;
}

// A value that scales with the executions of the statement (scaled by log2(1 + x)).
bool is_extensive(size_t f) {
  if (f <= kFlops || f == kTripCount) {
    return true;
  }
  return f >= kBufferOffset && (f - kBufferOffset) % kNumBufferScalars == kBufBytes;
}

std::vector<StoreRow> merge_copies(std::vector<StoreRow>& rows) {
  std::map<std::pair<std::string, std::vector<float>>, size_t> group_of;
  std::vector<StoreRow> groups;
  std::vector<size_t> sizes;
  std::vector<size_t> row_group(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    std::vector<float> key = rows[r].values;
    for (size_t f = 0; f < key.size(); ++f) {
      key[f] = is_int_op(f) ? 0.0f : key[f];
    }
    auto [it, fresh] =
        group_of.emplace(std::make_pair(rows[r].buffer, std::move(key)), groups.size());
    if (fresh) {
      groups.push_back(rows[r]);
      sizes.push_back(0);
    } else {
      StoreRow& g = groups[it->second];
      g.flops += rows[r].flops;
      g.executions += rows[r].executions;
      g.bytes += rows[r].bytes;
    }
    ++sizes[it->second];
    row_group[r] = it->second;
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    rows[r].values[kCopies] = log_scale(static_cast<double>(sizes[row_group[r]]));
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto copies = static_cast<double>(sizes[g]);
    for (size_t f = 0; f < groups[g].values.size(); ++f) {
      if (is_extensive(f)) {
        groups[g].values[f] = log_scale(copies * (std::exp2(groups[g].values[f]) - 1.0));
      }
    }
    groups[g].values[kCopies] = log_scale(copies);
  }
  return groups;
}

// The program vector (its layout is part of kFeatureVersion):
// `rows` are the merged copy groups (merge_copies), in program order.
//   [0, S)      mean: the rows weighted by their share of the work, summed, where a row's work
//               is its flops plus its executions (trips x lanes), so stores without arithmetic
//               (initialisation, copies) still count;
//   [S, 2S)     max: the element-wise maximum over the rows;
//   [2S, 3S)    top: the row with the most work (the first one on ties);
//   [3S, 3S+T)  totals: stores, flops, bytes, executions, loops, parallel loops, loop depth,
//               vector stores, allocated bytes, parameter bytes, flops per parameter byte.
// S = store_feature_names().size(); everything is zero for a function without stores.
std::vector<float> program_vector(const std::vector<StoreRow>& rows,
                                  size_t num_stores,
                                  const FunctionScan& scan,
                                  const ir::LoweredFunc& func) {
  const size_t s = kNumStoreFeatures;
  std::vector<float> v(3 * s + kNumTotals, 0.0f);
  double total_work = 0;
  double flops = 0;
  double bytes = 0;
  double executions = 0;
  size_t top = 0;
  size_t vector_stores = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    double work = rows[r].flops + rows[r].executions;
    if (work > rows[top].flops + rows[top].executions) {
      top = r;
    }
    total_work += work;
    flops += rows[r].flops;
    bytes += rows[r].bytes;
    executions += rows[r].executions;
    vector_stores += rows[r].lanes > 1 ? 1 : 0;
  }
  for (const StoreRow& row : rows) {
    double weight = total_work > 0 ? (row.flops + row.executions) / total_work
                                   : 1.0 / static_cast<double>(rows.size());
    for (size_t f = 0; f < s; ++f) {
      v[f] += static_cast<float>(weight * row.values[f]);
      v[s + f] = std::max(v[s + f], row.values[f]);
    }
  }
  if (!rows.empty()) {
    std::copy(rows[top].values.begin(), rows[top].values.end(), v.begin() + 2 * s);
  }
  double param_bytes = 0;
  for (const ir::Buffer& p : func.params) {
    param_bytes += static_cast<double>(p.num_elements()) * p.dtype().bytes();
  }
  float* t = v.data() + 3 * s;
  t[kTotalStores] = log_scale(static_cast<double>(num_stores));
  t[kTotalFlops] = log_scale(flops);
  t[kTotalBytes] = log_scale(bytes);
  t[kTotalExecutions] = log_scale(executions);
  t[kTotalLoops] = log_scale(static_cast<double>(scan.num_loops));
  t[kTotalParallelLoops] = log_scale(static_cast<double>(scan.num_parallel_loops));
  t[kTotalMaxDepth] = log_scale(static_cast<double>(scan.max_depth));
  t[kTotalVectorStores] = log_scale(static_cast<double>(vector_stores));
  t[kTotalAllocBytes] = log_scale(scan.alloc_bytes);
  t[kTotalParamBytes] = log_scale(param_bytes);
  t[kTotalIntensity] = log_scale(flops / std::max(1.0, param_bytes));
  return v;
}

}  // namespace

const std::vector<std::string>& store_feature_names() {
  static const std::vector<std::string> names = make_store_names();
  return names;
}

const std::vector<std::string>& program_feature_names() {
  static const std::vector<std::string> names = make_program_names();
  return names;
}

ProgramFeatures extract_features(const ir::LoweredFunc& func) {
  FunctionScan scan = scan_function(func.body);
  FunctionContext context;
  context.func = &func;
  for (const StoreSite& site : scan.stores) {
    ++context.stores_per_buffer[site.store->buffer.get()];
  }
  std::vector<StoreRow> rows;
  rows.reserve(scan.stores.size());
  for (const StoreSite& site : scan.stores) {
    rows.push_back(store_row(site, context));
  }
  std::vector<StoreRow> groups = merge_copies(rows);
  ProgramFeatures features;
  features.vector = program_vector(groups, rows.size(), scan, func);
  features.stores.reserve(rows.size());
  for (StoreRow& row : rows) {
    features.stores.push_back(StoreFeatures{std::move(row.buffer), std::move(row.values)});
  }
  return features;
}

}  // namespace tensortune::cost_model

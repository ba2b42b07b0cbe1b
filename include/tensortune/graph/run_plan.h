// SPDX-License-Identifier: Apache-2.0
// A built model's calls as data: which kernel function runs with which buffers (a model input
// or output, an arena offset, a weight offset). The in-process Executable and the library that
// compile-model writes (model_library.h) run the same plan.
#pragma once

#include "tensortune/graph/graph.h"
#include "tensortune/support/json.h"

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

namespace tensortune::graph {

/// An allocator of 64-byte aligned storage (a cache line; whole AVX-512 vectors), so weights and
/// arenas are aligned as the tuner's measurement buffers were.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>& /*other*/) {}  // NOLINT: rebinding
  T* allocate(size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(64)));
  }
  void deallocate(T* p, size_t /*n*/) { ::operator delete(p, std::align_val_t(64)); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>& /*other*/) const {
    return true;
  }
  template <class U>
  bool operator!=(const CacheLineAllocator<U>& /*other*/) const {
    return false;
  }
};

/// Bytes starting on a cache line.
using AlignedBytes = std::vector<uint8_t, CacheLineAllocator<uint8_t>>;

/// Name, element type and shape of a model input or output.
struct TensorInfo {
  std::string name;
  ir::DataType dtype;
  std::vector<int64_t> shape;
  int64_t numel() const;
  int64_t bytes() const { return numel() * dtype.bytes(); }
};

/// One buffer argument of a call.
struct PlanArg {
  enum class Kind : uint8_t { Input, Output, Arena, Weight };
  Kind kind = Kind::Arena;
  /// The input or output index, or the byte offset into the arena or the weights.
  int64_t index = 0;
};

/// One kernel call: `function` of the library with `args` (its inputs, then its output).
struct PlanCall {
  std::string function;
  std::vector<PlanArg> args;
  std::string workload;  ///< the workload name (for messages and profiles), unique in a model
  /// FLOPs of one call and where its schedule came from (the compiler's lookup: a record, an
  /// adapted record, zero-shot, the default), for run-model's profile; 0 and "" in older plans.
  double flop = 0;
  std::string schedule;
};

/// The kernel ABI (codegen::KernelFn).
using KernelFunction = int32_t (*)(void* const* buffers);

struct RunPlan {
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  std::vector<PlanCall> calls;
  int64_t arena_bytes = 0;
  int64_t activation_bytes = 0;
  /// The constants the kernels read, each at a 64-byte aligned offset.
  AlignedBytes weights;

  /// Everything but the weights (stored beside it as a raw file).
  support::Json to_json() const;
  /// UserError naming the field for a malformed document.
  static RunPlan from_json(const support::Json& json);

  /// Runs the calls in order; `functions[i]` is calls[i]'s function. `arena` has arena_bytes.
  /// With `call_seconds` (one entry per call), each call's wall time is added to its entry.
  /// UserError when the buffer counts differ from inputs/outputs; InternalError naming the
  /// workload when a kernel returns non-zero.
  void execute(const std::vector<KernelFunction>& functions,
               const std::vector<const void*>& inputs,
               const std::vector<void*>& outputs,
               uint8_t* arena,
               std::vector<double>* call_seconds = nullptr) const;
};

}  // namespace tensortune::graph

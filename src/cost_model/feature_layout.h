// SPDX-License-Identifier: Apache-2.0
// The layout of a store row: the index of every feature (names in features.cpp, same order).
// Changing anything here changes the features: bump kFeatureVersion in the public header.
#pragma once

namespace tensortune::cost_model {

/// Per-statement features. Counts are per execution of the store times the product of the
/// enclosing loops' extents, lanes included, scaled by log2(1 + x); flags are 0/1.
enum StoreScalar : int {
  // Arithmetic by kind (scalar operations, a vector op counts its lanes).
  kFloatAddSub,
  kFloatMul,
  kFloatDivMod,
  kFloatMinMax,
  kFloatFma,
  kFloatMath,
  kFloatCmp,
  kIntAddSub,
  kIntMul,
  kIntDivMod,
  kIntMinMax,
  kIntCmp,
  kBoolOp,
  kSelect,
  kCast,
  kFlops,
  // Loop structure.
  kNumLoops,
  kTripCount,
  kInnermostExtent,
  kOutermostExtent,
  kNumSerialLoops,
  kNumParallelLoops,
  kParallelExtent,
  kParallelDepth,
  kParallelLaunches,
  kVectorLanes,
  kNumVectorizedLoops,
  kVectorizedLoopExtent,
  kNumUnrolledLoops,
  kUnrolledLoopExtent,
  kAutoUnrollMaxStep,
  kSameBufferStores,
  kCopies,
  // Guards.
  kGuards,
  kPredicatedStore,
  kPredicatedLoads,
  // The stored buffer.
  kIsOutput,
  kIsScratch,
  kIsReductionUpdate,
  kStoreContiguous,
  // Enclosing allocations.
  kNumAllocs,
  kAllocBytes,
  kAllocLocalBytes,
  kAllocExecutions,
  // GPU launch shape of the enclosing kernel's bound loops (0 on a CPU target) and shared memory.
  kGpuBlocks,
  kGpuThreadsX,
  kGpuThreadsY,
  kGpuThreadsZ,
  kGpuThreads,
  kAllocSharedBytes,
  kNumStoreScalars
};

/// Arithmetic intensity (flops / unique bytes of all accessed buffers) over the innermost 1, 2, ...
/// loops.
inline constexpr int kIntensityLevels = 10;

/// Per-buffer features, for the kTopBuffers buffers with the most bytes accessed.
enum BufferScalar : int {
  kBufRead,
  kBufWrite,
  kBufBytes,
  kBufUniqueBytes,
  kBufUniqueLines,
  kBufLinesL1,
  kBufLinesL2,
  kBufLinesL3,
  kBufLinesL4,
  kBufUniqueBytesL1,
  kBufUniqueBytesL2,
  kBufStride,
  kBufInnermostStride,
  kBufLanesContiguous,
  kBufReuseLoop,
  kBufReuseDistance,
  kBufReuseBytes,
  kBufReuseCount,
  kBufSize,
  kBufScratch,
  /// Elements between the accesses of neighbouring threads (the innermost threadIdx.x loop's
  /// stride: 1 is coalesced global memory and conflict-free shared memory), 0 without one.
  kBufThreadStride,
  kBufShared,
  kNumBufferScalars
};

inline constexpr int kTopBuffers = 5;

inline constexpr int kIntensityOffset = kNumStoreScalars;
inline constexpr int kBufferOffset = kIntensityOffset + kIntensityLevels;
inline constexpr int kNumStoreFeatures = kBufferOffset + kTopBuffers * kNumBufferScalars;

}  // namespace tensortune::cost_model

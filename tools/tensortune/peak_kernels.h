// SPDX-License-Identifier: Apache-2.0
// The FMA loops behind measure_fma_peak, each in its own translation unit compiled for its
// instruction set; private to peak.cpp.
#pragma once

#include <cstdint>

namespace tensortune::cli {

/// Each runs `iterations` rounds of independent FMAs and returns a value that depends on all of
/// them (so the loop is not optimised away). Flops per iteration are given by the constants.
float fma_loop_avx512(int64_t iterations);
float fma_loop_avx2(int64_t iterations);
float fma_loop_scalar(int64_t iterations);

inline constexpr double kAvx512FlopsPerIteration = 12 * 16 * 2;
inline constexpr double kAvx2FlopsPerIteration = 12 * 8 * 2;
inline constexpr double kScalarFlopsPerIteration = 8 * 2;

}  // namespace tensortune::cli

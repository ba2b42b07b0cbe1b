// SPDX-License-Identifier: Apache-2.0
// The machine's measured single-precision FMA peak: the physical limit benchmarks and
// `tensortune bench` compare kernels against (docs/style.md section 7; bench/README.md).
#pragma once

#include <string>

namespace tensortune::cli {

struct PeakResult {
  /// Single-precision GFLOP/s on `threads` threads (an FMA counts 2 flops per lane).
  double gflops = 0;
  int threads = 0;
  /// The instruction set the loop used: "avx512", "avx2" or "scalar".
  std::string isa;
};

/// Runs independent FMA chains on `threads` threads (>= 1) for about `duration_ms` and reports
/// the best rate of a few rounds. Uses AVX-512 when the compiler and the CPU support it, else
/// AVX2 with FMA, else plain C++.
PeakResult measure_fma_peak(int threads, double duration_ms = 100);

}  // namespace tensortune::cli

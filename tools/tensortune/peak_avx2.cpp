// SPDX-License-Identifier: Apache-2.0
// The AVX2 FMA loop: 12 independent 8-lane accumulators. Compiled with -mavx2 -mfma; called only
// when the CPU reports avx2 and fma.
#include "peak_kernels.h"

#include <array>
#include <immintrin.h>

namespace tensortune::cli {

float fma_loop_avx2(int64_t iterations) {
  // Twelve named accumulators (an array would live in memory at -O2).
  const __m256 a = _mm256_set1_ps(0.999999F);
  const __m256 b = _mm256_set1_ps(1e-7F);
  __m256 c0 = _mm256_set1_ps(1.000F);
  __m256 c1 = _mm256_set1_ps(1.001F);
  __m256 c2 = _mm256_set1_ps(1.002F);
  __m256 c3 = _mm256_set1_ps(1.003F);
  __m256 c4 = _mm256_set1_ps(1.004F);
  __m256 c5 = _mm256_set1_ps(1.005F);
  __m256 c6 = _mm256_set1_ps(1.006F);
  __m256 c7 = _mm256_set1_ps(1.007F);
  __m256 c8 = _mm256_set1_ps(1.008F);
  __m256 c9 = _mm256_set1_ps(1.009F);
  __m256 c10 = _mm256_set1_ps(1.010F);
  __m256 c11 = _mm256_set1_ps(1.011F);
  for (int64_t i = 0; i < iterations; ++i) {
    c0 = _mm256_fmadd_ps(c0, a, b);
    c1 = _mm256_fmadd_ps(c1, a, b);
    c2 = _mm256_fmadd_ps(c2, a, b);
    c3 = _mm256_fmadd_ps(c3, a, b);
    c4 = _mm256_fmadd_ps(c4, a, b);
    c5 = _mm256_fmadd_ps(c5, a, b);
    c6 = _mm256_fmadd_ps(c6, a, b);
    c7 = _mm256_fmadd_ps(c7, a, b);
    c8 = _mm256_fmadd_ps(c8, a, b);
    c9 = _mm256_fmadd_ps(c9, a, b);
    c10 = _mm256_fmadd_ps(c10, a, b);
    c11 = _mm256_fmadd_ps(c11, a, b);
  }
  __m256 sum = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                             _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
  sum = _mm256_add_ps(sum, _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
  alignas(32) std::array<float, 8> lanes{};
  _mm256_store_ps(lanes.data(), sum);
  float total = 0;
  for (float lane : lanes) {
    total += lane;
  }
  return total;
}

}  // namespace tensortune::cli

// SPDX-License-Identifier: Apache-2.0
// The AVX-512 FMA loop: 12 independent accumulators hide the 4-cycle FMA latency on two FMA
// ports. Compiled with -mavx512F -mfma; called only when the CPU reports avx512F.
#include "peak_kernels.h"

#include <array>
#include <immintrin.h>

namespace tensortune::cli {

float fma_loop_avx512(int64_t iterations) {
  // Twelve named accumulators (an array would live in memory at -O2).
  const __m512 a = _mm512_set1_ps(0.999999F);
  const __m512 b = _mm512_set1_ps(1e-7F);
  __m512 c0 = _mm512_set1_ps(1.000F);
  __m512 c1 = _mm512_set1_ps(1.001F);
  __m512 c2 = _mm512_set1_ps(1.002F);
  __m512 c3 = _mm512_set1_ps(1.003F);
  __m512 c4 = _mm512_set1_ps(1.004F);
  __m512 c5 = _mm512_set1_ps(1.005F);
  __m512 c6 = _mm512_set1_ps(1.006F);
  __m512 c7 = _mm512_set1_ps(1.007F);
  __m512 c8 = _mm512_set1_ps(1.008F);
  __m512 c9 = _mm512_set1_ps(1.009F);
  __m512 c10 = _mm512_set1_ps(1.010F);
  __m512 c11 = _mm512_set1_ps(1.011F);
  for (int64_t i = 0; i < iterations; ++i) {
    c0 = _mm512_fmadd_ps(c0, a, b);
    c1 = _mm512_fmadd_ps(c1, a, b);
    c2 = _mm512_fmadd_ps(c2, a, b);
    c3 = _mm512_fmadd_ps(c3, a, b);
    c4 = _mm512_fmadd_ps(c4, a, b);
    c5 = _mm512_fmadd_ps(c5, a, b);
    c6 = _mm512_fmadd_ps(c6, a, b);
    c7 = _mm512_fmadd_ps(c7, a, b);
    c8 = _mm512_fmadd_ps(c8, a, b);
    c9 = _mm512_fmadd_ps(c9, a, b);
    c10 = _mm512_fmadd_ps(c10, a, b);
    c11 = _mm512_fmadd_ps(c11, a, b);
  }
  __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                             _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7)));
  sum = _mm512_add_ps(sum, _mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)));
  alignas(64) std::array<float, 16> lanes{};
  _mm512_store_ps(lanes.data(), sum);
  float total = 0;
  for (float lane : lanes) {
    total += lane;
  }
  return total;
}

}  // namespace tensortune::cli

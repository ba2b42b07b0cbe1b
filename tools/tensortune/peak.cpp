// SPDX-License-Identifier: Apache-2.0
// Measures the FMA peak: picks the widest loop the CPU runs, calibrates its length on one thread,
// then times a few rounds on all threads and keeps the best wall-clock rate.
#include "peak.h"

#include "peak_kernels.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tensortune::cli {

float fma_loop_scalar(int64_t iterations) {
  // Eight named chains (an array would live in memory); only a fallback for CPUs without AVX2.
  float c0 = 1.000F;
  float c1 = 1.001F;
  float c2 = 1.002F;
  float c3 = 1.003F;
  float c4 = 1.004F;
  float c5 = 1.005F;
  float c6 = 1.006F;
  float c7 = 1.007F;
  const float a = 0.999999F;
  const float b = 1e-7F;
  for (int64_t i = 0; i < iterations; ++i) {
    c0 = c0 * a + b;
    c1 = c1 * a + b;
    c2 = c2 * a + b;
    c3 = c3 * a + b;
    c4 = c4 * a + b;
    c5 = c5 * a + b;
    c6 = c6 * a + b;
    c7 = c7 * a + b;
  }
  return ((c0 + c1) + (c2 + c3)) + ((c4 + c5) + (c6 + c7));
}

namespace {

using Clock = std::chrono::steady_clock;

struct Kernel {
  float (*loop)(int64_t) = fma_loop_scalar;
  double flops_per_iteration = kScalarFlopsPerIteration;
  const char* isa = "scalar";
};

Kernel pick_kernel() {
#if defined(TT_PEAK_HAVE_AVX512)
  if (__builtin_cpu_supports("avx512f")) {
    return {fma_loop_avx512, kAvx512FlopsPerIteration, "avx512"};
  }
#endif
#if defined(TT_PEAK_HAVE_AVX2)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return {fma_loop_avx2, kAvx2FlopsPerIteration, "avx2"};
  }
#endif
  return {};
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Wall-clock seconds for `threads` threads each running `iterations` of the loop.
double run_round(const Kernel& kernel, int threads, int64_t iterations) {
  std::atomic<bool> go{false};
  std::atomic<int> ready{0};
  std::vector<float> sinks(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
        std::this_thread::yield();
      }
      sinks[static_cast<size_t>(t)] = kernel.loop(iterations);
    });
  }
  while (ready.load() < threads) {
    std::this_thread::yield();
  }
  auto start = Clock::now();
  go.store(true, std::memory_order_release);
  for (std::thread& thread : pool) {
    thread.join();
  }
  double seconds = seconds_since(start);
  volatile float sink = sinks[0];  // keeps the results alive
  (void)sink;
  return seconds;
}

}  // namespace

PeakResult measure_fma_peak(int threads, double duration_ms) {
  threads = std::max(1, threads);
  Kernel kernel = pick_kernel();
  // Calibrate on one thread: grow the loop until it runs for a few milliseconds.
  int64_t iterations = 1 << 12;
  double seconds = 0;
  while ((seconds = run_round(kernel, 1, iterations)) < 2e-3) {
    iterations *= 4;
  }
  constexpr int kRounds = 3;
  double round_seconds = std::max(1e-3, duration_ms / 1000.0 / kRounds);
  iterations = std::max<int64_t>(
      1, static_cast<int64_t>(static_cast<double>(iterations) * round_seconds / seconds));
  double best = 0;
  for (int r = 0; r < kRounds; ++r) {
    double wall = run_round(kernel, threads, iterations);
    double flops =
        kernel.flops_per_iteration * static_cast<double>(iterations) * static_cast<double>(threads);
    best = std::max(best, flops / wall / 1e9);
  }
  return PeakResult{best, threads, kernel.isa};
}

}  // namespace tensortune::cli

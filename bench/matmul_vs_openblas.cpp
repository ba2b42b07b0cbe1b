// SPDX-License-Identifier: Apache-2.0
// matmul 1024x1024x1024 float32 on 2 threads: the hand-written schedule in
// examples/matmul_1024_schedule.json against OpenBLAS cblas_sgemm and the measured FMA peak, all
// timed with the same protocol in the same run. The result is checked against OpenBLAS first.
#include "peak.h"
#include "pipeline.h"
#include "tensortune/measure/kernel_buffers.h"
#include "tensortune/measure/timing.h"
#include "tensortune/runtime/parallel.h"
#include "tensortune/support/error.h"
#include "tensortune/te/operators.h"

#include <cblas.h>
#include <exception>
#include <fmt/format.h>
#include <iostream>
#include <optional>
#include <string>

namespace {

using namespace tensortune;  // NOLINT(google-build-using-namespace): a small program

constexpr int kSize = 1024;
constexpr int kThreads = 2;
constexpr const char* kSchedulePath = TT_SOURCE_DIR "/examples/matmul_1024_schedule.json";

void sgemm(const measure::KernelBuffers& buffers) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kSize, kSize, kSize, 1.0F,
              static_cast<const float*>(buffers.data(0)), kSize,
              static_cast<const float*>(buffers.data(1)), kSize, 0.0F,
              static_cast<float*>(buffers.data(2)), kSize);
}

int run() {
  te::Workload workload = te::make_workload(fmt::format("matmul:M={0},N={0},K={0}", kSize));
  target::Target target = cli::resolve_target(fmt::format("llvm -cores={}", kThreads));
  tt_set_num_threads(kThreads);
  openblas_set_num_threads(kThreads);
  cli::ScheduleChoice choice = cli::load_schedule(kSchedulePath, workload);
  cli::BuiltKernel kernel = cli::build_kernel(workload, choice.schedule, target);

  measure::KernelSignature signature = measure::KernelSignature::of(kernel.func);
  measure::KernelBuffers ours(signature);
  ours.fill_inputs(1);
  ours.poison_outputs();
  measure::KernelBuffers blas(signature);
  blas.copy_inputs_from(ours);
  blas.poison_outputs();
  TT_USER_CHECK(kernel.artifact.prepare(ours.pointers()) == 0) << "the kernel's prepare failed";
  TT_USER_CHECK(kernel.artifact(ours.pointers()) == 0) << "the kernel returned an error";
  sgemm(blas);
  std::optional<std::string> diff =
      measure::compare_outputs(ours, blas.output_bytes(), measure::Tolerance::for_reduction(kSize));
  TT_USER_CHECK(!diff) << "tensortune and OpenBLAS disagree: " << *diff;

  measure::TimingOptions options;
  options.min_repeat_ms = 50;
  measure::TimingResult ours_time =
      measure::time_with_warmup([&] { kernel.artifact(ours.pointers()); }, options);
  measure::TimingResult blas_time = measure::time_with_warmup([&] { sgemm(blas); }, options);
  cli::PeakResult peak = cli::measure_fma_peak(kThreads);

  double flop = workload.flop_count();
  double ours_gflops = flop / ours_time.median_seconds / 1e9;
  double blas_gflops = flop / blas_time.median_seconds / 1e9;
  auto row = [](const std::string& label, double seconds, double gflops) {
    std::string time = seconds > 0 ? fmt::format("{:9.3F} ms", seconds * 1e3) : "";
    return fmt::format("  {:<48}{:>12} {:7.1F} GFLOP/s\n", label, time, gflops);
  };
  std::cout << fmt::format("matmul {0}x{0}x{0} float32 on {1} threads (median of {2} repeats)\n",
                           kSize, kThreads, options.repeat)
            << row("tensortune (examples/matmul_1024_schedule.json)", ours_time.median_seconds,
                   ours_gflops)
            << row("OpenBLAS cblas_sgemm", blas_time.median_seconds, blas_gflops)
            << row("FMA peak (" + peak.isa + ")", 0, peak.gflops)
            << fmt::format("  tensortune / OpenBLAS: {:.2F}\n", ours_gflops / blas_gflops)
            << fmt::format("  tensortune / peak:     {:.2F}\n", ours_gflops / peak.gflops);
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::cerr << "matmul_vs_openblas: error: " << e.what() << "\n";
    return 1;
  }
}

// SPDX-License-Identifier: Apache-2.0
// `tensortune bench`: builds one kernel, checks its results against the default schedule's, times
// it with the measurement protocol and compares the rate with the machine's measured FMA peak.
#include "commands.h"
#include "db_schedule.h"
#include "peak.h"
#include "pipeline.h"
#include "tensortune/lower/lower.h"
#include "tensortune/measure/kernel_buffers.h"
#include "tensortune/measure/measurer.h"
#include "tensortune/measure/timing.h"
#include "tensortune/runtime/parallel.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/support/log.h"
#include "tensortune/support/stats.h"
#include "tensortune/te/operators.h"
#include "zero_shot_cli.h"

#include <algorithm>
#include <cstdint>
#include <fmt/format.h>
#include <iostream>
#include <optional>
#include <thread>
#include <utility>

namespace tensortune::cli {

ArgParser bench_parser() {
  ArgParser parser(
      "bench",
      "bench --workload SPEC --target T [--db PATH] [--schedule default|best|FILE.json] "
      "[--compare default|best|auto|zero-shot|FILE.json ...] [--rounds R] [--repeat N] "
      "[--min-repeat-ms MS] [--threads N] [--seed S] [--cache-flush] [--json]",
      "Builds one kernel, checks its results against the default schedule's, and "
      "times it: one warm-up call, calls per repeat doubled until a repeat lasts "
      "--min-repeat-ms, then --repeat repeats. Prints the median time per call, "
      "GFLOP/s, and the share of the FMA peak measured on the same threads. For a CUDA target "
      "the kernel runs in the measurer's GPU worker, checked against the default schedule run "
      "on the host and timed with CUDA events under the same protocol (no peak). With --compare, "
      "every schedule is built and checked, then timed --rounds times round-robin, so a change of "
      "the machine's speed hits them alike; each gets the median of its rounds and its ratio to "
      "the --schedule one (the median of the ratios within a round).");
  parser.option("workload", "SPEC", kWorkloadHelp, {}, true)
      .option("target", "T", kTargetHelp, {}, true)
      .option("schedule", "S", kScheduleHelp)
      .option(
          "db", "PATH",
          "the tuning database (read only) for --schedule best (default tuning_logs/tensortune.db)")
      .option("compare", "S",
              "another schedule (default, best, auto, zero-shot or a JSON file) timed side by side "
              "with --schedule "
              "(CPU targets)",
              {}, false, true)
      .option("rounds", "R", "round-robin rounds with --compare (default 5)")
      .option("repeat", "N", "repeats whose times are kept (default 5)")
      .option("min-repeat-ms", "MS", "least duration of one repeat (default 50)")
      .option("threads", "N", "threads for parallel loops (default: the target's -cores, else all)")
      .option("seed", "S", "seed of the random inputs (default 1)")
      .option("build-timeout", "S", kBuildTimeoutHelp)
      .flag("cache-flush",
            "one call per repeat, the inputs but the first (the weights) flushed from the caches "
            "before it (how tune --cache-flush times)")
      .flag("json",
            "print one JSON document {workload, target, seconds, gflops, peak_gflops, repeats, "
            "number, ...}");
  add_zero_shot_options(parser);
  return parser;
}

namespace {

double build_timeout(const ArgParser::Parsed& parsed) {
  return parsed.get_double("build-timeout", kDefaultBuildTimeout, 0.001, 86400);
}

using measure::KernelBuffers;
using measure::TimingOptions;
using measure::TimingResult;

/// Runs the kernel once, after its prepare function (the layout rewrites of its constant inputs,
/// which the timed calls then reuse).
void run_kernel(const BuiltKernel& kernel, const KernelBuffers& buffers) {
  int32_t prepared = kernel.artifact.prepare(buffers.pointers());
  TT_USER_CHECK(prepared == 0) << "kernel '" << kernel.func.name << "_prepare' returned error code "
                               << prepared;
  int32_t status = kernel.artifact(buffers.pointers());
  TT_USER_CHECK(status == 0) << "kernel '" << kernel.func.name << "' returned error code "
                             << status;
}

/// Builds the kernel of `choice` and checks it against the default schedule's kernel on the same
/// random inputs; returns the kernel with its buffers ready for timing.
std::pair<BuiltKernel, KernelBuffers> build_and_verify(const te::Workload& workload,
                                                       const ScheduleChoice& choice,
                                                       const target::Target& target,
                                                       uint64_t seed) {
  BuiltKernel kernel = build_kernel(workload, choice.schedule, target);
  KernelBuffers buffers(measure::KernelSignature::of(kernel.func));
  buffers.fill_inputs(seed);
  buffers.poison_outputs();
  run_kernel(kernel, buffers);
  if (choice.source != "default") {
    BuiltKernel reference = build_kernel(workload, schedule::Schedule{workload.key(), {}}, target);
    KernelBuffers expected(measure::KernelSignature::of(reference.func));
    expected.copy_inputs_from(buffers);
    expected.poison_outputs();
    run_kernel(reference, expected);
    std::optional<std::string> diff = measure::compare_outputs(
        buffers, expected.output_bytes(),
        measure::Tolerance::for_reduction(workload.max_reduction_length()));
    TT_USER_CHECK(!diff) << "the schedule computes wrong results: " << *diff;
    TT_LOG(1) << "results match the default schedule's";
  }
  return {std::move(kernel), std::move(buffers)};
}

std::string format_time(double seconds) {
  if (seconds >= 1) {
    return fmt::format("{:.3f} s", seconds);
  }
  if (seconds >= 1e-3) {
    return fmt::format("{:.3f} ms", seconds * 1e3);
  }
  return fmt::format("{:.3f} us", seconds * 1e6);
}

}  // namespace

namespace {

/// --threads, else the target's -cores, else every hardware thread.
int thread_count(int requested, const target::Target& target) {
  if (requested > 0) {
    return requested;
  }
  if (target.cores > 0) {
    return target.cores;
  }
  return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

void print_result(bool json,
                  const te::Workload& workload,
                  const std::string& target_text,
                  const target::Target& target,
                  const ScheduleChoice& choice,
                  int threads,
                  const TimingResult& timed,
                  const PeakResult& peak) {
  double gflops = workload.flop_count() / timed.median_seconds / 1e9;
  if (!json) {
    std::cout << fmt::format("{}: {}, {:.1f} GFLOP/s ({:.1f}% of {:.0f} GFLOP/s peak)\n",
                             workload.name(), format_time(timed.median_seconds), gflops,
                             100.0 * gflops / peak.gflops, peak.gflops);
    return;
  }
  support::Json out = support::Json::object();
  out["workload"] = workload.name();
  out["workload_key"] = workload.key();
  out["target"] = target::Target::parse(target_text).to_string();
  out["mcpu"] = target.mcpu;
  out["schedule"] = choice.source;
  out["threads"] = threads;
  out["seconds"] = timed.median_seconds;
  out["gflops"] = gflops;
  out["flop"] = workload.flop_count();
  out["peak_gflops"] = peak.gflops;
  out["peak_isa"] = peak.isa;
  out["number"] = timed.number;
  support::Json repeats = support::Json::array();
  for (double seconds : timed.repeats) {
    repeats.push_back(seconds);
  }
  out["repeats"] = std::move(repeats);
  std::cout << out.dump() << "\n";
}

/// bench --compare: every schedule built and checked, then timed `rounds` times round-robin.
int run_compare(const ArgParser::Parsed& parsed,
                const te::Workload& workload,
                const std::string& target_text,
                const target::Target& target,
                int threads,
                const TimingOptions& timing,
                uint64_t seed) {
  const auto rounds = static_cast<int>(parsed.get_int("rounds", 5, 1, 10000));
  std::vector<ScheduleChoice> choices;
  std::vector<std::pair<BuiltKernel, KernelBuffers>> built;
  {
    const BuildDeadline deadline(build_timeout(parsed), "bench");
    choices.push_back(choose_schedule(parsed, workload, "bench"));
    for (const std::string& text : parsed.get_all("compare")) {
      choices.push_back(text == "best"        ? best_schedule(parsed, workload, "bench")
                        : text == "auto"      ? auto_schedule(parsed, workload)
                        : text == "zero-shot" ? auto_schedule(parsed, workload, true)
                                              : load_schedule(text, workload));
    }
    for (const ScheduleChoice& choice : choices)
      built.push_back(build_and_verify(workload, choice, target, seed));
  }
  // times[k][r]: schedule k's median in round r.
  std::vector<std::vector<double>> times(built.size());
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < built.size(); ++k) {
      const BuiltKernel& kernel = built[k].first;
      const KernelBuffers& buffers = built[k].second;
      void* const* pointers = buffers.pointers();
      times[k].push_back(measure::time_with_warmup([&] { kernel.artifact(pointers); }, timing,
                                                   [&] { buffers.flush_caches(); })
                             .median_seconds);
    }
  }
  const PeakResult peak = measure_fma_peak(threads);
  support::Json rows = support::Json::array();
  for (size_t k = 0; k < built.size(); ++k) {
    std::vector<double> ratios;
    for (int r = 0; r < rounds; ++r)
      ratios.push_back(times[k][static_cast<size_t>(r)] / times[0][static_cast<size_t>(r)]);
    const double seconds = support::median(times[k]);
    const double ratio = support::median(ratios);
    const double gflops = workload.flop_count() / seconds / 1e9;
    if (!parsed.has("json")) {
      std::cout << fmt::format(
          "{}: {}, {:.1f} GFLOP/s ({:.1f}% of peak), time {:.3f}x of the first\n",
          choices[k].source, format_time(seconds), gflops, 100.0 * gflops / peak.gflops, ratio);
      continue;
    }
    support::Json row = support::Json::object();
    row["schedule"] = choices[k].source;
    row["seconds"] = seconds;
    row["gflops"] = gflops;
    row["time_ratio"] = ratio;
    support::Json each = support::Json::array();
    for (double t : times[k])
      each.push_back(t);
    row["rounds"] = std::move(each);
    rows.push_back(std::move(row));
  }
  if (!parsed.has("json")) {
    std::cout << fmt::format("{}: {} rounds on {} threads; peak {:.0f} GFLOP/s\n", workload.name(),
                             rounds, threads, peak.gflops);
    return 0;
  }
  support::Json out = support::Json::object();
  out["workload"] = workload.name();
  out["workload_key"] = workload.key();
  out["target"] = target::Target::parse(target_text).to_string();
  out["threads"] = threads;
  out["rounds"] = rounds;
  out["peak_gflops"] = peak.gflops;
  // The --schedule one's figures at the top level, as bench without --compare prints them.
  out["schedule"] = choices[0].source;
  out["seconds"] = rows.as_array().front().at("seconds");
  out["gflops"] = rows.as_array().front().at("gflops");
  out["schedules"] = std::move(rows);
  std::cout << out.dump() << "\n";
  return 0;
}

/// bench for a CUDA target: the measurer's GPU path (the tuner's protocol and verification).
int run_gpu_bench(const ArgParser::Parsed& parsed,
                  const te::Workload& workload,
                  const std::string& target_text,
                  const target::Target& target,
                  const TimingOptions& timing,
                  uint64_t seed) {
  TT_USER_CHECK(!parsed.has("cache-flush"))
      << "bench: --cache-flush is for CPU targets; GPU kernels are timed warm";
  TT_USER_CHECK(!parsed.has("threads")) << "bench: --threads is for CPU targets";
  std::optional<BuildDeadline> deadline(std::in_place, build_timeout(parsed), "bench");
  ScheduleChoice choice = choose_schedule(parsed, workload, "bench");
  const ir::LoweredFunc candidate = lower::lower(workload, choice.schedule, target);
  deadline.reset();  // the measurer's build workers have the same timeout from here on
  measure::MeasurerOptions options;
  options.run.gpu = true;
  options.run.seed = seed;
  options.run.timing = timing;
  options.run.timeout_s = 600;
  options.build.timeout_s = build_timeout(parsed);
  measure::Measurer measurer(target, options);  // UserError without a device
  const auto reference = measurer.make_reference(
      lower::lower(workload, schedule::Schedule{workload.key(), {}}, target),
      measure::Tolerance::for_reduction(workload.max_reduction_length()));
  const measure::MeasureResult result = measurer.measure(*reference, {candidate}).at(0);
  TT_USER_CHECK(result.ok()) << "bench: " << measure::status_name(result.status) << ": "
                             << result.message;
  const double gflops = workload.flop_count() / result.median_seconds / 1e9;
  if (!parsed.has("json")) {
    std::cout << fmt::format("{}: {}, {:.1f} GFLOP/s on {}\n", workload.name(),
                             format_time(result.median_seconds), gflops, target.to_string());
    return 0;
  }
  support::Json out = support::Json::object();
  out["workload"] = workload.name();
  out["workload_key"] = workload.key();
  out["target"] = target::Target::parse(target_text).to_string();
  out["schedule"] = choice.source;
  out["seconds"] = result.median_seconds;
  out["gflops"] = gflops;
  out["flop"] = workload.flop_count();
  out["number"] = result.number;
  support::Json repeats = support::Json::array();
  for (double seconds : result.repeats) {
    repeats.push_back(seconds);
  }
  out["repeats"] = std::move(repeats);
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace

int run_bench(const std::vector<std::string>& args) {
  std::optional<ArgParser::Parsed> parsed = parse_command_line(bench_parser(), args);
  if (!parsed) {
    return 0;
  }
  TimingOptions timing;
  timing.min_repeat_ms = 50;
  timing.repeat = static_cast<int>(parsed->get_int("repeat", 5, 1, 10000));
  timing.min_repeat_ms = parsed->get_double("min-repeat-ms", 50, 0, 600000);
  auto seed = static_cast<uint64_t>(parsed->get_int("seed", 1, 0, INT64_MAX));
  auto requested_threads = static_cast<int>(parsed->get_int("threads", 0, 1, 4096));

  te::Workload workload = te::make_workload(parsed->get("workload"));
  std::string target_text = parsed->get("target");
  target::Target target = resolve_target(target_text);
  const bool compare = parsed->has("compare");
  if (!compare && parsed->has("rounds")) {
    throw UsageError("--rounds needs --compare", "bench");
  }
  if (target.is_gpu()) {
    TT_USER_CHECK(!compare) << "bench --compare times CPU kernels only";
    return run_gpu_bench(*parsed, workload, target_text, target, timing, seed);
  }
  check_target_runs_here(target_text, "bench", true);
  int threads = thread_count(requested_threads, target);
  target.cores = threads;
  tt_set_num_threads(threads);
  timing.cache_flush = parsed->has("cache-flush");
  if (compare) {
    return run_compare(*parsed, workload, target_text, target, threads, timing, seed);
  }
  std::optional<BuildDeadline> deadline(std::in_place, build_timeout(*parsed), "bench");
  ScheduleChoice choice = choose_schedule(*parsed, workload, "bench");
  std::pair<BuiltKernel, KernelBuffers> built = build_and_verify(workload, choice, target, seed);
  deadline.reset();  // timing is not building: --repeat and --min-repeat-ms bound it
  const BuiltKernel& kernel = built.first;
  void* const* pointers = built.second.pointers();
  const KernelBuffers& buffers = built.second;
  TimingResult timed = measure::time_with_warmup([&] { kernel.artifact(pointers); }, timing,
                                                 [&] { buffers.flush_caches(); });
  PeakResult peak = measure_fma_peak(threads);
  TT_LOG(1) << "number " << timed.number << ", " << timed.repeats.size() << " repeats; peak "
            << peak.gflops << " GFLOP/s on " << peak.threads << " threads with " << peak.isa;
  print_result(parsed->has("json"), workload, target_text, target, choice, threads, timed, peak);
  return 0;
}

}  // namespace tensortune::cli

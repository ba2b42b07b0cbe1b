// SPDX-License-Identifier: Apache-2.0
// The helpers the tensortune binary and the benchmarks share: the argument parser, the timing
// protocol's bookkeeping, random kernel inputs and the check that catches wrong results.
#include "args.h"
#include "buffers.h"
#include "pipeline.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/support/error.h"
#include "tensortune/te/operators.h"
#include "timing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace tensortune::cli {
namespace {

ArgParser test_parser() {
  ArgParser parser("demo", "demo --name N [--tag T]...", "A parser for tests.");
  parser.option("name", "N", "a name", {}, true)
      .option("tag", "T", "a tag", {}, false, true)
      .option("mode", "M", "a mode", {"fast", "slow"})
      .option("count", "C", "a count")
      .flag("json", "json output");
  return parser;
}

TEST(ArgParser, AcceptsSpaceAndEqualsFormsFlagsAndRepeats) {
  ArgParser::Parsed p = test_parser().parse(
      {"--name", "x", "--tag=a", "--tag", "b=c", "--json", "--mode=slow", "-vv", "--count", "-3"});
  EXPECT_EQ(p.get("name"), "x");
  EXPECT_EQ(p.get_all("tag"), (std::vector<std::string>{"a", "b=c"}));
  EXPECT_TRUE(p.has("json"));
  EXPECT_EQ(p.get("mode"), "slow");
  EXPECT_EQ(p.get_int("count", 0, -10, 10), -3);
  EXPECT_EQ(p.verbosity, 2);
  EXPECT_FALSE(p.help);
  EXPECT_EQ(p.get("missing", "fallback"), "fallback");
}

TEST(ArgParser, HelpWinsOverOtherMistakes) {
  ArgParser::Parsed p = test_parser().parse({"--bogus", "-h"});
  EXPECT_TRUE(p.help);
  std::string help = test_parser().help_text();
  EXPECT_NE(help.find("usage: tensortune demo"), std::string::npos);
  EXPECT_NE(help.find("--mode M"), std::string::npos);
  EXPECT_NE(help.find("fast|slow"), std::string::npos);
}

TEST(ArgParser, RejectsMalformedCommandLinesWithUsageErrors) {
  std::vector<std::vector<std::string>> bad = {
      {"--name", "x", "--bogus"},         // unknown option
      {"--name"},                         // missing value
      {"--name", "--json"},               // value looks like an option
      {"--tag", "a"},                     // missing required option
      {"--name", "x", "--json=1"},        // a flag with a value
      {"--name", "x", "--mode", "warp"},  // not a choice
      {"--name", "x", "--name", "y"},     // not repeatable
      {"--name", "x", "stray"},           // positional
  };
  for (const auto& args : bad) {
    EXPECT_THROW(test_parser().parse(args), UsageError) << args.back();
  }
  ArgParser::Parsed p = test_parser().parse({"--name", "x", "--count", "7x"});
  EXPECT_THROW(p.get_int("count", 0, 0, 100), UsageError);
  try {
    test_parser().parse({"--name", "x", "--bogus"});
  } catch (const UsageError& e) {
    EXPECT_EQ(e.command(), "demo");
    EXPECT_NE(std::string(e.what()).find("unknown option '--bogus'"), std::string::npos);
  }
}

TEST(Timing, RunsWarmUpCalibrationAndEveryRepeat) {
  int calls = 0;
  TimingOptions options;
  options.repeat = 4;
  options.min_repeat_ms = 0;
  TimingResult r = time_calls([&] { ++calls; }, options);
  EXPECT_EQ(r.number, 1);
  ASSERT_EQ(r.repeats.size(), 4U);
  EXPECT_EQ(calls, 1 + 1 + 4);  // warm-up, one calibration batch, the repeats
  EXPECT_DOUBLE_EQ(r.median_seconds, median(r.repeats));
}

TEST(Timing, NumberStopsAtItsBound) {
  TimingOptions options;
  options.repeat = 1;
  options.min_repeat_ms = 1e9;  // never reached: the bound stops the doubling
  options.max_number = 8;
  int calls = 0;
  TimingResult r = time_calls([&] { ++calls; }, options);
  EXPECT_EQ(r.number, 8);
  EXPECT_EQ(calls, 1 + (1 + 2 + 4) + 8);
}

TEST(Timing, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

/// Builds matmul 8x8x8 with the default schedule for the host.
BuiltKernel small_matmul(const te::Workload& workload) {
  return build_kernel(workload, schedule::Schedule{workload.key(), {}}, resolve_target("native"));
}

TEST(KernelBuffers, InputsAreRandomNonZeroAndReproducible) {
  te::Workload workload = te::make_workload("matmul:M=8,N=8,K=8");
  BuiltKernel kernel = small_matmul(workload);
  KernelBuffers a(kernel.func), b(kernel.func);
  a.fill_inputs(7);
  b.fill_inputs(7);
  const auto* x = static_cast<const float*>(a.data(0));
  const auto* y = static_cast<const float*>(b.data(0));
  for (int i = 0; i < 64; ++i) {
    EXPECT_GE(std::fabs(x[i]), 0.1f);
    EXPECT_LE(std::fabs(x[i]), 1.0f);
    EXPECT_EQ(x[i], y[i]);
  }
}

TEST(CheckOutputs, AcceptsEqualResultsAndNamesTheFirstWrongElement) {
  te::Workload workload = te::make_workload("matmul:M=8,N=8,K=8");
  BuiltKernel kernel = small_matmul(workload);
  KernelBuffers got(kernel.func), expected(kernel.func);
  got.fill_inputs(1);
  expected.copy_inputs_from(got);
  got.fill_outputs(2);
  expected.fill_outputs(3);
  ASSERT_EQ(kernel.artifact(got.pointers()), 0);
  ASSERT_EQ(kernel.artifact(expected.pointers()), 0);
  EXPECT_NO_THROW(check_outputs(got, expected, max_reduction_length(workload)));

  static_cast<float*>(got.data(2))[8 * 3 + 5] += 0.5f;  // C[3, 5]
  try {
    check_outputs(got, expected, max_reduction_length(workload));
    ADD_FAILURE() << "a wrong element was not caught";
  } catch (const UserError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("the schedule computes wrong results: first mismatch at C[3, 5]"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("1 of 64 elements differ"), std::string::npos) << message;
  }
}

TEST(MaxReductionLength, IsTheProductOfTheReductionExtents) {
  EXPECT_EQ(max_reduction_length(te::make_workload("matmul:M=4,N=4,K=12")), 12);
  EXPECT_EQ(max_reduction_length(te::make_workload("relu:M=4,N=4")), 1);
}

}  // namespace
}  // namespace tensortune::cli

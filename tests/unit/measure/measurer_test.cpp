// SPDX-License-Identifier: Apache-2.0
// The Builder, Runner and Measurer with real worker processes: good candidates are verified and
// timed; candidates that crash, spin, exhaust memory, compute wrong values or fail to compile
// each cost one record of the right class, and the measurer carries on.
#include "tensortune/measure/measurer.h"

#include "candidates.h"
#include "tensortune/measure/worker.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

namespace tensortune::measure {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

/// Quick settings: a short timing protocol, and a run timeout far above what a 32^3 matmul needs.
MeasurerOptions quick_options(double run_timeout_s = 5) {
  MeasurerOptions options;
  options.build.workers = 2;
  options.run.timing.repeat = 3;
  options.run.timing.min_repeat_ms = 1;
  options.run.timeout_s = run_timeout_s;
  options.run.memory_limit_mb = 2048;
  options.run.threads = 2;
  return options;
}

constexpr int kN = 32;

TEST(Measurer, GoodCandidatesAreVerifiedAndTimedWithTheProtocol) {
  te::Workload w = matmul_workload(kN);
  Measurer measurer(target::Target(), quick_options());
  auto reference = measurer.make_reference(default_kernel(w), Tolerance::for_reduction(kN));
  ASSERT_EQ(reference->outputs.size(), 1U);
  EXPECT_EQ(reference->outputs[0].size(), size_t{kN * kN * 4});
  std::vector<ir::LoweredFunc> candidates = {default_kernel(w), tiled_matmul(w, 4, 16),
                                             tiled_matmul(w, 8, 8), tiled_matmul(w, 2, 32)};
  std::vector<MeasureResult> results = measurer.measure(*reference, candidates);
  ASSERT_EQ(results.size(), candidates.size());
  for (const MeasureResult& r : results) {
    ASSERT_TRUE(r.ok()) << status_name(r.status) << ": " << r.message;
    EXPECT_EQ(r.repeats.size(), 3U);
    EXPECT_GE(r.number, 1);
    EXPECT_DOUBLE_EQ(r.median_seconds, median(r.repeats));
    EXPECT_GE(r.repeats[0] * static_cast<double>(r.number), 1e-3);  // min_repeat_ms
    EXPECT_GT(r.build_seconds, 0);
    EXPECT_GE(r.wall_seconds, r.build_seconds);
  }
  EXPECT_EQ(measurer.totals().trials, 4);
  EXPECT_EQ(measurer.totals().by_status[0], 4);
  EXPECT_EQ(measurer.runner().worker_starts(), 1);
}

TEST(Measurer, AKernelWithPrepackedWeightsIsPreparedBeforeItIsCheckedAndTimed) {
  // conv2d declares its weights constant: the OIHW4o copy at the root becomes the prepare
  // function, which the worker runs once; without it the kernel would read zeros.
  te::Workload w = te::make_workload("conv2d:N=1,C=3,H=6,W=5,K=8,R=3,S=3,stride=1,pad=1");
  ir::LoweredFunc blocked =
      lower_steps(w, {schedule::CacheRead{"weight", ir::MemoryScope::Local, {}, {{0, 4}}},
                      schedule::ComputeInline{"conv_pad"}, schedule::Split{"conv", "f", 4},
                      schedule::Reorder{"conv", {"n", "f.o", "y", "rc", "ry", "rx", "x", "f.i"}},
                      schedule::Annotate{"conv", "f.i", ir::ForKind::Vectorized}});
  ASSERT_EQ(blocked.prepacked.size(), 1U);
  EXPECT_EQ(KernelSignature::of(blocked).prepacked.size(), 1U);
  EXPECT_EQ(KernelSignature::from_json(KernelSignature::of(blocked).to_json()).prepacked.size(),
            1U);
  Measurer measurer(target::Target(), quick_options());
  auto reference = measurer.make_reference(default_kernel(w), Tolerance::for_reduction(27));
  MeasureResult r = measurer.measure(*reference, {blocked}).at(0);
  EXPECT_TRUE(r.ok()) << status_name(r.status) << ": " << r.message;
}

TEST(Measurer, HundredMixedCandidatesGiveHundredRecordsOfTheRightClass) {
  te::Workload w = matmul_workload(kN);
  ir::LoweredFunc base = default_kernel(w);
  Measurer measurer(target::Target(), quick_options(1.0));
  auto reference = measurer.make_reference(base, Tolerance::for_reduction(kN));
  std::vector<ir::LoweredFunc> candidates;
  std::vector<MeasureStatus> expected;
  auto add = [&](ir::LoweredFunc f, MeasureStatus s) {
    candidates.push_back(std::move(f));
    expected.push_back(s);
  };
  for (int block = 0; block < 10; ++block) {
    add(tiled_matmul(w, 4, 16), MeasureStatus::Ok);
    add(segfault_kernel(base), MeasureStatus::RuntimeError);
    add(tiled_matmul(w, 8, 8), MeasureStatus::Ok);
    add(spinning_kernel(base), MeasureStatus::RunTimeout);
    add(runaway_allocation_kernel(base), MeasureStatus::RuntimeError);
    add(default_kernel(w), MeasureStatus::Ok);
    add(wrong_values_kernel(base), MeasureStatus::WrongResult);
    add(compile_error_kernel(base), MeasureStatus::CompileError);
    add(unwritten_row_kernel(base, kN), MeasureStatus::WrongResult);
    add(tiled_matmul(w, 2, 32), MeasureStatus::Ok);
  }
  std::vector<MeasureResult> results = measurer.measure(*reference, candidates);
  ASSERT_EQ(results.size(), 100U);
  for (size_t i = 0; i < results.size(); ++i) {
    const MeasureResult& r = results[i];
    ASSERT_EQ(r.status, expected[i])
        << "candidate " << i << ": " << status_name(r.status) << ": " << r.message;
    if (r.ok()) {
      EXPECT_EQ(r.repeats.size(), 3U);
      EXPECT_GT(r.median_seconds, 0);
    } else {
      EXPECT_FALSE(r.message.empty()) << i;
      EXPECT_TRUE(r.repeats.empty()) << i;
    }
    switch (i % 10) {
      case 1:
        EXPECT_EQ(r.signal, SIGSEGV) << r.message;
        break;
      case 4:
        EXPECT_EQ(r.signal, SIGABRT) << r.message;
        EXPECT_NE(r.message.find("out of memory"), std::string::npos) << r.message;
        break;
      case 7:
        EXPECT_NE(r.message.find("not a C identifier"), std::string::npos) << r.message;
        break;
      case 8:
        EXPECT_NE(r.message.find("nan"), std::string::npos) << r.message;
        break;
      default:
        break;
    }
  }
  // One start, then one restart per segfault, timeout and abort.
  EXPECT_EQ(measurer.runner().worker_starts(), 1 + 30);
  EXPECT_EQ(measurer.totals().by_status[static_cast<int>(MeasureStatus::Ok)], 40);
  EXPECT_FALSE(measurer.stopped());
  // Still alive: the next batch measures normally.
  std::vector<MeasureResult> after = measurer.measure(*reference, {tiled_matmul(w, 4, 16)});
  EXPECT_TRUE(after.at(0).ok()) << after.at(0).message;
}

TEST(Builder, ABuildThatOutlivesItsTimeoutIsKilledAndTheNextOneBuilds) {
  te::Workload w = matmul_workload(kN);
  ir::LoweredFunc base = default_kernel(w);
  // 40000 straight-line stores: seconds of LLVM optimisation, far beyond 0.2 s.
  std::vector<ir::Stmt> stores;
  const ir::Buffer& c = output_of(base);
  for (int i = 0; i < 40000; ++i) {
    stores.push_back(store1(c, load1(c, (i * 7) % (kN * kN)) * ir::Expr(1.5f), i % (kN * kN)));
  }
  ir::LoweredFunc slow = with_body(base, ir::Seq::make(stores));
  BuilderOptions options;
  options.workers = 1;
  options.timeout_s = 0.2;
  Builder builder(target::Target(), options);
  std::vector<BuildResult> built = builder.build({slow, tiled_matmul(w, 4, 16)});
  ASSERT_EQ(built.size(), 2U);
  EXPECT_EQ(built[0].status, MeasureStatus::CompileTimeout) << built[0].message;
  EXPECT_TRUE(built[0].object.empty());
  EXPECT_TRUE(built[1].ok()) << built[1].message;
  EXPECT_FALSE(built[1].object.empty());
}

TEST(Runner, ACandidateWithOtherParametersIsAWrongResult) {
  te::Workload w = matmul_workload(kN);
  Measurer measurer(target::Target(), quick_options());
  auto reference = measurer.make_reference(default_kernel(w), Tolerance::for_reduction(kN));
  std::vector<MeasureResult> r =
      measurer.measure(*reference, {default_kernel(matmul_workload(16))});
  EXPECT_EQ(r.at(0).status, MeasureStatus::WrongResult);
  EXPECT_NE(r.at(0).message.find("parameters differ"), std::string::npos);
}

TEST(Runner, CacheFlushTimesOneCallPerRepeat) {
  te::Workload w = matmul_workload(kN);
  MeasurerOptions options = quick_options();
  options.run.timing.cache_flush = true;
  options.run.timing.repeat = 4;
  Measurer measurer(target::Target(), options);
  auto reference = measurer.make_reference(default_kernel(w), Tolerance::for_reduction(kN));
  MeasureResult r = measurer.measure(*reference, {tiled_matmul(w, 4, 16)}).at(0);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.number, 1);
  EXPECT_EQ(r.repeats.size(), 4U);
}

TEST(Measurer, ACandidateFarSlowerThanTheBestIsTimedByOneWarmCall) {
  te::Workload w = matmul_workload(kN);
  MeasurerOptions options = quick_options();
  options.single_call_factor = 1e-9;  // every candidate after the first Ok one is "far slower"
  options.run.timing.min_repeat_ms = 1e-6;  // and any one call lasts a repeat
  Measurer measurer(target::Target(), options);
  auto reference = measurer.make_reference(default_kernel(w), Tolerance::for_reduction(kN));
  const ir::LoweredFunc k = tiled_matmul(w, 4, 8);
  std::vector<MeasureResult> first = measurer.measure(*reference, {k});
  ASSERT_TRUE(first[0].ok()) << first[0].message;
  EXPECT_EQ(first[0].repeats.size(), static_cast<size_t>(options.run.timing.repeat));
  std::vector<MeasureResult> second = measurer.measure(*reference, {k, default_kernel(w)});
  for (const MeasureResult& r : second) {
    ASSERT_TRUE(r.ok()) << r.message;  // still verified
    ASSERT_EQ(r.repeats.size(), 1U);
    EXPECT_EQ(r.number, 1);
    EXPECT_DOUBLE_EQ(r.median_seconds, r.repeats[0]);
    EXPECT_GT(r.median_seconds, 0);
  }
  // Measuring known records again (Protocol::Full) never takes the shortcut.
  for (const MeasureResult& r :
       measurer.measure(*reference, {k, default_kernel(w)}, Measurer::Protocol::Full)) {
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(r.repeats.size(), static_cast<size_t>(options.run.timing.repeat));
    EXPECT_GT(r.run_seconds, 0);
  }
  // Another reference starts without a best: the full protocol again.
  auto other = measurer.make_reference(default_kernel(w), Tolerance::for_reduction(kN));
  EXPECT_EQ(measurer.measure(*other, {k})[0].repeats.size(),
            static_cast<size_t>(options.run.timing.repeat));
}

TEST(Measurer, RoundsShareTheRepeatsAndTimeEveryPassingCandidateInEachRound) {
  te::Workload w = matmul_workload(kN);
  ir::LoweredFunc base = default_kernel(w);
  MeasurerOptions options = quick_options();
  options.run.timing.repeat = 5;
  options.rounds = 3;
  Measurer measurer(target::Target(), options);
  auto reference = measurer.make_reference(base, Tolerance::for_reduction(kN));
  std::vector<MeasureResult> results = measurer.measure(
      *reference, {tiled_matmul(w, 4, 16), wrong_values_kernel(base), tiled_matmul(w, 8, 8)});
  ASSERT_EQ(results.size(), 3U);
  for (size_t i : {0U, 2U}) {
    const MeasureResult& r = results[i];
    ASSERT_TRUE(r.ok()) << r.message;
    // 2 + 2 + 1 repeats in three rounds: the protocol's five, spread over the batch.
    EXPECT_EQ(r.repeats.size(), 5U);
    EXPECT_DOUBLE_EQ(r.median_seconds, median(r.repeats));
    EXPECT_GT(r.run_seconds, 0);
    EXPECT_GE(r.wall_seconds, r.build_seconds + r.run_seconds);
  }
  // A candidate that failed its check is not run again, and counts once.
  EXPECT_EQ(results[1].status, MeasureStatus::WrongResult);
  EXPECT_TRUE(results[1].repeats.empty());
  EXPECT_EQ(measurer.totals().trials, 3);
  EXPECT_EQ(measurer.totals().by_status[0], 2);
  // The runner is left with the whole protocol (the rounds' shares were only for the batch).
  EXPECT_EQ(measurer.runner().options().timing.repeat, 5);

  // Each round keeps at least one repeat of its share of a spent budget: one per round here, where
  // timing in one go would have kept one in all.
  options.run.timing.repeat = 6;
  options.run.timing.budget_s = 1e-12;
  Measurer spent(target::Target(), options);
  auto ref = spent.make_reference(base, Tolerance::for_reduction(kN));
  const MeasureResult cut = spent.measure(*ref, {tiled_matmul(w, 4, 16)}).at(0);
  ASSERT_TRUE(cut.ok()) << cut.message;
  EXPECT_EQ(cut.repeats.size(), 3U);

  // More rounds than repeats: one repeat per round.
  options.run.timing.budget_s = 0;
  options.run.timing.repeat = 2;
  options.rounds = 4;
  Measurer few(target::Target(), options);
  auto again = few.make_reference(base, Tolerance::for_reduction(kN));
  const MeasureResult r = few.measure(*again, {tiled_matmul(w, 4, 16)}).at(0);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.repeats.size(), 2U);

  options.rounds = 0;
  EXPECT_THROW(Measurer(target::Target(), options), UserError);
}

TEST(Measurer, InRoundsACandidateTimedByOneCallIsNotRunAgain) {
  te::Workload w = matmul_workload(kN);
  MeasurerOptions options = quick_options();
  options.rounds = 3;
  options.single_call_factor = 1e-9;  // every candidate after the first Ok one is "far slower"
  options.run.timing.min_repeat_ms = 1e-6;  // and any one call lasts a repeat
  Measurer measurer(target::Target(), options);
  auto reference = measurer.make_reference(default_kernel(w), Tolerance::for_reduction(kN));
  const std::vector<MeasureResult> first = measurer.measure(*reference, {tiled_matmul(w, 4, 8)});
  ASSERT_TRUE(first[0].ok()) << first[0].message;
  EXPECT_EQ(first[0].repeats.size(), 3U);  // one per round
  const MeasureResult second = measurer.measure(*reference, {default_kernel(w)}).at(0);
  ASSERT_TRUE(second.ok()) << second.message;
  EXPECT_EQ(second.repeats.size(), 1U);
  EXPECT_EQ(second.run_seconds, 0);
}

TEST(Measurer, StopsAfterTooManyFailuresInARowAndSaysWhy) {
  te::Workload w = matmul_workload(kN);
  ir::LoweredFunc base = default_kernel(w);
  MeasurerOptions options = quick_options();
  options.max_consecutive_errors = 4;
  Measurer measurer(target::Target(), options);
  auto reference = measurer.make_reference(base, Tolerance::for_reduction(kN));
  // Three failures, a success (the count restarts), then four failures: the rule fires.
  measurer.measure(*reference, {compile_error_kernel(base), wrong_values_kernel(base),
                                compile_error_kernel(base), base});
  EXPECT_FALSE(measurer.stopped());
  measurer.measure(*reference, {compile_error_kernel(base), wrong_values_kernel(base),
                                compile_error_kernel(base), compile_error_kernel(base)});
  ASSERT_TRUE(measurer.stopped());
  EXPECT_NE(measurer.stop_reason().find("4 failed trials in a row (3 CompileError, 1 WrongResult)"),
            std::string::npos)
      << measurer.stop_reason();
  EXPECT_NE(measurer.stop_reason().find("not a C identifier"), std::string::npos);
  EXPECT_THROW(measurer.measure(*reference, {base}), UserError);
}

TEST(Measurer, ADefaultKernelThatFailsIsAUserError) {
  te::Workload w = matmul_workload(kN);
  ir::LoweredFunc base = default_kernel(w);
  Measurer measurer(target::Target(), quick_options());
  EXPECT_THROW(measurer.make_reference(compile_error_kernel(base), Tolerance{}), UserError);
  EXPECT_THROW(measurer.make_reference(segfault_kernel(base), Tolerance{}), UserError);
  // The worker came back for the next request.
  EXPECT_NO_THROW(measurer.make_reference(base, Tolerance{}));
}

TEST(FindWorker, AMissingExecutableIsAUserErrorNamingIt) {
  EXPECT_THROW(find_worker("/nonexistent/tensortune-worker"), UserError);
  EXPECT_FALSE(find_worker().empty());
  ::setenv("TT_WORKER", "/nonexistent/worker", 1);
  EXPECT_THROW(find_worker(), UserError);
  ::unsetenv("TT_WORKER");
}

}  // namespace
}  // namespace tensortune::measure

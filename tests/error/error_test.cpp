// SPDX-License-Identifier: Apache-2.0
// One test per user mistake: the error is a UserError (or ScheduleError), never an
// InternalError, and its message names the stage, the axis or the offending text.
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace tensortune {
namespace {

using schedule::Step;

te::Workload matmul_relu() {
  te::Tensor a = te::placeholder({16, 12}, ir::DataType::float32(), "A");
  te::Tensor b = te::placeholder({12, 20}, ir::DataType::float32(), "B");
  te::Tensor c = te::matmul(a, b, false, "C");
  te::Tensor r = te::relu(c, "R");
  return te::Workload("matmul_relu", {a, b}, {r});
}

// Runs `fn`, expects an exception of type E (and not InternalError) whose message contains
// every word of `words`.
template <class E>
void expect_error(const std::function<void()>& fn, const std::vector<std::string>& words) {
  try {
    fn();
  } catch (const InternalError& e) {
    FAIL() << "internal error instead of a user error: " << e.what();
  } catch (const E& e) {
    std::string message = e.what();
    for (const std::string& w : words) {
      EXPECT_NE(message.find(w), std::string::npos) << "'" << w << "' missing in: " << message;
    }
    return;
  }
  FAIL() << "no error raised";
}

void apply_all(const std::vector<Step>& steps) {
  (void)schedule::apply_steps(matmul_relu(), steps);
}

TEST(UserMistake, UnknownAxis) {
  expect_error<ScheduleError>([] { apply_all({schedule::Split{"C", "k.o", 4}}); },
                              {"split", "'C'", "'k.o'"});
}

TEST(UserMistake, UnknownStage) {
  expect_error<ScheduleError>([] { apply_all({schedule::Split{"D", "i", 4}}); }, {"'D'"});
}

TEST(UserMistake, NonPositiveSplitFactor) {
  expect_error<ScheduleError>([] { apply_all({schedule::Split{"C", "i", 0}}); },
                              {"split", "'C'", "'i'"});
  expect_error<ScheduleError>([] { apply_all({schedule::Split{"C", "j", -3}}); },
                              {"split", "'C'", "'j'"});
}

TEST(UserMistake, DuplicateAxisInReorder) {
  expect_error<ScheduleError>([] { apply_all({schedule::Reorder{"C", {"i", "j", "i"}}}); },
                              {"reorder", "'i'"});
}

TEST(UserMistake, VectorizeOfAReductionAxis) {
  expect_error<ScheduleError>(
      [] { apply_all({schedule::Annotate{"C", "k", ir::ForKind::Vectorized}}); },
      {"vectorize", "'k'", "'C'"});
}

TEST(UserMistake, ComputeAtIntoANonConsumer) {
  // A is read by C only; R does not read A.
  expect_error<ScheduleError>([] { apply_all({schedule::ComputeAt{"C", "C", "i"}}); },
                              {"compute_at", "'C'"});
  expect_error<ScheduleError>(
      [] {
        apply_all({schedule::CacheRead{"A", ir::MemoryScope::Local, {}},
                   schedule::ComputeAt{"A.local", "R", "i"}});
      },
      {"compute_at", "'A.local'", "'R'"});
}

TEST(UserMistake, BindOnACpuTarget) {
  te::Workload w = matmul_relu();
  schedule::Schedule s{w.key(), {schedule::Annotate{"R", "i", ir::ForKind::BlockX}}};
  expect_error<ScheduleError>(
      [&] { (void)lower::lower(w, s, target::Target::parse("llvm -cores=2")); },
      {"bind", "'i'", "'R'", "blockIdx.x"});
}

TEST(UserMistake, MalformedScheduleJson) {
  expect_error<UserError>([] { (void)schedule::parse_schedule("{\"version\": 1, \"steps\": ["); },
                          {"line"});
  expect_error<UserError>(
      [] {
        (void)schedule::parse_schedule(
            R"({"version":1,"workload_key":"x","steps":[{"kind":"split","stage":"C"}]})");
      },
      {"step 0", "axis"});
  expect_error<UserError>(
      [] {
        (void)schedule::parse_schedule(R"({"version":1,"workload_key":"x","steps":[{"kind":"warp"}]})");
      },
      {"warp"});
}

TEST(UserMistake, MalformedWorkloadSpec) {
  expect_error<UserError>([] { (void)te::make_workload("matmul:M=8,N=8"); }, {"matmul", "K"});
  expect_error<UserError>([] { (void)te::make_workload("matmul:M=8,N=eight,K=8"); },
                          {"eight"});
  expect_error<UserError>([] { (void)te::make_workload("matmull:M=8"); }, {"matmull"});
  expect_error<UserError>([] { (void)te::make_workload("matmul:M=8,,K=1"); }, {"matmul"});
}

TEST(UserMistake, ScheduleForAnotherWorkload) {
  te::Workload w = matmul_relu();
  schedule::Schedule s{"matmul_8x8x8_float32_0000000000000000", {}};
  expect_error<ScheduleError>([&] { (void)schedule::apply_schedule(w, s); }, {"workload"});
}

TEST(UserMistake, BadTargetString) {
  expect_error<UserError>([] { (void)target::Target::parse("llvm -cores=two"); }, {"cores"});
  expect_error<UserError>([] { (void)target::Target::parse("tpu"); }, {"tpu"});
}

}  // namespace
}  // namespace tensortune

// SPDX-License-Identifier: Apache-2.0
// Fitting steps to another shape, the distance between shapes, and reading a record's steps.
#include "driver_test_util.h"
#include "tensortune/driver/compile.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tensortune::driver {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace): driver::testing
using schedule::Split;
using schedule::Step;
using schedule::Tile;

TEST(AdaptSteps, ClampsFactorsLargerThanTheAxisAndKeepsTheRest) {
  te::Workload w = te::make_workload("matmul:M=16,N=48,K=20");
  std::vector<Step> steps = {Split{"C", "i", 32, false}, Split{"C", "i.i", 64, false},
                             Split{"C", "j", 32, false}, Split{"C", "k", 50, true},
                             schedule::Reorder{"C", {"j.o", "i.o"}}};
  std::vector<Step> adapted = adapt_steps(w, steps);
  ASSERT_EQ(adapted.size(), steps.size());
  EXPECT_TRUE(adapted[0] == Step(Split{"C", "i", 16, false}));
  // After clamping, i.i has 16 iterations: the next split is clamped against that.
  EXPECT_TRUE(adapted[1] == Step(Split{"C", "i.i", 16, false}));
  EXPECT_TRUE(adapted[2] == Step(Split{"C", "j", 32, false}));
  EXPECT_TRUE(adapted[3] == Step(Split{"C", "k", 20, true}));
  EXPECT_TRUE(adapted[4] == steps[4]);
  EXPECT_NO_THROW(schedule::apply_steps(w, adapted));
}

TEST(AdaptSteps, ClampsTileFactors) {
  te::Workload w = te::make_workload("matmul:M=8,N=100,K=4");
  std::vector<Step> adapted = adapt_steps(w, {Tile{"C", "i", "j", 32, 32}});
  EXPECT_TRUE(adapted[0] == Step(Tile{"C", "i", "j", 8, 32}));
}

TEST(AdaptSteps, LeavesAStepThatDoesNotApplyAndEverythingAfterIt) {
  te::Workload w = te::make_workload("matmul:M=16,N=16,K=16");
  std::vector<Step> steps = {Split{"C", "zz", 64, false}, Split{"C", "i", 64, false}};
  std::vector<Step> adapted = adapt_steps(w, steps);
  EXPECT_TRUE(adapted[0] == steps[0]);
  EXPECT_TRUE(adapted[1] == steps[1]);
  EXPECT_THROW(schedule::apply_steps(w, adapted), ScheduleError);
}

TEST(SpecDistance, GrowsWithTheLogOfEachShapeRatio) {
  double same = spec_distance("matmul:M=64,N=64,K=64", "matmul:K=64,M=64,N=64");
  double near = spec_distance("matmul:M=16,N=48,K=20", "matmul:M=64,N=64,K=64");
  double far = spec_distance("matmul:M=16,N=48,K=20", "matmul:M=1024,N=1024,K=1024");
  EXPECT_DOUBLE_EQ(same, 0);
  EXPECT_GT(near, 0);
  EXPECT_LT(near, far);
  EXPECT_NEAR(spec_distance("matmul:M=1,N=7,K=7", "matmul:M=3,N=7,K=7"), std::log(2.0), 1e-12);
}

TEST(SpecDistance, OtherParametersCostAFixedPenaltyAndOtherOperatorsAreInfinite) {
  EXPECT_DOUBLE_EQ(spec_distance("matmul:M=8,N=8,K=8,dtype=float32", "matmul:M=8,N=8,K=8"), 10);
  EXPECT_DOUBLE_EQ(
      spec_distance("matmul:M=8,N=8,K=8,dtype=float32", "matmul:M=8,N=8,K=8,dtype=int32"), 10);
  EXPECT_TRUE(std::isinf(spec_distance("matmul:M=8,N=8,K=8", "dense:M=8,N=8,K=8")));
  EXPECT_THROW(spec_distance("matmul:M", "matmul:M=8"), UserError);
}

TEST(RecordSchedule, ParsesTheStepsAndNamesTheRecordWhenTheyAreBad) {
  te::Workload w = te::make_workload("matmul:M=8,N=8,K=8");
  database::Record r = record(w, {"llvm", "fp"}, {Split{"C", "i", 4, false}}, 1e-3);
  r.id = 42;
  schedule::Schedule parsed = record_schedule(r);
  EXPECT_EQ(parsed.workload_key, w.key());
  ASSERT_EQ(parsed.steps.size(), 1U);
  r.schedule = "not json";
  try {
    record_schedule(r);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("record #42: ", 0), 0U) << e.what();
  }
  r = record(w, {"llvm", "fp"}, {}, 1e-3);
  r.workload_key = "someone_else";
  EXPECT_THROW(record_schedule(r), UserError);
}

TEST(SourceName, NamesEverySource) {
  EXPECT_STREQ(source_name(Source::Record), "record");
  EXPECT_STREQ(source_name(Source::Adapted), "adapted");
  EXPECT_STREQ(source_name(Source::Default), "default");
}

}  // namespace
}  // namespace tensortune::driver

// SPDX-License-Identifier: Apache-2.0
// The measurer's plain data: signatures, tolerances, results and build results survive their JSON
// forms exactly, and malformed documents are UserErrors naming the field.
#include "candidates.h"
#include "tensortune/measure/builder.h"
#include "tensortune/measure/measure_input.h"
#include "tensortune/measure/measure_result.h"
#include "tensortune/measure/timing.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

namespace tensortune::measure {
namespace {

TEST(KernelSignature, TakesTheLoweredParametersAndRoundTrips) {
  te::Workload w = testing::matmul_workload(8);
  KernelSignature sig = KernelSignature::of(testing::default_kernel(w));
  ASSERT_EQ(sig.params.size(), 3U);
  EXPECT_EQ(sig.num_inputs, 2U);
  EXPECT_EQ(sig.params[2].name, "C");
  EXPECT_EQ(sig.params[2].shape, (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(sig.params[2].num_bytes(), 8 * 8 * 4);
  KernelSignature back = KernelSignature::from_json(support::Json::parse(sig.to_json().dump()));
  EXPECT_EQ(back.name, sig.name);
  EXPECT_EQ(back.params, sig.params);
  EXPECT_EQ(back.num_inputs, sig.num_inputs);
  EXPECT_TRUE(back.compatible_with(sig));
  KernelSignature other = KernelSignature::of(testing::default_kernel(testing::matmul_workload(4)));
  EXPECT_FALSE(other.compatible_with(sig));
}

TEST(KernelSignature, MalformedDocumentsNameTheProblem) {
  auto parse = [](const char* text) {
    return KernelSignature::from_json(support::Json::parse(text));
  };
  EXPECT_THROW(parse(R"({"name":"k","params":[]})"), UserError);  // no num_inputs
  EXPECT_THROW(parse(R"({"name":"k","num_inputs":2,"params":[]})"), UserError);
  EXPECT_THROW(parse(R"({"name":"k","num_inputs":0,"params":[{"name":"a","dtype":"float9",)"
                     R"("shape":[2]}]})"),
               UserError);
  try {
    parse(R"({"name":"k","num_inputs":0,"params":[{"name":"a","dtype":"float32","shape":[0]}]})");
    ADD_FAILURE() << "a zero extent was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("parameter 'a' has extent 0"), std::string::npos);
  }
}

TEST(Tolerance, GrowsWithTheSquareRootOfTheReduction) {
  EXPECT_DOUBLE_EQ(Tolerance::for_reduction(100).slack, 1.0);
  EXPECT_DOUBLE_EQ(Tolerance::for_reduction(0).slack, 0.1);
  Tolerance t = Tolerance::for_reduction(400, 1e-4);
  Tolerance back = Tolerance::from_json(support::Json::parse(t.to_json().dump()));
  EXPECT_DOUBLE_EQ(back.rtol, 1e-4);
  EXPECT_DOUBLE_EQ(back.slack, 2.0);
}

TEST(MeasureStatus, NamesRoundTripAndUnknownNamesAreRejected) {
  for (int s = 0; s < 6; ++s) {
    auto status = static_cast<MeasureStatus>(s);
    EXPECT_EQ(parse_status(status_name(status)), status);
  }
  EXPECT_THROW(parse_status("Crashed"), UserError);
}

TEST(MeasureResult, RoundTripsExactlyThroughJson) {
  MeasureResult r;
  r.status = MeasureStatus::RuntimeError;
  r.message = "the kernel killed its worker: signal 11 (Segmentation fault)";
  r.signal = 11;
  r.repeats = {1.5e-3, 1.25e-3, 1.75e-3};
  r.median_seconds = 1.5e-3;
  r.number = 17;
  r.build_seconds = 0.125;
  r.run_seconds = 0.5;
  r.verify_seconds = 0.01;
  r.wall_seconds = 0.75;
  MeasureResult back = MeasureResult::from_json(support::Json::parse(r.to_json().dump()));
  EXPECT_EQ(back.to_json().dump(), r.to_json().dump());
  EXPECT_EQ(back.repeats, r.repeats);
  EXPECT_EQ(back.signal, 11);
  support::Json broken = r.to_json();
  broken["number"] = "many";
  EXPECT_THROW(MeasureResult::from_json(broken), UserError);
}

TEST(TimingOptions, RoundTripThroughJson) {
  TimingOptions t;
  t.repeat = 7;
  t.min_repeat_ms = 12.5;
  t.max_number = 1000;
  t.cache_flush = true;
  t.budget_s = 1.5;
  TimingOptions back = TimingOptions::from_json(support::Json::parse(t.to_json().dump()));
  EXPECT_EQ(back.to_json().dump(), t.to_json().dump());
  support::Json broken = t.to_json();
  broken["repeat"] = "often";
  EXPECT_THROW(TimingOptions::from_json(broken), UserError);
}

TEST(BuildResult, RoundTripsWithItsObjectAsASeparateBlob) {
  BuildResult b;
  b.signature = KernelSignature::of(testing::default_kernel(testing::matmul_workload(4)));
  b.status = MeasureStatus::CompileTimeout;
  b.message = "the build took longer than 1 s";
  b.build_seconds = 1.0;
  BuildResult back = BuildResult::from_json(support::Json::parse(b.to_json().dump()), "obj");
  EXPECT_EQ(back.to_json().dump(), b.to_json().dump());
  EXPECT_EQ(back.object, "obj");
  EXPECT_FALSE(back.ok());
}

}  // namespace
}  // namespace tensortune::measure

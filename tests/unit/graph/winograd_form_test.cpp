// SPDX-License-Identifier: Apache-2.0
// The Winograd form of a model's 3x3 stride-1 convolutions: offered as an alternative task,
// built when its stored best is the faster one, and computing what the direct form computes.
#include "common/db_records.h"
#include "common/temp_dir.h"
#include "graph_builder.h"
#include "tensortune/database/database.h"
#include "tensortune/driver/compile.h"
#include "tensortune/graph/executor.h"
#include "tensortune/graph/partition.h"
#include "tensortune/target/target.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace tensortune::graph {
namespace {

using testing::Builder;
using testing::ints_attr;

/// x -> conv 3x3 pad 1 with bias -> relu -> conv 3x3 stride 2 pad 1 -> y: only the first conv
/// has a Winograd form.
Builder two_convs(int64_t hw) {
  Builder b;
  b.input("x", {1, 4, hw, hw});
  b.constant("w1", {8, 4, 3, 3}, 0.2);
  b.constant("b1", {8}, 0.1);
  b.constant("w2", {4, 8, 3, 3}, 0.2, 0.0, 9);
  b.node("Conv", {"x", "w1", "b1"}, "c1", {1, 8, hw, hw}, {{"pads", ints_attr({1, 1, 1, 1})}});
  b.node("Relu", {"c1"}, "r1", {1, 8, hw, hw});
  const int64_t half = (hw - 1) / 2 + 1;
  b.output(b.node("Conv", {"r1", "w2"}, "y", {1, 4, half, half},
                  {{"pads", ints_attr({1, 1, 1, 1})}, {"strides", ints_attr({2, 2})}}));
  return b;
}

/// Stores a record of `w`'s default schedule taking `seconds`.
void store_record(database::Database& db,
                  const driver::Compiler& compiler,
                  const te::Workload& w,
                  double seconds) {
  tensortune::test::register_workload(db, w);
  db.add_records({tensortune::test::record(w, compiler.identity(), {}, seconds)});
}

/// two_convs(16) and its tasks.
struct TwoConvs {
  Builder b = two_convs(16);
  std::vector<Task> tasks = extract_tasks(b.g, partition(b.g));
  /// The first conv's two forms.
  te::Workload direct = tasks.at(0).workload;
  te::Workload winograd = tasks.at(0).alternatives.at(0);
};

/// Every element of `got` within 1e-5 x the largest magnitude in `want` of its own.
void expect_close(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  float scale = 0;
  for (float v : want)
    scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5 * scale) << i;
}

TEST(WinogradForm, ThreeByThreeStrideOneConvsHaveAWinogradAlternative) {
  for (int64_t hw : {6, 16}) {
    SCOPED_TRACE(hw);
    Builder b = two_convs(hw);
    std::vector<Task> tasks = extract_tasks(b.g, partition(b.g));
    ASSERT_EQ(tasks.size(), 2u);
    ASSERT_EQ(tasks[0].alternatives.size(), 1u);
    // F(4x4, 3x3) from 8 wide up, F(2x2, 3x3) below.
    const std::string hws = std::to_string(hw);
    EXPECT_EQ(tasks[0].alternatives[0].name(), "conv_relu_winograd" +
                                                   std::string(hw >= 8 ? "4" : "2") + "_1x8x" +
                                                   hws + "x" + hws + "_float32");
    EXPECT_TRUE(tasks[1].alternatives.empty()) << "a stride-2 conv has no Winograd form";
  }
}

TEST(WinogradForm, TheFormWithTheFasterStoredBestIsBuiltAndComputesTheSame) {
  const TwoConvs m;
  const te::Workload& direct = m.direct;
  const te::Workload& winograd = m.winograd;
  const std::vector<float> x = testing::wave(4 * 16 * 16);
  driver::Compiler untuned(nullptr, target::Target::parse("llvm"));
  Executable plain = Executable::build(m.b.g, untuned);
  EXPECT_EQ(plain.run_plan().calls.at(0).workload, direct.name()) << "no record: direct";
  const std::vector<float> want = plain.run({x}).at(0);

  tensortune::test::TempDir dir("tt_winograd_form");
  database::Database db = database::Database::open(dir.file("t.db"));
  driver::Compiler compiler(&db, target::Target::parse("llvm"));
  store_record(db, compiler, winograd, 5e-4);
  Executable wino = Executable::build(m.b.g, compiler);
  EXPECT_EQ(wino.run_plan().calls.at(0).workload, winograd.name()) << "only Winograd is tuned";
  EXPECT_EQ(wino.run_plan().calls.at(1).workload, m.tasks[1].workload.name());
  const std::vector<float> got = wino.run({x}).at(0);
  expect_close(got, want);

  store_record(db, compiler, direct, 1e-3);
  EXPECT_EQ(Executable::build(m.b.g, compiler).run_plan().calls.at(0).workload, winograd.name())
      << "Winograd's best is the faster";
  store_record(db, compiler, direct, 1e-4);
  EXPECT_EQ(Executable::build(m.b.g, compiler).run_plan().calls.at(0).workload, direct.name())
      << "now the direct form's best is the faster";
}

TEST(WinogradForm, WithoutOwnRecordsTheShippedLogsChooseTheForm) {
  const TwoConvs m;
  const te::Workload& direct = m.direct;
  const te::Workload& winograd = m.winograd;
  tensortune::test::TempDir dir("tt_winograd_shipped");
  database::Database shipped = database::Database::open(dir.file("shipped.db"));
  database::Database user = database::Database::open(dir.file("user.db"));
  driver::Compiler compiler(&user, target::Target::parse("llvm"));
  store_record(shipped, compiler, direct, 1e-3);
  store_record(shipped, compiler, winograd, 5e-4);
  compiler.set_shipped(&shipped);  // the logs as shipped: complete before the compiler reads them
  Executable built = Executable::build(m.b.g, compiler);
  EXPECT_EQ(built.run_plan().calls.at(0).workload, winograd.name()) << "shipped: Winograd faster";
  EXPECT_EQ(built.kernels().at(0).compiled.lookup.source, driver::Source::Shipped);
  // Built from the shipped record, it still computes what the untuned direct form computes.
  driver::Compiler untuned(nullptr, target::Target::parse("llvm"));
  const std::vector<float> x = testing::wave(4 * 16 * 16);
  const std::vector<float> want = Executable::build(m.b.g, untuned).run({x}).at(0);
  const std::vector<float> got = built.run({x}).at(0);
  expect_close(got, want);
  // A record of the user's own, even of the slower form, decides over the shipped logs.
  store_record(user, compiler, direct, 2e-3);
  EXPECT_EQ(Executable::build(m.b.g, compiler).run_plan().calls.at(0).workload, direct.name())
      << "the user's records choose the form";
}

// With no record of either form, zero-shot builds the Winograd form of a conv with at least 196
// output tiles (56x56 at F(4x4, 3x3)) and the direct form of smaller ones; without zero-shot, or
// for a GPU, the direct form. Either computes what the direct form computes.
TEST(WinogradForm, ZeroShotBuildsWinogradOnLargeMapsOnly) {
  const auto zero_shot = [](const te::Workload&,
                            const target::Target&) -> std::optional<driver::ZeroShotChoice> {
    return std::nullopt;  // no pick: the default schedule, so only the form is under test
  };
  for (int64_t hw : {8, 13, 14, 56}) {
    SCOPED_TRACE(hw);
    Builder b = two_convs(hw);
    const std::vector<Task> tasks = extract_tasks(b.g, partition(b.g));
    EXPECT_EQ(tasks.at(0).winograd_tile, 4);
    const bool large = hw * hw >= 196;  // F(4x4, 3x3) from 14x14 maps up
    EXPECT_EQ(zero_shot_form(tasks.at(0)).name(),
              (large ? tasks.at(0).alternatives.at(0) : tasks.at(0).workload).name());
    driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
    compiler.set_zero_shot(zero_shot);
    const std::vector<Task> built = built_tasks(b.g, partition(b.g), compiler);
    EXPECT_EQ(built.at(0).workload.name(), zero_shot_form(tasks.at(0)).name());
    EXPECT_EQ(built.at(1).workload.name(), tasks.at(1).workload.name()) << "no Winograd form";
    driver::Compiler plain(nullptr, target::Target::parse("llvm"));
    EXPECT_EQ(built_tasks(b.g, partition(b.g), plain).at(0).workload.name(),
              tasks.at(0).workload.name());
    driver::Compiler gpu(nullptr, target::Target::parse("cuda -arch=sm_90"));
    gpu.set_zero_shot(zero_shot);
    EXPECT_EQ(built_tasks(b.g, partition(b.g), gpu).at(0).workload.name(),
              tasks.at(0).workload.name());
    if (large) {
      compiler.set_zero_shot(zero_shot);
      const std::vector<float> x = testing::wave(4 * hw * hw);
      expect_close(Executable::build(b.g, compiler).run({x}).at(0),
                   Executable::build(b.g, plain).run({x}).at(0));
    }
  }
}

}  // namespace
}  // namespace tensortune::graph

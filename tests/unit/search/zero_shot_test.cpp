// SPDX-License-Identifier: Apache-2.0
// Zero-shot schedules: every operator gets one that computes its reference, never the naive loop
// nest; picks are deterministic; the shipped model loads, ranks, and is refused when its feature
// version is not this build's.
#include "tensortune/search/zero_shot.h"

#include "search_test_util.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/cost_model/features.h"
#include "tensortune/cost_model/xgboost_model.h"
#include "tensortune/database/database.h"
#include "tensortune/ir/eval.h"
#include "tensortune/ir/ops.h"
#include "tensortune/lower/lower.h"
#include "tensortune/measure/measurer.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/search/evolutionary_search.h"
#include "tensortune/search/tuner.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace tensortune::search {
namespace {

target::Target host() {
  return codegen::resolve_host(target::Target::parse("native"));
}

/// The model the repository ships for this build's feature version (ctest sets TT_SOURCE_DIR).
std::string shipped_model_path() {
  const char* root = std::getenv("TT_SOURCE_DIR");
  return std::string(root != nullptr ? root : ".") + "/tuning_logs/zero_shot/cpu.v" +
         std::to_string(cost_model::kFeatureVersion) + ".json";
}

std::shared_ptr<const cost_model::CostModel> shipped_model() {
  return cost_model::XGBoostModel::load(shipped_model_path());
}

bool has_annotation(const std::vector<schedule::Step>& steps, ir::ForKind kind) {
  for (const schedule::Step& s : steps) {
    if (const auto* a = std::get_if<schedule::Annotate>(&s); a != nullptr && a->kind == kind)
      return true;
  }
  return false;
}

/// Whether `steps` applied to `w` compute its reference. ir::eval runs the lowered function as
/// generated code would, prepacking included; the compiled path is checked end to end by
/// ZeroShotCli and CliCompile.
bool computes_reference(const te::Workload& w,
                        const std::vector<schedule::Step>& steps,
                        uint64_t seed) {
  const ir::LoweredFunc f = lower::lower(schedule::apply_steps(w, steps), host(), "kernel");
  testing::HostBuffers buffers(w);
  buffers.fill_inputs(seed);
  poison_outputs(buffers);
  ir::eval(f, buffers.args());
  return testing::outputs_match_reference(w, buffers);
}

TEST(ZeroShot, EveryOperatorGetsAScheduleThatComputesTheReference) {
  const target::Target target = host();
  const ZeroShot zero_shot(nullptr, ZeroShotOptions{64});
  for (const auto& [op, specs] : tiny_specs()) {
    for (const std::string& spec : specs) {
      SCOPED_TRACE(spec);
      const te::Workload w = te::make_workload(spec);
      const std::optional<ZeroShotPick> pick = zero_shot.pick(w, target);
      ASSERT_TRUE(pick.has_value());
      EXPECT_TRUE(computes_reference(w, pick->steps, 7)) << pick->config;
    }
  }
}

TEST(FusedDefault, EveryOperatorsFusedDefaultComputesTheReference) {
  for (const auto& [op, specs] : tiny_specs()) {
    for (const std::string& spec : specs) {
      SCOPED_TRACE(spec);
      const te::Workload w = te::make_workload(spec);
      const std::vector<schedule::Step> steps = fused_default_steps(w);
      EXPECT_TRUE(computes_reference(w, steps, 11)) << describe(steps);
    }
  }
}

TEST(FusedDefault, ADepthwiseConvIsComputedPerChannelWithItsPaddingAndEpilogue) {
  auto steps_of = [](const std::string& conv) {
    return describe(fused_default_steps(
        te::make_workload("conv2d:N=1,R=3,S=3,pad=1,bias=1,epilogue=relu," + conv)));
  };
  // Each channel's padded plane, conv and bias + relu in one parallel loop: nothing is
  // materialized in full, nothing recomputed.
  EXPECT_EQ(steps_of("C=32,H=56,W=56,stride=2,K=32,groups=32"),
            "compute_inline bias_add; compute_at conv relu.j; compute_at conv_pad conv.f; "
            "parallel relu.j; ");
  // A dense conv reads every input channel for each output channel: its padding, computed per
  // output channel, would be computed K times over. It stays whole, in a parallel loop of its own.
  EXPECT_EQ(steps_of("C=32,H=56,W=56,stride=1,K=32"),
            "compute_inline bias_add; compute_at conv relu.j; parallel conv_pad.j; "
            "parallel relu.j; ");
  // Too little work for threads: the same fusion, serial.
  EXPECT_EQ(steps_of("C=8,H=8,W=8,stride=1,K=8,groups=8"),
            "compute_inline bias_add; compute_at conv relu.j; compute_at conv_pad conv.f; ");
}

TEST(FusedDefault, APoolMakesItsPaddedChannelPerChannel) {
  // The pool is the output and the reduction at once: each channel pads its own plane, in
  // cache, instead of a padded copy of the whole input first.
  const te::Workload pool = te::make_workload("pool2d:N=1,C=64,H=112,W=112,R=3,S=3,stride=2,pad=1");
  EXPECT_EQ(describe(fused_default_steps(pool)), "compute_at pool_pad pool.c; parallel pool.c; ");
  // A dense conv as the output keeps its padding whole: every output channel reads all of it.
  EXPECT_EQ(describe(fused_default_steps(
                te::make_workload("conv2d:N=1,C=32,H=56,W=56,K=32,R=3,S=3,pad=1"))),
            "parallel conv_pad.j; parallel conv.f; ");
}

TEST(ZeroShot, APickIsDeterministicVectorizedAndParallel) {
  const te::Workload w = te::make_workload("matmul:M=256,N=256,K=256");
  const ZeroShot zero_shot(nullptr);
  const std::optional<ZeroShotPick> a = zero_shot.pick(w, host());
  const std::optional<ZeroShotPick> b = zero_shot.pick(w, host());
  ASSERT_TRUE(a && b);
  EXPECT_EQ(describe(a->steps), describe(b->steps));
  EXPECT_EQ(a->config, b->config);
  EXPECT_TRUE(has_annotation(a->steps, ir::ForKind::Vectorized)) << describe(a->steps);
  EXPECT_TRUE(has_annotation(a->steps, ir::ForKind::Parallel)) << describe(a->steps);
  EXPECT_EQ(zero_shot.ranking(), "sketch prior");
}

TEST(ZeroShot, TheShippedModelLoadsAndRanks) {
  std::shared_ptr<const cost_model::CostModel> model = shipped_model();
  ASSERT_TRUE(model->trained());
  const te::Workload w = te::make_workload("conv2d:N=1,C=32,H=28,W=28,K=64,R=3,S=3,pad=1");
  const target::Target target = host();
  const SearchSpace space = SearchSpace::generate(w, target);
  support::Rng rng(3);
  std::vector<std::vector<float>> rows;
  for (int i = 0; i < 32 && rows.size() < 16; ++i) {
    if (auto f = feature_vector(w, space.steps(space.sample_plausible(rng)), target))
      rows.push_back(std::move(*f));
  }
  ASSERT_GE(rows.size(), 8U);
  const std::vector<float> scores = model->predict(rows);
  EXPECT_GT(std::set<float>(scores.begin(), scores.end()).size(), 1U)
      << "the shipped model scores every configuration alike";
  const ZeroShot zero_shot(model);
  EXPECT_EQ(zero_shot.ranking(), "cost model");
  const std::optional<ZeroShotPick> pick = zero_shot.pick(w, target);
  ASSERT_TRUE(pick.has_value());
  EXPECT_NO_THROW(schedule::apply_steps(w, pick->steps));
}

TEST(ZeroShot, AnnealedPicksUnderTheShippedModelComputeTheReferenceAndRepeat) {
  // The annealing walks past the drawn configurations: what it keeps must still be a valid
  // point of the space, and the same one every time (the build is reproducible).
  const std::shared_ptr<const cost_model::CostModel> model = shipped_model();
  ZeroShotOptions options;
  options.samples = 32;
  const ZeroShot annealed(model, options);
  options.refine_chains = 0;
  const ZeroShot drawn(model, options);
  const target::Target target = host();
  // Every operator's tiny shapes, whose spaces the draws nearly cover, and two whose they do not.
  std::vector<std::string> all = {"matmul:M=64,N=64,K=64",
                                  "conv2d:N=1,C=16,H=14,W=14,K=32,R=3,S=3,pad=1"};
  for (const auto& [op, specs] : tiny_specs())
    all.insert(all.end(), specs.begin(), specs.end());
  int moved = 0;
  for (const std::string& spec : all) {
    SCOPED_TRACE(spec);
    const te::Workload w = te::make_workload(spec);
    const std::optional<ZeroShotPick> a = annealed.pick(w, target);
    const std::optional<ZeroShotPick> b = annealed.pick(w, target);
    const std::optional<ZeroShotPick> d = drawn.pick(w, target);
    ASSERT_TRUE(a && b && d);
    EXPECT_EQ(a->config, b->config);
    EXPECT_TRUE(computes_reference(w, a->steps, 11)) << a->config;
    moved += a->config != d->config ? 1 : 0;
  }
  EXPECT_GT(moved, 0) << "the annealing never changed a pick";
}

TEST(ZeroShot, AWorkloadOfManyProductsPerOutputNeverGetsTheLoopNestAsWritten) {
  // The shipped model has seen no Winograd convolution and ranked its loop nests first: 7.6 ms
  // against 0.53 ms for the best tiled draw. Only workloads of little arithmetic per output
  // element (element-wise, pools, depthwise) let the default compete.
  const ZeroShot zero_shot(shipped_model());
  const te::Workload w = te::make_workload(
      "conv2d_winograd:N=1,C=64,H=56,W=56,K=64,pad=1,tile=4,bias=1,epilogue=relu");
  const std::optional<ZeroShotPick> pick = zero_shot.pick(w, host());
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->config.find("default loop nests"), std::string::npos) << pick->config;
  EXPECT_TRUE(has_annotation(pick->steps, ir::ForKind::Vectorized)) << describe(pick->steps);
}

TEST(ZeroShot, TheClimbEndsWhereTheModelScoresAtLeastAsHighAndRepeats) {
  // The greedy ascent adds points to the draws and the annealing's; the pick is then the best of
  // all under the model, never worse than without it, and the same every time.
  const std::shared_ptr<const cost_model::CostModel> model = shipped_model();
  ZeroShotOptions options;
  options.samples = 64;
  const ZeroShot climbing(model, options);
  options.climb_starts = 0;
  const ZeroShot without(model, options);
  const target::Target target = host();
  const auto predicted = [&](const te::Workload& w, const ZeroShotPick& pick) {
    const std::optional<std::vector<float>> f = feature_vector(w, pick.steps, target);
    return f ? model->predict({*f}).at(0) : -std::numeric_limits<float>::infinity();
  };
  int higher = 0;
  for (const char* spec : {"conv2d:N=1,C=16,H=14,W=14,K=32,R=3,S=3,pad=1",
                           "conv2d_winograd:N=1,C=16,H=12,W=12,K=16,pad=1,tile=4",
                           "matmul:M=64,N=96,K=80", "dense:M=1,N=1000,K=128"}) {
    SCOPED_TRACE(spec);
    const te::Workload w = te::make_workload(spec);
    const std::optional<ZeroShotPick> a = climbing.pick(w, target);
    const std::optional<ZeroShotPick> b = climbing.pick(w, target);
    const std::optional<ZeroShotPick> c = without.pick(w, target);
    ASSERT_TRUE(a && b && c);
    EXPECT_EQ(a->config, b->config);
    // Equal priors compare by prediction alone (the prior scales a batch's spread otherwise).
    if (a->prior == c->prior) {
      EXPECT_GE(predicted(w, *a), predicted(w, *c)) << a->config << " against " << c->config;
      higher += predicted(w, *a) > predicted(w, *c) ? 1 : 0;
    }
    EXPECT_TRUE(computes_reference(w, a->steps, 3)) << a->config;
  }
  EXPECT_GT(higher, 0) << "the climb never found a better-scored point";
}

/// ONNX's GlobalAveragePool as the importer writes it: [1, C, 7, 7] -> [1, C, 1, 1].
te::Workload global_average_pool(int64_t channels) {
  const te::Tensor x = te::placeholder({1, channels, 7, 7}, ir::DataType::float32(), "x");
  const ir::IterVar r = te::reduce_axis(7, "r");
  const ir::IterVar s = te::reduce_axis(7, "s");
  const te::Tensor gap = te::compute(
      {1, channels, 1, 1},
      [&](const std::vector<ir::Var>& v) {
        return te::sum(
            x(v[0], v[1], r.var, s.var) * ir::make_const(ir::DataType::float32(), 1.0 / 49),
            {r, s});
      },
      "gap");
  return te::Workload("gap", {x}, {gap});
}

TEST(ZeroShot, ASmallReductionOverMoreThanAnL1CacheStaysParallel) {
  // Below 2^18 operations a kernel runs serial, except a reduction whose input outgrows an L1
  // cache: inside a model that input was just written by every thread.
  const ZeroShot zero_shot(shipped_model());
  const te::Workload large = global_average_pool(512);  // 100 KB read, 50k operations
  const std::optional<ZeroShotPick> pick = zero_shot.pick(large, host());
  ASSERT_TRUE(pick.has_value());
  EXPECT_TRUE(has_annotation(pick->steps, ir::ForKind::Parallel)) << pick->config;
  EXPECT_EQ(pick->config.find("serial"), std::string::npos) << pick->config;
  EXPECT_TRUE(computes_reference(large, pick->steps, 5)) << pick->config;
  for (const te::Workload& w : {global_average_pool(64),
                                te::make_workload("relu:M=100,N=1000")}) {  // 12.5 KB; no reduction
    SCOPED_TRACE(w.name());
    const std::optional<ZeroShotPick> small = zero_shot.pick(w, host());
    ASSERT_TRUE(small.has_value());
    EXPECT_FALSE(has_annotation(small->steps, ir::ForKind::Parallel)) << small->config;
    EXPECT_TRUE(computes_reference(w, small->steps, 5)) << small->config;
  }
}

TEST(ZeroShot, ATuningJobGuidedByTheShippedModelMeasuresItsPickFirst) {
  // No tuned record may end slower than the zero-shot pick it replaces at compile time.
  const std::string path = ::testing::TempDir() + "zero_shot_start.db";
  std::remove(path.c_str());
  database::Database db = database::Database::open(path);
  const target::Target target = codegen::resolve_host(target::Target::parse("llvm -cores=1"));
  const database::TargetKey key{target.to_string(), "test-machine"};
  measure::MeasurerOptions mo;
  mo.run.threads = 1;
  mo.run.timing.repeat = 3;
  mo.run.timing.min_repeat_ms = 2;
  measure::Measurer measurer(target, mo);
  const std::vector<TuneTask> tasks{TuneTask::from_spec("matmul:M=64,N=96,K=48")};
  TuneOptions options;
  options.tuner = TunerKind::Xgb;
  options.trials = 4;
  options.batch_size = 4;
  options.xgb.threads = 1;
  options.initial_model = shipped_model();
  tune(tasks, target, key, db, measurer, options);
  const std::optional<ZeroShotPick> pick =
      ZeroShot(shipped_model()).pick(tasks[0].workload, target);
  ASSERT_TRUE(pick.has_value());
  ASSERT_FALSE(pick->configuration.is_null()) << pick->config;
  bool measured = false;
  for (const database::Record& r : db.history(tasks[0].workload.key(), key))
    measured = measured || support::Json::parse(r.knobs).dump() == pick->configuration.dump();
  EXPECT_TRUE(measured) << pick->config;
  std::remove(path.c_str());
}

/// A squeeze-and-excitation scale as RegNet's importer fuses it: a 1x1 conv of the pooled
/// [1, 26] vector, a sigmoid, and the product with the [1, C, 28, 28] map.
te::Workload excitation(int64_t channels) {
  const ir::DataType f32 = ir::DataType::float32();
  const te::Tensor x = te::placeholder({1, channels, 28, 28}, f32, "x");
  const te::Tensor v = te::placeholder({1, 26}, f32, "v");
  const te::Tensor w = te::placeholder({channels, 26}, f32, "w");
  const ir::IterVar k = te::reduce_axis(26, "k");
  const te::Tensor s = te::compute(
      {1, channels},
      [&](const std::vector<ir::Var>& i) { return te::sum(v(i[0], k.var) * w(i[1], k.var), {k}); },
      "s");
  const te::Tensor out = te::compute(
      {1, channels, 28, 28},
      [&](const std::vector<ir::Var>& i) {
        const ir::Expr one = ir::make_const(f32, 1.0);
        return x(i[0], i[1], i[2], i[3]) *
               (one / (one + ir::exp(ir::make_const(f32, 0.0) - s(i[0], i[1]))));
      },
      "scale");
  return te::Workload("excitation", {x, v, w}, {out});
}

TEST(ZeroShot, AReductionInsideAnElementWiseKernelOverMoreThanAnL1CacheStaysParallel) {
  // 104x28x28: 82k outputs, under 2^18 operations, reading 326 KB just written by every thread.
  const ZeroShot zero_shot(shipped_model());
  const te::Workload se = excitation(104);
  const std::optional<ZeroShotPick> pick = zero_shot.pick(se, host());
  ASSERT_TRUE(pick.has_value());
  EXPECT_TRUE(has_annotation(pick->steps, ir::ForKind::Parallel)) << pick->config;
  EXPECT_TRUE(computes_reference(se, pick->steps, 5)) << pick->config;
  // Data movement of as many bytes has no reduction: it stays serial.
  const te::Workload move = te::make_workload("transpose:M=256,N=320");
  const std::optional<ZeroShotPick> serial = zero_shot.pick(move, host());
  ASSERT_TRUE(serial.has_value());
  EXPECT_FALSE(has_annotation(serial->steps, ir::ForKind::Parallel)) << serial->config;
  EXPECT_TRUE(computes_reference(move, serial->steps, 5)) << serial->config;
}

TEST(ZeroShot, AModelOfAnotherFeatureVersionIsRefused) {
  std::ifstream in(shipped_model_path());
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  const std::string attr =
      "\"tt_feature_version\":\"" + std::to_string(cost_model::kFeatureVersion) + "\"";
  const size_t at = json.find(attr);
  ASSERT_NE(at, std::string::npos);
  json.replace(at, attr.size(), "\"tt_feature_version\":\"1\"");
  const std::string path = ::testing::TempDir() + "zero_shot_v1_model.json";
  std::ofstream(path) << json;
  try {
    cost_model::XGBoostModel::load(path);
    ADD_FAILURE() << "a model of feature version 1 was loaded";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("feature version"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(ShippedLogs, OpenReadOnlyAtThisSchemaVersionAndEveryRecordReplays) {
  const char* root = std::getenv("TT_SOURCE_DIR");
  const std::string path =
      std::string(root != nullptr ? root : ".") + "/tuning_logs/shipped/cpu.db";
  // In the rollback-journal mode (format bytes 18 and 19 are 1, WAL's are 2): a fresh clone's or
  // a read-only install's reader needs no -wal or -shm file. `db shipped-update` leaves it so.
  {
    std::ifstream header(path, std::ios::binary);
    char bytes[20] = {};
    header.read(bytes, sizeof bytes);
    EXPECT_EQ(bytes[18], 1) << path << " is in WAL mode: run `tensortune db vacuum` on it";
    EXPECT_EQ(bytes[19], 1);
  }
  // Read-only, as compile opens it: a schema migration without regenerating the file fails here.
  const database::Database db = database::Database::open(path, true);
  const std::vector<database::WorkloadInfo> workloads = db.workloads();
  ASSERT_FALSE(workloads.empty());
  int64_t checked = 0;
  for (const database::WorkloadInfo& info : workloads) {
    std::optional<te::Workload> w;
    try {
      w = te::make_workload(info.spec);
    } catch (const UserError&) {
      continue;  // a model's kernel: no spec to rebuild it from here
    }
    ASSERT_EQ(w->key(), info.key) << info.spec << ": the shipped workload is of another version";
    for (const database::TargetKey& t : db.targets()) {
      for (const database::Record& r : db.best(info.key, t, 8)) {
        EXPECT_NO_THROW(schedule::apply_steps(*w, schedule::parse_schedule(r.schedule).steps))
            << "shipped record #" << r.id << " of " << info.name;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace tensortune::search

// SPDX-License-Identifier: Apache-2.0
// The compile-time lookup on real temporary databases: the best record is applied, other target
// identities are never used, other shapes are adapted, stale records fall back with a warning, and
// untuned workloads are summarised once.
#include "tensortune/driver/compile.h"

#include "common/reference.h"
#include "common/text.h"
#include "driver_test_util.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/ir/eval.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/lower/lower.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tensortune::driver {
namespace {
using test::count;
using namespace testing;  // NOLINT(google-build-using-namespace): driver::testing
using schedule::Annotate;
using schedule::Reorder;
using schedule::Split;
using schedule::Step;
using tensortune::testing::HostBuffers;
using tensortune::testing::outputs_match_reference;

target::Target cpu() {
  return target::Target::parse("llvm -cores=2");
}

/// Split i and j by `factor`, reorder to i.o, j.o, k, i.i, j.i, vectorize j.i.
std::vector<Step> tiled(int64_t factor) {
  return {Split{"C", "i", factor, false}, Split{"C", "j", factor, false},
          Reorder{"C", {"i.o", "j.o", "k", "i.i", "j.i"}},
          Annotate{"C", "j.i", ir::ForKind::Vectorized}};
}

TEST(Compiler, AppliesTheFastestRecordOfTheWorkload) {
  TempDir dir("best");
  database::Database db = database::Database::open(dir.file("t.db"));
  te::Workload w = put_workload(db, "matmul:M=32,N=32,K=16");
  Compiler compiler(&db, cpu());
  add(db, record(w, compiler.identity(), tiled(4), 2e-3));
  int64_t best = add(db, record(w, compiler.identity(), tiled(8), 1e-3));

  Lookup found = compiler.lookup(w, "matmul:M=32,N=32,K=16");
  EXPECT_EQ(found.source, Source::Record);
  EXPECT_EQ(found.record_id, best);
  EXPECT_EQ(found.describe(), "record #" + std::to_string(best));
  EXPECT_DOUBLE_EQ(found.record_seconds, 1e-3);
  ASSERT_EQ(found.schedule.steps.size(), 4U);
  EXPECT_TRUE(found.schedule.steps[0] == Step(Split{"C", "i", 8, false}));

  Compiled lowered = compiler.lower_kernel(w);
  ir::LoweredFunc expected =
      lower::lower(w, schedule::Schedule{w.key(), tiled(8)}, compiler.target());
  EXPECT_EQ(ir::to_string(lowered.func), ir::to_string(expected));
  EXPECT_TRUE(compiler.untuned().empty());
  EXPECT_EQ(compiler.summary_warning(), "");
  EXPECT_TRUE(compiler.warnings().empty());
}

TEST(Compiler, NeverUsesRecordsOfAnotherTargetOrDevice) {
  TempDir dir("identity");
  database::Database db = database::Database::open(dir.file("t.db"));
  te::Workload w = put_workload(db, "matmul:M=32,N=32,K=16");
  Compiler compiler(&db, cpu());
  database::TargetKey other_device{compiler.identity().target, "cpu=other; cores=64"};
  database::TargetKey other_target{"llvm -mcpu=skylake-avx512", compiler.identity().fingerprint};
  add(db, record(w, other_device, tiled(8), 1e-6));
  add(db, record(w, other_target, tiled(4), 1e-6));
  te::Workload shape = put_workload(db, "matmul:M=64,N=64,K=64");
  add(db, record(shape, other_device, tiled(16), 1e-6));

  Lookup found = compiler.lookup(w, "matmul:M=32,N=32,K=16");
  EXPECT_EQ(found.source, Source::Default);
  EXPECT_TRUE(found.schedule.steps.empty());
  EXPECT_EQ(found.schedule.workload_key, w.key());
  EXPECT_EQ(found.record_id, 0);
}

TEST(Compiler, AdaptsTheNearestShapeOfTheSameOperator) {
  TempDir dir("adapt");
  database::Database db = database::Database::open(dir.file("t.db"));
  Compiler compiler(&db, cpu());
  te::Workload near = put_workload(db, "matmul:M=64,N=64,K=64");
  int64_t near_id = add(db, record(near, compiler.identity(), tiled(32), 1e-3));
  te::Workload far = put_workload(db, "matmul:M=1024,N=1024,K=1024");
  add(db, record(far, compiler.identity(), tiled(8), 1e-3));
  te::Workload relu = put_workload(db, "relu:M=16,N=48");
  add(db, record(relu, compiler.identity(), {Split{"relu", "i", 2, false}}, 1e-9));

  te::Workload w = te::make_workload("matmul:M=16,N=48,K=20");
  Compiled compiled = compiler.lower_kernel(w, "matmul:M=16,N=48,K=20");
  const Lookup& found = compiled.lookup;
  ASSERT_EQ(found.source, Source::Adapted) << found.describe();
  EXPECT_EQ(found.record_id, near_id);
  EXPECT_EQ(found.from_workload, "matmul_64x64x64_float32");
  EXPECT_EQ(found.schedule.workload_key, w.key());
  // i has 16 iterations: its factor is clamped; 32 does not divide j's 48 but is legal (a tail).
  ASSERT_EQ(found.schedule.steps.size(), 4U);
  EXPECT_TRUE(found.schedule.steps[0] == Step(Split{"C", "i", 16, false}));
  EXPECT_TRUE(found.schedule.steps[1] == Step(Split{"C", "j", 32, false}));

  HostBuffers buffers(w);
  buffers.fill_inputs(11);
  ir::eval(compiled.func, buffers.args());
  EXPECT_TRUE(outputs_match_reference(w, buffers));
  EXPECT_EQ(compiler.untuned(), std::vector<std::string>{w.name()});
}

TEST(Compiler, FindsTheOperatorOfAnUnnamedSpecThroughTheDatabase) {
  TempDir dir("adapt_by_key");
  database::Database db = database::Database::open(dir.file("t.db"));
  Compiler compiler(&db, cpu());
  te::Workload near = put_workload(db, "matmul:M=64,N=64,K=64");
  add(db, record(near, compiler.identity(), tiled(32), 1e-3));
  te::Workload w = put_workload(db, "matmul:M=16,N=48,K=20");  // known, but never tuned
  EXPECT_EQ(compiler.lookup(w).source, Source::Adapted);
}

TEST(Compiler, StaleRecordsFallBackWithOneWarningEach) {
  TempDir dir("stale");
  database::Database db = database::Database::open(dir.file("t.db"));
  te::Workload w = put_workload(db, "matmul:M=32,N=32,K=16");
  Compiler compiler(&db, cpu());
  int64_t garbage = add(db, raw_record(w, compiler.identity(), "{\"steps\": [garbage", 1e-4));
  int64_t missing_axis =
      add(db, record(w, compiler.identity(), {Split{"C", "zz", 4, false}}, 2e-4));
  int64_t good = add(db, record(w, compiler.identity(), tiled(4), 3e-4));

  for (int call = 0; call < 2; ++call) {
    Lookup found = compiler.lookup(w);
    EXPECT_EQ(found.source, Source::Record);
    EXPECT_EQ(found.record_id, good);
  }
  ASSERT_EQ(compiler.warnings().size(), 2U);
  EXPECT_NE(compiler.warnings()[0].find("record #" + std::to_string(garbage)), std::string::npos);
  EXPECT_NE(compiler.warnings()[1].find("record #" + std::to_string(missing_axis)),
            std::string::npos);
  EXPECT_NE(compiler.warnings()[1].find("zz"), std::string::npos) << compiler.warnings()[1];
}

TEST(Compiler, RecordsOfAnotherFormatOrUnknownStepFallBackToTheDefault) {
  TempDir dir("format");
  database::Database db = database::Database::open(dir.file("t.db"));
  te::Workload w = put_workload(db, "matmul:M=32,N=32,K=16");
  Compiler compiler(&db, cpu());
  std::string key = w.key();
  add(db, raw_record(w, compiler.identity(),
                     R"({"version": 99, "workload_key": ")" + key + R"(", "steps": []})", 1e-4));
  add(db, raw_record(w, compiler.identity(),
                     R"({"version": 1, "workload_key": ")" + key +
                         R"(", "steps": [{"kind": "teleport", "stage": "C"}]})",
                     2e-4));
  add(db, raw_record(w, compiler.identity(),
                     R"({"version": 1, "workload_key": "other_key", "steps": []})", 3e-4));

  Compiled compiled = compiler.lower_kernel(w, "matmul:M=32,N=32,K=16");
  EXPECT_EQ(compiled.lookup.source, Source::Default);
  EXPECT_EQ(compiler.warnings().size(), 3U);
  EXPECT_NE(compiler.warnings()[0].find("version"), std::string::npos) << compiler.warnings()[0];
  EXPECT_NE(compiler.warnings()[1].find("teleport"), std::string::npos) << compiler.warnings()[1];
  EXPECT_EQ(compiler.untuned(), std::vector<std::string>{w.name()});
}

TEST(Compiler, RecordThatReplaysButDoesNotLowerFallsBack) {
  TempDir dir("lower_fail");
  database::Database db = database::Database::open(dir.file("t.db"));
  te::Workload w = put_workload(db, "matmul:M=32,N=32,K=16");
  Compiler compiler(&db, cpu());
  // A GPU binding replays on any loop state but cannot be lowered for a CPU target.
  add(db, record(w, compiler.identity(), {Annotate{"C", "i", ir::ForKind::BlockX}}, 1e-4));
  EXPECT_EQ(compiler.lookup(w).source, Source::Record);
  EXPECT_EQ(compiler.lower_kernel(w).lookup.source, Source::Default);
  EXPECT_EQ(compiler.warnings().size(), 1U);
}

TEST(Compiler, ZeroShotComesAfterRecordsAndBeforeTheDefault) {
  TempDir dir("zero_shot");
  database::Database db = database::Database::open(dir.file("t.db"));
  te::Workload tuned = put_workload(db, "matmul:M=32,N=32,K=16");
  te::Workload fresh = te::make_workload("relu:M=64,N=64");
  Compiler compiler(&db, cpu());
  add(db, record(tuned, compiler.identity(), tiled(8), 1e-4));
  int asked = 0;
  compiler.set_zero_shot([&](const te::Workload& w, const target::Target& t) {
    ++asked;
    EXPECT_EQ(t.to_string(), compiler.target().to_string());
    return std::optional<ZeroShotChoice>(
        ZeroShotChoice{{Split{w.outputs()[0].name(), "j", 16, false}}, "cost model", "x"});
  });
  EXPECT_EQ(compiler.lookup(tuned).source, Source::Record);
  EXPECT_EQ(asked, 0);  // a workload with a record never costs a zero-shot pick
  Compiled compiled = compiler.lower_kernel(fresh, "relu:M=64,N=64");
  EXPECT_EQ(compiled.lookup.source, Source::ZeroShot);
  EXPECT_EQ(compiled.lookup.describe(), "zero-shot (cost model)");
  EXPECT_EQ(source_name(Source::ZeroShot), std::string("zero-shot"));
  HostBuffers buffers(fresh);
  buffers.fill_inputs(1);
  ir::eval(compiled.func, buffers.args());
  EXPECT_TRUE(outputs_match_reference(fresh, buffers));
  compiler.lookup(fresh);
  EXPECT_EQ(asked, 1);  // picked once per workload
  EXPECT_EQ(compiler.untuned(), std::vector<std::string>{fresh.name()});
}

TEST(Compiler, AZeroShotChoiceThatDoesNotApplyFallsBackToTheDefault) {
  Compiler compiler(nullptr, cpu());
  compiler.set_zero_shot([](const te::Workload&, const target::Target&) {
    return std::optional<ZeroShotChoice>(
        ZeroShotChoice{{Split{"nope", "i", 2, false}}, "sketch prior", "bad"});
  });
  const te::Workload w = te::make_workload("relu:M=8,N=8");
  EXPECT_EQ(compiler.lower_kernel(w).lookup.source, Source::Default);
  ASSERT_EQ(compiler.warnings().size(), 1U);
  EXPECT_NE(compiler.warnings()[0].find("zero-shot"), std::string::npos) << compiler.warnings()[0];
}

TEST(Compiler, ShippedRecordsApplyOnlyWhereTheHostHasEveryFeature) {
  TempDir dir("shipped");
  database::Database user = database::Database::open(dir.file("user.db"));
  database::Database shipped = database::Database::open(dir.file("shipped.db"));
  te::Workload w = put_workload(shipped, "matmul:M=32,N=32,K=16");
  Compiler compiler(&user, cpu());
  const database::TargetKey& here = compiler.identity();
  // Tuned on a device with a subset of this host's features (none at all): usable here.
  database::TargetKey older{here.target, "cpu=Older CPU; mcpu=generic; features=; cores=2"};
  // Tuned on a device with an instruction set this host lacks: never used.
  database::TargetKey newer{here.target,
                            "cpu=Newer CPU; mcpu=future; features=avx1024fake; cores=2"};
  add(shipped, record(w, newer, tiled(16), 1e-5));
  const int64_t usable = add(shipped, record(w, older, tiled(8), 1e-4));
  compiler.set_shipped(&shipped);
  Compiled compiled = compiler.lower_kernel(w, "matmul:M=32,N=32,K=16");
  ASSERT_EQ(compiled.lookup.source, Source::Shipped) << compiled.lookup.describe();
  EXPECT_EQ(compiled.lookup.record_id, usable);
  EXPECT_EQ(compiled.lookup.describe(),
            "shipped record #" + std::to_string(usable) + " (Older CPU, generic)");
  HostBuffers buffers(w);
  buffers.fill_inputs(2);
  ir::eval(compiled.func, buffers.args());
  EXPECT_TRUE(outputs_match_reference(w, buffers));
  // The user's own record comes first.
  put_workload(user, "matmul:M=32,N=32,K=16");
  add(user, record(w, here, tiled(4), 1e-3));
  Compiler again(&user, cpu());
  again.set_shipped(&shipped);
  EXPECT_EQ(again.lookup(w).source, Source::Record);
  EXPECT_EQ(fingerprint_features("cpu=x; features=avx2,fma; cores=2"),
            (std::set<std::string>{"avx2", "fma"}));
}

TEST(Compiler, ShippedRecordsAndBestSecondsSkipDevicesWithMoreFeatures) {
  TempDir dir("shipped_best");
  database::Database shipped = database::Database::open(dir.file("shipped.db"));
  te::Workload w = put_workload(shipped, "matmul:M=32,N=32,K=16");
  Compiler compiler(nullptr, cpu());
  EXPECT_EQ(compiler.shipped_best_seconds(w), 0.0);  // no shipped logs
  EXPECT_TRUE(compiler.shipped_records(w, 4).empty());
  const database::TargetKey& here = compiler.identity();
  database::TargetKey older{here.target, "cpu=Older CPU; mcpu=generic; features=; cores=2"};
  database::TargetKey newer{here.target,
                            "cpu=Newer CPU; mcpu=future; features=avx1024fake; cores=2"};
  add(shipped, record(w, newer, tiled(16), 1e-6));  // fastest, but not for this host
  const int64_t slow = add(shipped, record(w, older, tiled(4), 3e-4));
  const int64_t fast = add(shipped, record(w, older, tiled(8), 2e-4));
  compiler.set_shipped(&shipped);
  EXPECT_DOUBLE_EQ(compiler.shipped_best_seconds(w), 2e-4);
  const std::vector<database::Record> all = compiler.shipped_records(w, 4);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, fast);
  EXPECT_EQ(all[1].id, slow);
  ASSERT_EQ(compiler.shipped_records(w, 1).size(), 1u);
  EXPECT_TRUE(compiler.shipped_records(w, 0).empty());
  // This very device's records come first, even slower ones: they were timed where they run.
  const int64_t own = add(shipped, record(w, here, tiled(2), 5e-4));
  Compiler again(nullptr, cpu());
  again.set_shipped(&shipped);
  EXPECT_DOUBLE_EQ(again.shipped_best_seconds(w), 5e-4);
  ASSERT_EQ(again.shipped_records(w, 4).size(), 1u);
  EXPECT_EQ(again.shipped_records(w, 4)[0].id, own);
  EXPECT_EQ(again.lookup(w).record_id, own);
  // Another workload has none.
  EXPECT_EQ(compiler.shipped_best_seconds(te::make_workload("matmul:M=16,N=16,K=16")), 0.0);
}

TEST(Compiler, ARecordForAnOlderCpuNeedsOnlyThatCpusFeaturesOfItsDevice) {
  // Tuned on a device with AVX-512 (and one this host lacks), for code of a Haswell: such code
  // uses AVX2 and FMA only, so any host with those may run it.
  const std::string device =
      "cpu=Newer CPU; mcpu=future; features=avx,avx1024fake,avx2,avx512f,"
      "fma; cores=2";
  EXPECT_EQ(record_needs({"llvm -mcpu=haswell -cores=2", device}),
            (std::set<std::string>{"avx", "avx2", "fma"}));
  // A native target's code may use whatever its device has.
  EXPECT_EQ(record_needs({"llvm -cores=2", device}), fingerprint_features(device));
  EXPECT_EQ(record_needs({"llvm -mcpu=nosuchcpu -cores=2", device}), fingerprint_features(device));

  TempDir dir("older_cpu");
  database::Database shipped = database::Database::open(dir.file("shipped.db"));
  te::Workload w = put_workload(shipped, "matmul:M=32,N=32,K=16");
  Compiler compiler(nullptr, target::Target::parse("llvm -mcpu=haswell -cores=2"));
  const std::string haswell = compiler.identity().target;
  const int64_t usable = add(shipped, record(w, {haswell, device}, tiled(8), 1e-4));
  add(shipped, record(w, {"llvm -cores=2", device}, tiled(16), 1e-6));  // never for haswell
  compiler.set_shipped(&shipped);
  Compiled compiled = compiler.lower_kernel(w, "matmul:M=32,N=32,K=16");
  ASSERT_EQ(compiled.lookup.source, Source::Shipped) << compiled.lookup.describe();
  EXPECT_EQ(compiled.lookup.record_id, usable);
  HostBuffers buffers(w);
  buffers.fill_inputs(2);
  ir::eval(compiled.func, buffers.args());
  EXPECT_TRUE(outputs_match_reference(w, buffers));
}

TEST(Compiler, ARecordForThisHostsCpuByNameServesANativeBuild) {
  // "llvm -mcpu=<this CPU>" leaves out the -mattr list that native resolves to: the same code
  // when the vector width agrees, so such a record (tuned on a newer device) serves native.
  const target::Target native = codegen::resolve_host(cpu());
  const std::string named = "llvm -mcpu=" + native.mcpu + " -cores=2";
  if (codegen::resolve_host(target::Target::parse(named)).vector_bits != native.vector_bits)
    GTEST_SKIP() << "this host hides features of its CPU model that change the vector width";
  TempDir dir("named_cpu");
  database::Database shipped = database::Database::open(dir.file("shipped.db"));
  te::Workload w = put_workload(shipped, "matmul:M=32,N=32,K=16");
  Compiler compiler(nullptr, cpu());
  const std::string device = compiler.identity().fingerprint;
  const size_t list = device.find("features=") + 9;  // a feature this host lacks, listed first
  const std::string newer = device.substr(0, list) + "avx1024fake," + device.substr(list);
  const int64_t id = add(shipped, record(w, {named, newer}, tiled(8), 1e-4));
  compiler.set_shipped(&shipped);
  const Lookup lookup = compiler.lookup(w);
  EXPECT_EQ(lookup.source, Source::Shipped) << lookup.describe();
  EXPECT_EQ(lookup.record_id, id);
}

TEST(Compiler, SummaryListsEveryUntunedWorkloadOnce) {
  TempDir dir("summary");
  database::Database db = database::Database::open(dir.file("t.db"));
  te::Workload tuned = put_workload(db, "matmul:M=32,N=32,K=16");
  Compiler compiler(&db, cpu());
  add(db, record(tuned, compiler.identity(), tiled(8), 1e-3));
  te::Workload relu = te::make_workload("relu:M=8,N=8");
  te::Workload add_op = te::make_workload("add:M=8,N=8");
  for (int round = 0; round < 3; ++round) {
    compiler.lookup(relu, "relu:M=8,N=8");
    compiler.lookup(tuned);
    compiler.lookup(add_op);
  }
  EXPECT_EQ(compiler.untuned(), (std::vector<std::string>{relu.name(), add_op.name()}));
  std::string summary = compiler.summary_warning();
  EXPECT_EQ(summary.rfind("2 workloads have no tuning record for target 'llvm -cores=2'", 0), 0U)
      << summary;
  EXPECT_EQ(count(summary, relu.name()), 1U) << summary;
  EXPECT_EQ(count(summary, add_op.name()), 1U) << summary;
  EXPECT_EQ(count(summary, tuned.name()), 0U) << summary;
  EXPECT_EQ(count(summary, "default schedule"), 2U) << summary;
}

TEST(Compiler, WithoutADatabaseEveryWorkloadGetsTheDefault) {
  Compiler compiler(nullptr, cpu());
  te::Workload w = te::make_workload("matmul:M=8,N=12,K=4");
  Compiled compiled = compiler.compile(w, "matmul:M=8,N=12,K=4");
  EXPECT_EQ(compiled.lookup.source, Source::Default);
  EXPECT_EQ(compiled.func.name, "matmul_8x12x4_float32");
  ASSERT_TRUE(compiled.artifact.defined());
  HostBuffers buffers(w);
  buffers.fill_inputs(5);
  std::vector<void*> args = buffers.args();
  EXPECT_EQ(compiled.artifact(args.data()), 0);
  EXPECT_TRUE(outputs_match_reference(w, buffers));
  EXPECT_NE(compiler.summary_warning().find("(no tuning database)"), std::string::npos);
  EXPECT_EQ(compiler.lower_kernel(w, "", "my_kernel").func.name, "my_kernel");
}

// On a GPU target an untuned workload still uses the device: every stage's elements spread over
// blocks of up to 256 threads (the empty schedule would be one GPU thread), computing what the
// reference computes.
TEST(Compiler, TheGpuDefaultBindsEveryStageToBlocksAndThreads) {
  Compiler compiler(nullptr, target::Target::parse("cuda -arch=sm_80"));
  for (const char* spec :
       {"matmul:M=8,N=300,K=4", "softmax:M=3,N=50", "conv2d:N=1,C=3,H=7,W=7,K=4,R=3,S=3,pad=1",
        "dense:M=5,N=6,K=7,bias=1,epilogue=gelu", "pool2d:N=1,C=2,H=6,W=6,R=2,S=2,stride=2"}) {
    SCOPED_TRACE(spec);
    const te::Workload w = te::make_workload(spec);
    Compiled compiled = compiler.lower_kernel(w, spec);
    EXPECT_EQ(compiled.lookup.source, Source::Default);
    const std::string text = ir::to_string(compiled.func);
    EXPECT_NE(text.find("threadIdx.x"), std::string::npos) << text;
    // More than 256 elements in a stage: several blocks.
    EXPECT_EQ(text.find("blockIdx.x") != std::string::npos,
              std::string(spec).find("N=300") != std::string::npos)
        << text;
    HostBuffers buffers(w);
    buffers.fill_inputs(3);
    std::vector<void*> args = buffers.args();
    ir::eval(compiled.func, args);
    EXPECT_TRUE(outputs_match_reference(w, buffers));
  }
  // 8 x 300 elements: blocks of 256 threads.
  const std::vector<schedule::Step> steps =
      schedule::default_gpu_steps(te::make_workload("matmul:M=8,N=300,K=4"));
  ASSERT_EQ(steps.size(), 4U);
  EXPECT_EQ(std::get<schedule::Split>(steps[1]).factor, 256);
}

// A shipped GPU record serves builds for its own target on any machine (GPU code runs on every
// device of its architecture), names the device it was tuned on, and serves no other target.
TEST(Compiler, ShippedGpuRecordsServeTheirTargetOnly) {
  TempDir dir("shipped_gpu");
  database::Database shipped = database::Database::open(dir.file("shipped.db"));
  const char* spec = "matmul:M=8,N=300,K=4";
  te::Workload w = put_workload(shipped, spec);
  const std::vector<Step> steps = schedule::default_gpu_steps(w);
  const database::TargetKey h200{"cuda -arch=sm_90", "gpu=NVIDIA H200; cc=9.0; sms=132"};
  const int64_t id = add(shipped, record(w, h200, steps, 2e-5));
  add(shipped, record(w, {"cuda -arch=sm_80", "gpu=NVIDIA A100; cc=8.0; sms=108"}, steps, 1e-6));
  Compiler compiler(nullptr, target::Target::parse("cuda -arch=sm_90"));
  compiler.set_shipped(&shipped);
  Compiled compiled = compiler.lower_kernel(w, spec);
  ASSERT_EQ(compiled.lookup.source, Source::Shipped) << compiled.lookup.describe();
  EXPECT_EQ(compiled.lookup.record_id, id);
  EXPECT_EQ(compiled.lookup.describe(),
            "shipped record #" + std::to_string(id) + " (NVIDIA H200, cc 9.0)");
  HostBuffers buffers(w);
  buffers.fill_inputs(4);
  ir::eval(compiled.func, buffers.args());
  EXPECT_TRUE(outputs_match_reference(w, buffers));
  // Neither another architecture nor a CPU takes them.
  Compiler other(nullptr, target::Target::parse("cuda -arch=sm_86"));
  other.set_shipped(&shipped);
  EXPECT_EQ(other.lookup(w).source, Source::Default);
  Compiler host(nullptr, cpu());
  host.set_shipped(&shipped);
  EXPECT_NE(host.lookup(w).source, Source::Shipped);
}

TEST(TargetKey, IsTheWrittenTargetAndTheDeviceFingerprint) {
  database::TargetKey key = target_key(target::Target::parse("native"));
  EXPECT_EQ(key.target, "llvm");
  EXPECT_EQ(key.fingerprint.rfind("cpu=", 0), 0U) << key.fingerprint;
  EXPECT_EQ(target_key(target::Target::parse("llvm -cores=2")).target, "llvm -cores=2");
  EXPECT_EQ(target_key(target::Target::parse("native")), key);
}

}  // namespace
}  // namespace tensortune::driver

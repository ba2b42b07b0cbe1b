// SPDX-License-Identifier: Apache-2.0
// The measurer's GPU path: without a device it refuses cleanly; NVRTC builds GPU candidates into
// the blob the GPU worker runs, in the build workers under the build timeout; the reference is
// the default schedule built for the host; with a device (label gpu, skipped otherwise) GPU-space
// schedules are verified and timed, and wrong, crashing and unlaunchable kernels each cost one
// record.
#include "candidates.h"
#include "measure/gpu_image.h"
#include "measure/host_reference.h"
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/ir/eval.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/measure/gpu_kernel.h"
#include "tensortune/measure/kernel_buffers.h"
#include "tensortune/measure/measurer.h"
#include "tensortune/runtime/cuda_driver.h"
#include "tensortune/search/search_space.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/support/rng.h"

#include <gtest/gtest.h>

namespace tensortune::measure {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

constexpr int kGpuN = 64;

target::Target gpu_target() {
  return target::Target::parse("cuda -arch=sm_90");
}

ir::LoweredFunc lower_gpu(const te::Workload& w, std::vector<schedule::Step> steps) {
  return lower::lower(w, schedule::Schedule{w.key(), std::move(steps)}, gpu_target());
}

/// Up to `count` schedules of the GPU search space (fixed seed) that lower.
std::vector<ir::LoweredFunc> sampled_gpu_kernels(const te::Workload& w, size_t count) {
  search::SearchSpace space = search::SearchSpace::generate(w, gpu_target());
  support::Rng rng(7);
  std::vector<ir::LoweredFunc> out;
  for (int tries = 0; tries < 50 && out.size() < count; ++tries) {
    try {
      out.push_back(lower_gpu(w, space.steps(space.sample(rng))));
    } catch (const ScheduleError&) {  // the search drops these too
    }
  }
  return out;
}

MeasurerOptions gpu_quick_options() {
  MeasurerOptions options;
  options.run.timing.repeat = 3;
  options.run.timing.min_repeat_ms = 1;
  options.run.timeout_s = 30;
  return options;
}

/// Why the GPU tests cannot run here (no device, no NVRTC), or empty when they can.
std::string gpu_missing() {
  std::string why = runtime::cuda_unavailable_reason();
  if (!why.empty()) {
    return "no CUDA device: " + why;
  }
  return codegen::nvrtc_available(&why) ? std::string() : "no NVRTC: " + why;
}

TEST(GpuMeasurer, WithoutADeviceConstructionIsAClearUserError) {
  std::string why = runtime::cuda_unavailable_reason();
  if (why.empty()) {
    GTEST_SKIP() << "a CUDA device is present";
  }
  try {
    Measurer measurer(gpu_target(), gpu_quick_options());
    FAIL() << "a Measurer for a GPU target was built without a device";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "measure: no CUDA device: " + why);
  }
  RunnerOptions run;
  run.gpu = true;
  EXPECT_THROW(Runner runner(run), UserError);
}

TEST(GpuBuilder, BuildsTheCubinAndLaunchShapesOfEveryKernel) {
  std::string why;
  if (!codegen::nvrtc_available(&why)) {
    GTEST_SKIP() << "no NVRTC: " << why;
  }
  te::Workload w = matmul_workload(kGpuN);
  std::vector<ir::LoweredFunc> candidates = sampled_gpu_kernels(w, 2);
  candidates.insert(candidates.begin(), lower_gpu(w, {}));
  BuilderOptions options;
  options.workers = 2;  // NVRTC runs in the build workers
  Builder builder(gpu_target(), options);
  EXPECT_EQ(builder.num_workers(), 2);
  std::vector<BuildResult> built = builder.build(candidates);
  ASSERT_EQ(built.size(), candidates.size());
  for (size_t i = 0; i < built.size(); ++i) {
    ASSERT_TRUE(built[i].ok()) << built[i].message;
    codegen::CudaModule module = codegen::generate_cuda(candidates[i], gpu_target());
    detail::GpuImage image = detail::GpuImage::decode(built[i].object);
    EXPECT_FALSE(image.cubin.empty());
    EXPECT_EQ(image.num_params, 3U);
    EXPECT_EQ(image.buffers.size(), module.buffers.size());
    EXPECT_EQ(image.buffers[2], built[i].signature.params[2]);
    ASSERT_EQ(image.kernels.size(), module.kernels.size());
    for (size_t k = 0; k < image.kernels.size(); ++k) {
      EXPECT_EQ(image.kernels[k].name, module.kernels[k].name);
      EXPECT_EQ(image.kernels[k].grid, module.kernels[k].grid);
      EXPECT_EQ(image.kernels[k].block, module.kernels[k].block);
      EXPECT_EQ(image.kernels[k].shared_bytes, module.kernels[k].shared_bytes);
      EXPECT_EQ(image.kernels[k].params, module.kernels[k].params);
    }
    // The blob survives a round trip unchanged.
    EXPECT_EQ(image.encode(), built[i].object);
  }
}

TEST(GpuBuilder, ACandidateCudaCannotExpressIsACompileErrorWithTheReason) {
  std::string why;
  if (!codegen::nvrtc_available(&why)) {
    GTEST_SKIP() << "no NVRTC: " << why;
  }
  te::Workload w = matmul_workload(8);
  ir::LoweredFunc base = lower_gpu(w, {});
  ir::Var i("i");
  ir::LoweredFunc bad = with_body(  // a parallel loop: on a GPU it must be bound instead
      base, ir::For::make(i, 0, 8, ir::ForKind::Parallel, store1(output_of(base), 1.0f, i)));
  Builder builder(gpu_target());
  std::vector<BuildResult> built = builder.build({bad, base});
  EXPECT_EQ(built[0].status, MeasureStatus::CompileError);
  EXPECT_NE(built[0].message.find("code generation failed: cuda codegen: loop 'i'"),
            std::string::npos)
      << built[0].message;
  EXPECT_NE(built[0].message.find("is parallel"), std::string::npos) << built[0].message;
  EXPECT_TRUE(built[0].object.empty());
  EXPECT_TRUE(built[1].ok()) << built[1].message;
}

TEST(GpuBuilder, NvrtcBuildsPastTheBuildTimeoutAreCompileTimeouts) {
  std::string why;
  if (!codegen::nvrtc_available(&why)) {
    GTEST_SKIP() << "no NVRTC: " << why;
  }
  te::Workload w = matmul_workload(kGpuN);
  std::vector<ir::LoweredFunc> candidates = {lower_gpu(w, {}), lower_gpu(w, {})};
  BuilderOptions options;
  options.workers = 1;
  options.timeout_s = 1e-4;  // NVRTC takes milliseconds at the very least
  Builder builder(gpu_target(), options);
  std::vector<BuildResult> built = builder.build(candidates);
  ASSERT_EQ(built.size(), 2U);
  for (const BuildResult& b : built) {  // the killed worker was restarted for the second one
    EXPECT_EQ(b.status, MeasureStatus::CompileTimeout) << b.message;
    EXPECT_NE(b.message.find("its worker was killed"), std::string::npos) << b.message;
    EXPECT_TRUE(b.object.empty());
  }
  options.timeout_s = 60;
  Builder patient(gpu_target(), options);
  BuildResult ok = patient.build({candidates[0]}).at(0);
  EXPECT_TRUE(ok.ok()) << ok.message;
  EXPECT_FALSE(detail::GpuImage::decode(ok.object).cubin.empty());
}

/// Counts parallel loops.
struct ParallelLoops : ir::IRVisitor {
  using ir::IRVisitor::visit;
  int n = 0;
  void visit(const ir::For* op) override {
    n += op->for_kind == ir::ForKind::Parallel ? 1 : 0;
    ir::IRVisitor::visit(op);
  }
};

TEST(GpuBuilder, TheDefaultScheduleBuildsForTheHostAndMatchesTheInterpreter) {
  std::string why;
  if (!codegen::nvrtc_available(&why)) {
    GTEST_SKIP() << "no NVRTC: " << why;
  }
  // The reference of a GPU workload: its default schedule, lowered for the GPU target, its outer
  // loops made parallel, built for and run on the CPU (the pad stage is a nest of its own).
  BuilderOptions options;
  options.workers = 1;
  Builder builder(gpu_target(), options);
  Runner runner;
  for (const std::string& spec :
       {std::string("matmul:M=64,N=48,K=40"),
        std::string("conv2d:N=1,C=3,H=10,W=9,K=8,R=3,S=3,stride=2,pad=1")}) {
    te::Workload w = te::make_workload(spec);
    ir::LoweredFunc def = lower_gpu(w, {});
    ir::LoweredFunc parallel = detail::parallel_outer_loops(def);
    ParallelLoops count;
    count.visit(parallel.body);
    EXPECT_EQ(count.n, spec[0] == 'm' ? 1 : 2) << spec;  // conv: the pad nest and the conv nest
    BuildResult built = builder.build_for_host(parallel);
    ASSERT_TRUE(built.ok()) << spec << ": " << built.message;
    EXPECT_FALSE(detail::is_gpu_image(built.object));
    std::vector<std::string> outputs = runner.outputs(built, 5);
    KernelBuffers expected(KernelSignature::of(def));
    expected.fill_inputs(5);
    expected.poison_outputs();
    std::vector<void*> args(expected.pointers(),
                            expected.pointers() + expected.signature().params.size());
    ir::eval(def, args);
    EXPECT_EQ(
        compare_outputs(expected, outputs, Tolerance::for_reduction(w.max_reduction_length())),
        std::nullopt)
        << spec;
  }
}

TEST(HostReference, OnlyOuterLoopsWhoseStoresAllUseTheirVariableBecomeParallel) {
  ir::LoweredFunc base = lower_gpu(matmul_workload(8), {});
  const ir::Buffer& out = output_of(base);
  ir::Var i("i");
  ir::Var j("j");
  ir::Var k("k");
  // for i { out[i] = 0; for j: out[i] = out[i] + 1 }: each i writes its own element.
  ir::Stmt rows =
      ir::For::make(i, 0, 8, ir::ForKind::Serial,
                    ir::Seq::make({store1(out, ir::Expr(0.0f), i),
                                   ir::For::make(j, 0, 8, ir::ForKind::Serial,
                                                 store1(out, load1(out, i) + ir::Expr(1.0f), i))}));
  // for k: out[0] = out[0] + 1: a reduction outermost, every iteration writes the same element.
  ir::Stmt total =
      ir::For::make(k, 0, 8, ir::ForKind::Serial, store1(out, load1(out, 0) + ir::Expr(1.0f), 0));
  ir::LoweredFunc f = detail::parallel_outer_loops(with_body(base, ir::Seq::make({rows, total})));
  const auto* seq = f.body.as<ir::Seq>();
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->stmts.size(), 2U);
  const auto* outer = seq->stmts[0].as<ir::For>();
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->for_kind, ir::ForKind::Parallel);
  const auto* inner = outer->body.as<ir::Seq>()->stmts[1].as<ir::For>();
  EXPECT_EQ(inner->for_kind, ir::ForKind::Serial);  // inner loops stay as they are
  EXPECT_EQ(seq->stmts[1].as<ir::For>()->for_kind, ir::ForKind::Serial);
}

TEST(GpuImage, RejectsABlobThatIsNotAGpuImage) {
  EXPECT_THROW(detail::GpuImage::decode("\x7f"
                                        "ELF and more bytes"),
               UserError);
  detail::GpuImage image;
  image.buffers.push_back(BufferSpec{"A", ir::DataType::float32(), {4}});
  image.num_params = 1;
  image.kernels.push_back(detail::GpuLaunch{"k0", {{2, 1, 1}}, {{32, 1, 1}}, 0, {0}, 0});
  image.cubin = "cubin bytes";
  std::string blob = image.encode();
  EXPECT_TRUE(detail::is_gpu_image(blob));
  EXPECT_FALSE(
      detail::is_gpu_image("\x7f"
                           "ELF and more bytes"));
  detail::GpuImage back = detail::GpuImage::decode(blob);
  EXPECT_EQ(back.cubin, "cubin bytes");
  EXPECT_EQ(back.kernels[0].grid[0], 2);
  EXPECT_EQ(back.kernels[0].block[0], 32);
  EXPECT_THROW(detail::GpuImage::decode(blob.substr(0, 20)), UserError);
}

TEST(TimeBatches, GrowsNumberUntilARepeatLastsLongEnough) {
  TimingOptions options;
  options.repeat = 4;
  options.min_repeat_ms = 20;
  std::vector<int64_t> batches;
  auto batch = [&](int64_t number) {  // a device that takes exactly 1 ms per call
    batches.push_back(number);
    return 1e-3 * static_cast<double>(number);
  };
  TimingResult r = time_batches(batch, 1e-2, options);
  EXPECT_EQ(batches.front(), 2);  // the 10 ms warm-up suggests 2 calls
  EXPECT_GE(r.number, 20);
  ASSERT_EQ(r.repeats.size(), 4U);
  EXPECT_DOUBLE_EQ(r.median_seconds, 1e-3);
}

TEST(GpuMeasurer, DefaultAndGpuSpaceSchedulesAreVerifiedAndTimed) {
  if (std::string why = gpu_missing(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  te::Workload w = matmul_workload(kGpuN);
  Measurer measurer(gpu_target(), gpu_quick_options());
  auto reference = measurer.make_reference(lower_gpu(w, {}), Tolerance::for_reduction(kGpuN));
  std::vector<ir::LoweredFunc> candidates = sampled_gpu_kernels(w, 3);
  ASSERT_EQ(candidates.size(), 3U);
  candidates.insert(candidates.begin(), lower_gpu(w, {}));
  std::vector<MeasureResult> results = measurer.measure(*reference, candidates);
  for (const MeasureResult& r : results) {
    ASSERT_TRUE(r.ok()) << status_name(r.status) << ": " << r.message;
    EXPECT_EQ(r.repeats.size(), 3U);
    EXPECT_GT(r.median_seconds, 0);
    EXPECT_DOUBLE_EQ(r.median_seconds, median(r.repeats));
  }
  EXPECT_EQ(measurer.runner().worker_starts(), 1);
}

// 128x128 tiles a k step of 32 apart, double-buffered with cp.async: 64 KB of dynamic shared
// memory a block (the module loader raises the kernel's limit), 65 KB with A blocked into rows
// padded to 132 floats. Both copy layouts of A verify, and thread tiles interleaved in groups of
// 4 stored as float4s.
TEST(GpuMeasurer, DoubleBufferedTilesInDynamicSharedMemoryVerify) {
  if (std::string why = gpu_missing(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  te::Workload w = matmul_workload(256);
  search::SearchSpace space = search::SearchSpace::generate(w, gpu_target());
  std::vector<ir::LoweredFunc> candidates;
  for (const auto& [layout, interleave] :
       std::vector<std::pair<int, int>>{{0, 0}, {1, 0}, {1, 1}}) {
    const search::Config config = space.from_json(support::Json::parse(
        R"({"sketch": "C:gpu-tile+shared", "knobs": {"C.i.split": [16,8], "C.j.split": [16,8],
            "C.local.k.split": [32], "A.shared.layout": [)" +
        std::to_string(layout) + R"(], "C.local.interleave": [)" + std::to_string(interleave) +
        R"(], "C.local.unroll": [512], "C.shared.vector": [4]}})"));
    candidates.push_back(lower_gpu(w, space.steps(config)));
    EXPECT_EQ(codegen::generate_cuda(candidates.back(), gpu_target()).kernels[0].shared_bytes,
              layout == 0 ? 65536 : 66560);
  }
  Measurer measurer(gpu_target(), gpu_quick_options());
  auto reference = measurer.make_reference(lower_gpu(w, {}), Tolerance::for_reduction(256));
  for (const MeasureResult& r : measurer.measure(*reference, candidates)) {
    EXPECT_TRUE(r.ok()) << status_name(r.status) << ": " << r.message;
  }
}

TEST(GpuMeasurer, WrongCrashingAndUnlaunchableKernelsCostOneRecordEach) {
  if (std::string why = gpu_missing(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  te::Workload w = matmul_workload(kGpuN);
  ir::LoweredFunc base = lower_gpu(w, {});
  Measurer measurer(gpu_target(), gpu_quick_options());
  auto reference = measurer.make_reference(base, Tolerance::for_reduction(kGpuN));
  ir::Var tx("tx");
  ir::LoweredFunc too_many_threads =
      with_body(base, ir::For::make(tx, 0, 4096, ir::ForKind::ThreadX,
                                    store1(output_of(base), ir::Expr(1.0f), tx)));
  std::vector<MeasureResult> r = measurer.measure(
      *reference,
      {wrong_values_kernel(base), base, segfault_kernel(base), base, too_many_threads, base});
  ASSERT_EQ(r.size(), 6U);
  EXPECT_EQ(r[0].status, MeasureStatus::WrongResult) << r[0].message;
  EXPECT_EQ(r[2].status, MeasureStatus::RuntimeError) << r[2].message;
  EXPECT_NE(r[2].message.find("CUDA error"), std::string::npos) << r[2].message;
  // Too many threads per block: refused by code generation or by the launch check, never a crash.
  EXPECT_TRUE(r[4].status == MeasureStatus::CompileError ||
              r[4].status == MeasureStatus::RuntimeError)
      << status_name(r[4].status) << ": " << r[4].message;
  for (size_t i : {size_t{1}, size_t{3}, size_t{5}}) {
    EXPECT_TRUE(r[i].ok()) << i << ": " << status_name(r[i].status) << ": " << r[i].message;
  }
  EXPECT_EQ(measurer.runner().worker_starts(), 2);  // the illegal address cost one restart
}

/// One or two small workloads of every operator of the library.
const std::vector<std::string>& operator_specs() {
  static const std::vector<std::string> kSpecs = {
      "matmul:M=64,N=48,K=40",
      "matmul:M=32,N=64,K=16,transpose_b=1",
      "batch_matmul:B=2,M=16,N=24,K=8",
      "dense:M=8,N=64,K=32,bias=1,epilogue=gelu",
      "conv2d:N=1,C=8,H=14,W=14,K=16,R=3,S=3,pad=1",
      "conv2d:N=1,C=3,H=16,W=16,K=8,R=7,S=7,stride=2,pad=3",
      "conv2d:N=1,C=4,H=9,W=8,K=8,R=3,S=3,pad=1,stride=2,layout=NHWC",
      "conv2d_winograd:N=1,C=4,H=8,W=8,K=8,pad=1,tile=2",
      "depthwise_conv2d:N=1,C=8,H=12,W=12,R=3,S=3,pad=1",
      "pool2d:kind=avg,N=1,C=4,H=10,W=12,R=3,S=3,pad=1",
      "pool2d:N=1,C=4,H=8,W=8,R=2,S=2,stride=2",
      "softmax:M=8,N=100",
      "layer_norm:M=8,N=100",
      "add:M=16,N=33,broadcast=1",
      "mul:M=16,N=20",
      "relu:M=20,N=30",
      "gelu:M=8,N=65",
      "transpose:M=24,N=20",
      "pad:N=1,C=4,H=6,W=8,pad=1",
  };
  return kSpecs;
}

TEST(GpuMeasurer, EveryOperatorsHostReferenceMatchesTheInterpreterAndItsKernelsBuild) {
  std::string why;
  if (!codegen::nvrtc_available(&why)) {
    GTEST_SKIP() << "no NVRTC: " << why;
  }
  // What a GPU measurer does without the device: the reference of every operator (its default
  // schedule, outer loops parallel, on the host) against the interpreter, and sampled GPU
  // configurations through NVRTC in the build workers.
  BuilderOptions options;
  options.workers = 2;
  Builder builder(gpu_target(), options);
  Runner runner;
  for (const std::string& spec : operator_specs()) {
    SCOPED_TRACE(spec);
    te::Workload w = te::make_workload(spec);
    ir::LoweredFunc def = lower_gpu(w, {});
    BuildResult host = builder.build_for_host(detail::parallel_outer_loops(def));
    ASSERT_TRUE(host.ok()) << host.message;
    std::vector<std::string> outputs = runner.outputs(host, 9);
    KernelBuffers expected(KernelSignature::of(def));
    expected.fill_inputs(9);
    expected.poison_outputs();
    std::vector<void*> args(expected.pointers(),
                            expected.pointers() + expected.signature().params.size());
    ir::eval(def, args);
    EXPECT_EQ(
        compare_outputs(expected, outputs, Tolerance::for_reduction(w.max_reduction_length())),
        std::nullopt);
    std::vector<ir::LoweredFunc> candidates = sampled_gpu_kernels(w, 2);
    EXPECT_EQ(candidates.size(), 2U);
    for (const BuildResult& b : builder.build(candidates)) {
      EXPECT_TRUE(b.ok()) << b.message;
    }
  }
}

/// Issue 7's "correctness of every operator on the GPU": per operator of the library, sampled
/// configurations of the GPU space and the default schedule, checked on the device against the
/// host-built reference.
TEST(GpuMeasurer, EveryOperatorIsCorrectOnTheDevice) {
  if (std::string why = gpu_missing(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  Measurer measurer(gpu_target(), gpu_quick_options());
  for (const std::string& spec : operator_specs()) {
    SCOPED_TRACE(spec);
    te::Workload w = te::make_workload(spec);
    ir::LoweredFunc def = lower_gpu(w, {});
    auto reference =
        measurer.make_reference(def, Tolerance::for_reduction(w.max_reduction_length()));
    std::vector<ir::LoweredFunc> candidates = sampled_gpu_kernels(w, 4);
    candidates.push_back(def);
    std::vector<MeasureResult> results = measurer.measure(*reference, candidates);
    int ok = 0;
    for (const MeasureResult& r : results) {
      // Ok, or a launch the device refuses (registers are known only once built); never a wrong
      // result, a build failure or a crash.
      const bool refused =
          r.status == MeasureStatus::RuntimeError && r.message.rfind("invalid launch: ", 0) == 0;
      EXPECT_TRUE(r.ok() || refused) << status_name(r.status) << ": " << r.message;
      ok += r.ok() ? 1 : 0;
    }
    EXPECT_TRUE(results.back().ok()) << "the default schedule: " << results.back().message;
    EXPECT_GE(ok, 2) << "no sampled configuration ran";
  }
}

TEST(GpuKernel, RunsABuildAndReleasesItsModuleAndMemory) {
  if (std::string why = gpu_missing(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  te::Workload w = matmul_workload(kGpuN);
  std::vector<ir::LoweredFunc> candidates = sampled_gpu_kernels(w, 2);
  ASSERT_EQ(candidates.size(), 2U);
  ir::LoweredFunc def = lower_gpu(w, {});
  Builder builder(gpu_target());
  std::vector<BuildResult> built = builder.build(candidates);
  BuildResult host = builder.build_for_host(def);
  ASSERT_TRUE(host.ok()) << host.message;
  std::vector<std::string> expected = Runner().outputs(host, 3);
  runtime::CudaDevice device;
  for (const BuildResult& b : built) {
    ASSERT_TRUE(b.ok()) << b.message;
    KernelBuffers buffers(b.signature);
    buffers.fill_inputs(3);
    buffers.poison_outputs();
    {
      GpuKernel kernel(device, b.object);
      EXPECT_EQ(device.loaded_modules(), 1);
      kernel.upload(buffers);
      auto call = [&] {
        kernel.call();
      };
      double warmup = device.time_events(1, call);
      kernel.download_outputs(buffers);
      EXPECT_EQ(compare_outputs(buffers, expected, Tolerance::for_reduction(kGpuN)), std::nullopt);
      TimingOptions timing;
      timing.repeat = 3;
      timing.min_repeat_ms = 1;
      TimingResult t = time_on_device(device, call, warmup, timing);
      EXPECT_EQ(t.repeats.size(), 3U);
      EXPECT_GT(t.median_seconds, 0);
    }
    EXPECT_EQ(device.loaded_modules(), 0);  // one module per candidate, gone with it
  }
}

}  // namespace
}  // namespace tensortune::measure

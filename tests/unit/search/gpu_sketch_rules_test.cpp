// SPDX-License-Identifier: Apache-2.0
// The GPU sketch rules on every operator of the library: sampled configurations bind blocks and
// threads, lower for "cuda -arch=sm_80" within the device limits, compute what the naive
// reference computes (ir::eval runs bound loops one iteration after another), and their CUDA C
// compiles to PTX through NVRTC.
#include "search/task_state.h"
#include "search_test_util.h"
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/cost_model/features.h"
#include "tensortune/ir/eval.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/search/evolutionary_search.h"
#include "tensortune/search/search_space.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/support/rng.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace tensortune::search {
namespace {

/// Lowers sampled configurations of `spec` until `wanted` lowered (or `attempts` were tried),
/// checking every lowered one against the reference. Returns how many lowered.
int check_gpu_space(const std::string& spec, int wanted, int attempts, uint64_t seed) {
  const te::Workload w = te::make_workload(spec);
  const SearchSpace space = SearchSpace::generate(w, gpu());
  support::Rng rng(seed);
  std::set<std::string> seen;
  int lowered = 0;
  std::string first_refusal;
  for (int n = 0; n < attempts && lowered < wanted; ++n) {
    const Config config = space.sample(rng);
    if (!seen.insert(space.key(config)).second) {
      continue;
    }
    SCOPED_TRACE(space.describe(config));
    ir::LoweredFunc f;
    try {
      lower::LowerOptions options;
      options.verify_each_pass = true;
      f = lower::lower(schedule::apply_steps(w, space.steps(config)), gpu(), "f", options);
    } catch (const ScheduleError& e) {
      first_refusal =
          first_refusal.empty() ? space.describe(config) + ": " + e.what() : first_refusal;
      continue;
    }
    ++lowered;
    testing::HostBuffers buffers(w);
    buffers.fill_inputs(5);
    poison_outputs(buffers);
    ir::eval(f, buffers.args());
    EXPECT_TRUE(testing::outputs_match_reference(w, buffers)) << ir::to_string(f);
    // The CUDA C of the lowered function, and its PTX where NVRTC loads (every CI machine with
    // CUDA installed; elsewhere generation alone is checked).
    const codegen::CudaModule module = codegen::generate_cuda(f, gpu());
    EXPECT_FALSE(module.kernels.empty());
    if (codegen::nvrtc_available()) {
      const codegen::NvrtcOutput out = codegen::compile_cuda(module.source, gpu(), false);
      for (const codegen::CudaKernel& k : module.kernels) {
        EXPECT_NE(out.ptx.find(".entry " + k.name), std::string::npos) << module.source;
      }
    }
    if (::testing::Test::HasFailure()) {
      break;
    }
  }
  const double size = space.size();
  EXPECT_GE(lowered, std::min<double>(wanted, static_cast<double>(seen.size())))
      << spec << ": space of " << size << "; first refusal: " << first_refusal;
  return lowered;
}

TEST(GpuSketchRules, TwentySampledConfigurationsOfEveryOperatorComputeTheReferenceAndCompile) {
  uint64_t seed = 3;
  for (const auto& [name, specs] : tiny_specs()) {
    for (const std::string& spec : specs) {
      SCOPED_TRACE(spec);
      EXPECT_GT(check_gpu_space(spec, 20, 400, seed++), 0);
      if (HasFailure()) {
        return;
      }
    }
  }
}

TEST(GpuSketchRules, MatmulIsTiledOverBlocksAndThreadsWithALocalAccumulator) {
  const te::Workload w = te::make_workload("matmul:M=256,N=256,K=128");
  const SearchSpace space = SearchSpace::generate(w, gpu());
  ASSERT_EQ(space.sketches().size(), 3u);
  EXPECT_EQ(space.sketches()[0].name, "C:gpu-tile+local");
  EXPECT_EQ(space.sketches()[1].name, "C:gpu-tile+shared");
  EXPECT_EQ(space.sketches()[2].name, "C:gpu-tile+shared+vthread");
  support::Rng rng(9);
  Config config = space.sample(rng);
  while (config.sketch != 0) {
    config = space.sample(rng);
  }
  const std::vector<schedule::Step> steps = space.steps(config);
  std::set<std::string> kinds;
  for (const schedule::Step& s : steps) {
    kinds.insert(schedule::step_kind(s));
  }
  for (const char* k : {"cache_write", "blockIdx.x", "threadIdx.x", "compute_at"}) {
    EXPECT_EQ(kinds.count(k), 1u) << k;
  }
  // Lowered, the kernel binds both indices and accumulates in a local buffer.
  int lowered = 0;
  for (int n = 0; n < 50 && lowered == 0; ++n) {
    try {
      config = space.sample(rng);
      if (config.sketch != 0) {
        continue;
      }
      ir::LoweredFunc f = lower::lower(schedule::apply_steps(w, space.steps(config)), gpu(), "f");
      const std::string text = ir::to_string(f);
      EXPECT_NE(text.find("blockIdx.x"), std::string::npos) << text;
      EXPECT_NE(text.find("threadIdx.x"), std::string::npos) << text;
      EXPECT_NE(text.find(" local {"), std::string::npos) << text;
      ++lowered;
    } catch (const ScheduleError&) {
    }
  }
  EXPECT_EQ(lowered, 1);
}

/// The threads per block and the accumulators per thread of a configuration of a shared-memory
/// sketch of a matmul (knobs C.i.split and C.j.split; with virtual threads the factors swap).
std::pair<int64_t, int64_t> matmul_tile(const SearchSpace& space, const Config& config) {
  const Sketch& sketch = space.sketches()[static_cast<size_t>(config.sketch)];
  const bool vthread = sketch.name.find("vthread") != std::string::npos;
  const std::vector<int64_t>& i = sketch.knobs[0].choices[static_cast<size_t>(config.choice[0])];
  const std::vector<int64_t>& j = sketch.knobs[1].choices[static_cast<size_t>(config.choice[1])];
  return vthread ? std::make_pair(i[1] * j[1], i[0] * j[0])
                 : std::make_pair(i[0] * j[0], i[1] * j[1]);
}

// Every input is copied into shared memory by the block's threads at each outer reduction step,
// and the accumulator tile of a thread is a handful of registers.
TEST(GpuSketchRules, SharedSketchesStageInputsAndKeepAccumulatorsInRegisters) {
  const te::Workload w = te::make_workload("matmul:M=256,N=256,K=128");
  const SearchSpace space = SearchSpace::generate(w, gpu());
  for (int sketch : {1, 2}) {
    SCOPED_TRACE(space.sketches()[static_cast<size_t>(sketch)].name);
    ASSERT_EQ(space.sketches()[static_cast<size_t>(sketch)].knobs[0].name, "C.i.split");
    ASSERT_EQ(space.sketches()[static_cast<size_t>(sketch)].knobs[1].name, "C.j.split");
    // A configuration with many threads and several accumulators per thread.
    support::Rng rng(21);
    int checked = 0;
    for (int n = 0; n < 20000 && checked < 3; ++n) {
      const Config config = space.sample(rng);
      const auto [threads, per_thread] = matmul_tile(space, config);
      if (config.sketch != sketch || threads < 64 || per_thread < 4) {
        continue;
      }
      ir::LoweredFunc f;
      try {
        f = lower::lower(schedule::apply_steps(w, space.steps(config)), gpu(), "f");
      } catch (const ScheduleError&) {
        continue;
      }
      ++checked;
      SCOPED_TRACE(space.describe(config));
      const codegen::CudaModule module = codegen::generate_cuda(f, gpu());
      ASSERT_EQ(module.kernels.size(), 1u) << module.source;
      for (const char* shared : {"A_shared", "B_shared"}) {
        // Static, or a slice of the dynamic array past 48 KB (deeper pipelines get there).
        const size_t at = module.source.find(std::string("float ") + shared + "[");
        if (at == std::string::npos) {
          EXPECT_NE(module.source.find(std::string("float* ") + shared +
                                       " = reinterpret_cast<float*>(tt_shared"),
                    std::string::npos)
              << module.source;
          continue;
        }
        const size_t line = module.source.rfind('\n', at);
        EXPECT_NE(module.source.substr(line, at - line).find("__shared__"), std::string::npos)
            << module.source;
      }
      EXPECT_NE(module.source.find("__syncthreads();"), std::string::npos) << module.source;
      // One thread's accumulators, no more; the launch has exactly the threads of the tile.
      EXPECT_NE(module.source.find("float C_local[" + std::to_string(per_thread) + "];"),
                std::string::npos)
          << module.source;
      const codegen::CudaKernel& k = module.kernels[0];
      EXPECT_EQ(k.block[0] * k.block[1] * k.block[2], threads) << module.source;
    }
    EXPECT_EQ(checked, 3);
  }
}

// A reuse stage's element-wise epilogue is tiled with it in the shared sketches: one kernel.
TEST(GpuSketchRules, SharedSketchesFuseTheEpilogueIntoOneKernel) {
  const te::Workload w = te::make_workload("dense:M=64,N=128,K=64,bias=1,epilogue=relu");
  const SearchSpace space = SearchSpace::generate(w, gpu());
  ASSERT_EQ(space.sketches().size(), 3u);
  EXPECT_EQ(space.sketches()[1].name, "bias_add:inline dense:gpu-tile+shared+fused");
  EXPECT_EQ(space.sketches()[2].name, "bias_add:inline dense:gpu-tile+shared+vthread+fused");
  support::Rng rng(4);
  std::set<int> fused_sketches;
  for (int n = 0; n < 2000 && fused_sketches.size() < 2; ++n) {
    const Config config = space.sample(rng);
    if (config.sketch == 0 || fused_sketches.count(config.sketch) != 0) {
      continue;
    }
    ir::LoweredFunc f;
    try {
      f = lower::lower(schedule::apply_steps(w, space.steps(config)), gpu(), "f");
    } catch (const ScheduleError&) {
      continue;
    }
    SCOPED_TRACE(space.describe(config));
    const codegen::CudaModule module = codegen::generate_cuda(f, gpu());
    EXPECT_EQ(module.kernels.size(), 1u) << module.source;
    EXPECT_EQ(module.buffers.size(), static_cast<size_t>(module.num_params)) << "no scratch";
    fused_sketches.insert(config.sketch);
  }
  EXPECT_EQ(fused_sketches.size(), 2u);
}

// The model-guided search runs on a GPU space as on a CPU one: candidates lower, their features
// (GPU launch features included) score them, and annealing climbs to what the score prefers,
// here the most threads per block in the heaviest statement.
TEST(GpuSketchRules, AnnealingClimbsOnGpuFeatures) {
  const te::Workload w = te::make_workload("matmul:M=1024,N=1024,K=1024");
  const SearchSpace space = SearchSpace::generate(w, gpu());
  CandidateEvaluator evaluator(w, space, gpu());
  const std::vector<std::string>& names = cost_model::program_feature_names();
  const size_t threads =
      static_cast<size_t>(std::find(names.begin(), names.end(), "top.gpu_threads") - names.begin());
  ASSERT_LT(threads, names.size());
  const ScoreFn score = [&](const std::vector<Config>& configs) {
    std::vector<float> out;
    for (const std::vector<float>* f : evaluator.features(configs)) {
      out.push_back(f == nullptr ? -std::numeric_limits<float>::infinity() : (*f)[threads]);
    }
    return out;
  };
  support::Rng rng(7);
  AnnealingOptions options;
  options.chains = 16;
  options.max_steps = 20;
  const std::vector<Config> best = simulated_annealing(
      space, score, [](const std::string&) { return false; }, {}, 4, rng, options);
  ASSERT_FALSE(best.empty());
  const std::vector<float>* f = evaluator.features(best.front());
  ASSERT_NE(f, nullptr);
  // log2(1 + threads) of at least 256 threads per block (the space allows up to 1024), more than
  // uniform samples of the space have on average.
  EXPECT_GE((*f)[threads], std::log2(257.0f)) << space.describe(best.front());
  double sum = 0;
  int valid = 0;
  for (int n = 0; n < 64; ++n) {
    const std::vector<float>* sample = evaluator.features(space.sample(rng));
    if (sample != nullptr) {
      sum += (*sample)[threads];
      ++valid;
    }
  }
  ASSERT_GT(valid, 0);
  EXPECT_GT((*f)[threads], sum / valid + 1.0) << "annealing did not beat uniform samples";
}

// The tuner's baseline on a GPU is what the compiler gives an untuned workload
// (schedule::default_gpu_steps), not the empty schedule, which would run on one GPU thread.
TEST(GpuSketchRules, TheTunersDefaultRecordOnAGpuIsTheGpuDefaultSchedule) {
  const TuneTask task = TuneTask::from_spec("matmul:M=64,N=64,K=32");
  const detail::TaskState gpu_state(task, gpu(), 1);
  const std::vector<schedule::Step> expected = schedule::default_gpu_steps(task.workload);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(schedule::to_json(schedule::Schedule{"k", gpu_state.default_steps}).dump(),
            schedule::to_json(schedule::Schedule{"k", expected}).dump());
  measure::MeasureResult ok;
  ok.median_seconds = 1e-5;
  ok.repeats = {1e-5};
  const database::Record r =
      detail::make_record(gpu_state, nullptr, ok, {"cuda -arch=sm_80", "gpu"}, TuneOptions{}, 0);
  EXPECT_EQ(schedule::parse_schedule(r.schedule).steps.size(), expected.size());
  const std::optional<ir::LoweredFunc> f = gpu_state.evaluator.lower_steps(expected);
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(ir::to_string(*f).find("threadIdx.x"), std::string::npos);
  // On a CPU the default schedule stays the empty one.
  const detail::TaskState cpu_state(task, target::Target::parse("llvm -mcpu=znver4"), 1);
  EXPECT_TRUE(cpu_state.default_steps.empty());
}

// A conv's outer reduction loops (rc.o, ry.o, rx.o) are one loop of steps: its shared fetches sit
// in it, and on sm_90 the double-buffered pipeline runs through all 8 x 3 x 3 steps, not only
// the 3 of the innermost loop.
TEST(GpuSketchRules, AConvsOuterReductionStepsAreOneLoopThatThePipelineSpans) {
  const te::Workload w = te::make_workload("conv2d:N=1,C=64,H=14,W=14,K=64,R=3,S=3,pad=1");
  const SearchSpace space = SearchSpace::generate(w, gpu());
  const target::Target hopper = target::Target::parse("cuda -arch=sm_90");
  support::Rng rng(7);
  int checked = 0;
  for (int n = 0; n < 2000 && checked < 2; ++n) {
    const Config sampled = space.sample(rng);
    if (sampled.sketch == 0 || space.sketches()[static_cast<size_t>(sampled.sketch)].name.find(
                                   "gpu-tile+shared") == std::string::npos) {
      continue;
    }
    support::Json json = space.to_json(sampled);
    json["knobs"]["conv.local.rc.split"] = support::Json::parse("[8]");
    json["knobs"]["conv.local.ry.split"] = support::Json::parse("[1]");
    json["knobs"]["conv.local.rx.split"] = support::Json::parse("[1]");
    const Config config = space.from_json(json);
    ir::LoweredFunc f;
    try {
      f = lower::lower(schedule::apply_steps(w, space.steps(config)), hopper, "f");
    } catch (const ScheduleError&) {
      continue;
    }
    const std::string source = codegen::generate_cuda(f, hopper).source;
    if (source.find("__launch_bounds__(1)") != std::string::npos) {
      continue;  // one thread fetches alone: nothing to overlap the copies with
    }
    ++checked;
    SCOPED_TRACE(space.describe(config));
    // One loop of 72 steps; step k fetches step k + 1 unless it is the last.
    EXPECT_NE(source.find("rc_o_ry_o_rx_o < 72; ++"), std::string::npos) << source;
    EXPECT_EQ(source.find("ry_o < 3; ++"), std::string::npos) << source;
    EXPECT_EQ(source.find("rx_o < 3; ++"), std::string::npos) << source;
    EXPECT_NE(source.find(" < 71))"), std::string::npos) << source;
    EXPECT_NE(source.find("tt_cp_async"), std::string::npos) << source;
  }
  EXPECT_EQ(checked, 2);
}

TEST(GpuSketchRules, ElementwiseStagesBindEveryElementToAThread) {
  const te::Workload w = te::make_workload("relu:M=100,N=300");
  const SearchSpace space = SearchSpace::generate(w, gpu());
  ASSERT_EQ(space.sketches().size(), 1u);
  // One knob: threads per block, 32 .. 1024.
  ASSERT_EQ(space.sketches()[0].knobs.size(), 1u);
  EXPECT_EQ(space.sketches()[0].knobs[0].choices.size(), 6u);
}

}  // namespace
}  // namespace tensortune::search

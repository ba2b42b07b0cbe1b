// SPDX-License-Identifier: Apache-2.0
// Random schedules (fixed seeds): every schedule the primitives accept either lowers to a
// function that matches the reference and never reads or writes out of bounds, or is refused
// with a ScheduleError. An InternalError or a wrong result fails the test.
#include "lower_test_util.h"
#include "tensortune/support/rng.h"

namespace tensortune::lower {
namespace {

using schedule::Step;

const ir::ForKind kKinds[] = {ir::ForKind::Vectorized, ir::ForKind::Unrolled, ir::ForKind::Parallel,
                              ir::ForKind::Serial};

/// One random step on a random compute stage of `state`.
Step random_step(const schedule::LoopState& state, support::Rng& rng) {
  std::vector<const schedule::Stage*> computes;
  for (const schedule::Stage& s : state.stages()) {
    if (!s.is_placeholder()) {
      computes.push_back(&s);
    }
  }
  const schedule::Stage& st = *computes[rng.pick(computes.size())];
  const std::vector<schedule::Axis>& leaves = st.leaf_axes;
  const std::string& axis = leaves[rng.pick(leaves.size())].name;
  switch (rng.uniform_int(0, 9)) {
    case 0:
    case 1:
      return schedule::Split{st.name, axis, rng.uniform_int(1, 9), rng.uniform_int(0, 3) == 0};
    case 2: {
      size_t k = rng.pick(leaves.size());
      if (k + 1 < leaves.size()) {
        return schedule::Fuse{st.name, {leaves[k].name, leaves[k + 1].name}};
      }
      return schedule::Fuse{st.name, {leaves[k].name}};
    }
    case 3: {
      std::vector<std::string> order;
      for (const schedule::Axis& it : leaves) {
        order.push_back(it.name);
      }
      for (size_t k = order.size(); k > 1; --k) {
        std::swap(order[k - 1], order[rng.pick(k)]);
      }
      return schedule::Reorder{st.name, order};
    }
    case 4:
      return schedule::Annotate{st.name, leaves.back().name, kKinds[rng.pick(4)]};
    case 5:
      return schedule::Annotate{st.name, axis, kKinds[rng.pick(4)]};
    case 6:
      return schedule::PragmaUnroll{st.name, axis, rng.uniform_int(1, 64)};
    case 7: {
      std::vector<std::string> consumers = state.consumers(st.name);
      if (consumers.empty()) {
        return schedule::ComputeRoot{st.name};
      }
      const schedule::Stage& target = state.stage(consumers[rng.pick(consumers.size())]);
      return schedule::ComputeAt{st.name, target.name,
                                 target.leaf_axes[rng.pick(target.leaf_axes.size())].name};
    }
    case 8:
      return rng.uniform_int(0, 1) == 0 ? Step{schedule::ComputeInline{st.name}}
                                        : Step{schedule::ComputeRoot{st.name}};
    default: {
      std::vector<std::string> producers = state.producers(st.name);
      if (producers.empty()) {
        return schedule::CacheWrite{st.name, ir::MemoryScope::Local};
      }
      return schedule::CacheRead{
          producers[rng.pick(producers.size())], ir::MemoryScope::Local, {st.name}};
    }
  }
}

/// Lowers `count` random schedules of `workload` and checks each one that lowers.
void check_random_schedules(const te::Workload& workload, uint64_t seed, int count) {
  support::Rng rng(seed);
  int lowered = 0;
  for (int n = 0; n < count; ++n) {
    schedule::LoopState state(workload);
    std::vector<Step> steps;
    int length = static_cast<int>(rng.uniform_int(1, 8));
    for (int s = 0; s < length; ++s) {
      Step step = random_step(state, rng);
      try {
        state = schedule::apply(state, step);
        steps.push_back(step);
      } catch (const ScheduleError&) {
        continue;
      }
    }
    std::string trace;
    for (const Step& s : steps) {
      trace += schedule::to_string(s) + "; ";
    }
    SCOPED_TRACE("schedule " + std::to_string(n) + ": " + trace);
    for (bool plain : {false, true}) {
      LowerOptions options;
      options.vectorize_and_unroll = !plain;
      options.verify_each_pass = true;
      ir::LoweredFunc f;
      try {
        f = lower(state, target::Target{}, "f", options);
      } catch (const ScheduleError&) {
        continue;
      } catch (const Error& e) {
        ADD_FAILURE() << "lowering failed: " << e.what();
        continue;
      }
      lowered += plain ? 0 : 1;
      ASSERT_TRUE(runs_like_reference(workload, f, seed + static_cast<uint64_t>(n)));
    }
  }
  EXPECT_GT(lowered, count / 2) << "too few random schedules lowered to test anything";
}

TEST(LowerRandom, MatmulSchedules) {
  check_random_schedules(matmul_workload(7, 9, 11), 1, 150);
}

TEST(LowerRandom, MatmulReluSchedules) {
  te::Tensor a = te::placeholder({6, 5}, ir::DataType::float32(), "A");
  te::Tensor b = te::placeholder({5, 7}, ir::DataType::float32(), "B");
  te::Workload w("matmul_relu", {a, b}, {te::relu(te::matmul(a, b))});
  check_random_schedules(w, 2, 150);
}

TEST(LowerRandom, ConvolutionSchedules) {
  check_random_schedules(te::make_workload("conv2d:N=1,C=2,H=6,W=5,K=3,R=3,S=3,stride=2,pad=1"), 3,
                         100);
}

TEST(LowerRandom, SoftmaxSchedules) {
  check_random_schedules(te::make_workload("softmax:M=3,N=10"), 4, 100);
}

}  // namespace
}  // namespace tensortune::lower

// SPDX-License-Identifier: Apache-2.0
// Schedules that cannot be lowered raise ScheduleError naming the stage and the axis.
#include "lower_test_util.h"

namespace tensortune::lower {
namespace {

using schedule::Annotate;
using schedule::ComputeAt;
using schedule::Split;

std::string lower_error(const schedule::LoopState& state, const target::Target& target) {
  try {
    lower(state, target, "f");
  } catch (const ScheduleError& e) {
    return e.what();
  }
  return "";
}

TEST(LowerErrors, BindOnACpuTargetNamesStageAxisAndTarget) {
  schedule::LoopState state =
      schedule::apply_steps(matmul_workload(8, 8, 8), {Annotate{"C", "i", ir::ForKind::BlockX}});
  std::string message = lower_error(state, target::Target::parse("llvm -mcpu=znver4"));
  EXPECT_NE(message.find("bind: axis 'i' of stage 'C' is bound to blockIdx.x"), std::string::npos)
      << message;
  EXPECT_NE(message.find("llvm"), std::string::npos) << message;
  EXPECT_NE(message.find("is a CPU"), std::string::npos) << message;
}

TEST(LowerErrors, BindOfAnExtentOneAxisOnACpuIsStillAnError) {
  schedule::LoopState state = schedule::apply_steps(
      matmul_workload(8, 8, 8), {Split{"C", "i", 8}, Annotate{"C", "i.o", ir::ForKind::ThreadX}});
  EXPECT_NE(lower_error(state, target::Target{}).find("axis 'i.o' of stage 'C'"),
            std::string::npos);
}

TEST(LowerErrors, VectorizedReductionAxis) {
  // The schedule step refuses this already; a state built another way is refused by lowering.
  schedule::LoopState state(matmul_workload(8, 8, 8));
  state.mutable_stage("C").leaf_axes[2].annotation = ir::ForKind::Vectorized;
  std::string message = lower_error(state, target::Target{});
  EXPECT_NE(message.find("vectorize: axis 'k' of stage 'C' is a reduction axis"), std::string::npos)
      << message;
}

TEST(LowerErrors, VectorizeWiderThan64Lanes) {
  schedule::LoopState state = schedule::apply_steps(
      matmul_workload(4, 256, 4), {Split{"C", "j", 128}, schedule::Reorder{"C", {"k", "j.i"}},
                                   Annotate{"C", "j.i", ir::ForKind::Vectorized}});
  std::string message = lower_error(state, target::Target{});
  EXPECT_NE(message.find("vectorize: extent 128 of axis 'j.i' exceeds 64 lanes"), std::string::npos)
      << message;
  EXPECT_NE(message.find("'C'"), std::string::npos) << message;
}

TEST(LowerErrors, ComputeAtATargetThatIsNotTheSoleConsumer) {
  te::Tensor a = te::placeholder({4, 4}, ir::DataType::float32(), "A");
  te::Tensor b = te::relu(a, "B");
  te::Tensor c = te::add(b, a, "C");
  te::Tensor d = te::multiply(b, c, "D");
  te::Workload w("diamond", {a}, {d});
  schedule::LoopState state = schedule::apply_steps(w, {ComputeAt{"B", "C", "j"}});
  std::string message = lower_error(state, target::Target{});
  EXPECT_NE(message.find("compute_at: stage 'B' is computed at axis 'j' of stage 'C'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("also read by stage 'D'"), std::string::npos) << message;
}

TEST(LowerErrors, ComputeAtInsideTheLoopWhereItsReaderIsComputed) {
  // C.local at C's i.o reads A.local, attached deeper (j.o): A.local would be computed after its
  // reader ran. The steps are applied in an order the primitive accepts, then C.local is moved.
  schedule::LoopState state =
      schedule::apply_steps(matmul_workload(8, 8, 4),
                            {schedule::CacheWrite{"C", ir::MemoryScope::Local},
                             schedule::CacheRead{"A", ir::MemoryScope::Local, {}},
                             schedule::Tile{"C", "i", "j", 4, 4}, ComputeAt{"C.local", "C", "j.o"},
                             ComputeAt{"A.local", "C", "j.o"}, ComputeAt{"C.local", "C", "i.o"}});
  std::string message = lower_error(state, target::Target{});
  EXPECT_NE(message.find("compute_at: stage 'A.local' is computed at axis 'j.o' of stage 'C'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("also read by stage 'C.local'"), std::string::npos) << message;
}

TEST(LowerErrors, TooManyThreadsPerBlockOnAGpu) {
  schedule::LoopState state = schedule::apply_steps(
      matmul_workload(16, 32, 8),
      {Annotate{"C", "i", ir::ForKind::ThreadY}, Annotate{"C", "j", ir::ForKind::ThreadX}});
  target::Target gpu = target::Target::parse("cuda -arch=sm_80");
  gpu.max_threads_per_block = 1024;
  EXPECT_EQ(lower_error(state, gpu), "");
  gpu.max_threads_per_block = 256;
  EXPECT_NE(lower_error(state, gpu).find("512 threads per block"), std::string::npos);
}

TEST(LowerErrors, ErrorsAreScheduleErrorsNotInternalErrors) {
  schedule::LoopState state =
      schedule::apply_steps(matmul_workload(8, 8, 8), {Annotate{"C", "j", ir::ForKind::ThreadX}});
  EXPECT_THROW(lower(state, target::Target{}, "f"), ScheduleError);
}

}  // namespace
}  // namespace tensortune::lower

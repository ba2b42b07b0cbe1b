// SPDX-License-Identifier: Apache-2.0
// annotate: the loop kind it sets on a leaf axis, and its errors.
#include "tensortune/schedule/schedule.h"
#include "unit/schedule/test_workloads.h"

#include <gtest/gtest.h>

namespace tensortune::schedule {
namespace {

using testing::schedule_error;

TEST(Annotate, SetsTheLoopKindOfOneAxis) {
  LoopState state = apply_steps(
      testing::matmul_relu(),
      {Split{"C", "j", 8, false}, Reorder{"C", {"i", "j.o", "k", "j.i"}},
       Annotate{"C", "i", ir::ForKind::Parallel}, Annotate{"C", "j.i", ir::ForKind::Vectorized},
       Annotate{"C", "k", ir::ForKind::Unrolled}});
  const Stage& c = state.stage("C");
  EXPECT_EQ(c.leaf_axes[c.leaf_index("i")].annotation, ir::ForKind::Parallel);
  EXPECT_EQ(c.leaf_axes[c.leaf_index("j.o")].annotation, ir::ForKind::Serial);
  EXPECT_EQ(c.leaf_axes[c.leaf_index("k")].annotation, ir::ForKind::Unrolled);
  EXPECT_EQ(c.leaf_axes[c.leaf_index("j.i")].annotation, ir::ForKind::Vectorized);
}

TEST(Annotate, SerialClearsAnAnnotation) {
  LoopState state = apply_steps(testing::matmul_relu(), {Annotate{"D", "i", ir::ForKind::Parallel},
                                                         Annotate{"D", "i", ir::ForKind::Serial}});
  EXPECT_EQ(state.stage("D").leaf_axes[0].annotation, ir::ForKind::Serial);
}

TEST(Annotate, AcceptsGpuBindingsOnDataParallelAxes) {
  LoopState state =
      apply_steps(testing::matmul_relu(),
                  {Split{"D", "i", 16, false}, Annotate{"D", "i.o", ir::ForKind::BlockX},
                   Annotate{"D", "i.i", ir::ForKind::ThreadX}});
  EXPECT_EQ(state.stage("D").leaf_axes[0].annotation, ir::ForKind::BlockX);
  EXPECT_EQ(state.stage("D").leaf_axes[1].annotation, ir::ForKind::ThreadX);
}

TEST(Annotate, RejectsVectorizingAReductionAxis) {
  std::string message = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Annotate{"C", "k", ir::ForKind::Vectorized}});
  });
  EXPECT_EQ(message, "vectorize: axis 'k' of stage 'C' is a reduction axis");
}

TEST(Annotate, RejectsParallelOrGpuBindingOfAReductionAxis) {
  std::string parallel = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Annotate{"C", "k", ir::ForKind::Parallel}});
  });
  EXPECT_EQ(parallel, "parallel: axis 'k' of stage 'C' is a reduction axis");
  std::string block = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Annotate{"C", "k", ir::ForKind::BlockX}});
  });
  EXPECT_EQ(block,
            "bind: axis 'k' of stage 'C' is a reduction axis (only threadIdx.x may run a "
            "reduction across threads)");
  std::string thread_y = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Annotate{"C", "k", ir::ForKind::ThreadY}});
  });
  EXPECT_NE(thread_y.find("only threadIdx.x"), std::string::npos) << thread_y;
}

// A cross-thread reduction: the threads of a block along x share the reduction (the CUDA
// generator combines their partial results).
TEST(Annotate, BindsAReductionAxisToThreadIdxX) {
  LoopState state = apply_steps(testing::matmul_relu(),
                                {Split{"C", "k", 4, false}, Reorder{"C", {"i", "j", "k.i", "k.o"}},
                                 Annotate{"C", "k.i", ir::ForKind::ThreadX}});
  const Stage& c = state.stage("C");
  EXPECT_EQ(c.leaf_axes[c.leaf_index("k.i")].annotation, ir::ForKind::ThreadX);
}

TEST(Annotate, UnrollsAReductionAxis) {
  LoopState state =
      apply_steps(testing::matmul_relu(), {Annotate{"C", "k", ir::ForKind::Unrolled}});
  EXPECT_EQ(state.stage("C").leaf_axes[2].annotation, ir::ForKind::Unrolled);
}

TEST(Annotate, RejectsVectorizingAnAxisThatIsNotInnermost) {
  std::string message = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Annotate{"D", "i", ir::ForKind::Vectorized}});
  });
  EXPECT_EQ(message, "vectorize: axis 'i' of stage 'D' is not the innermost axis (axes: i, j)");
}

TEST(Annotate, RejectsAnUnknownAxis) {
  std::string message = schedule_error([] {
    apply_steps(testing::matmul_relu(), {Annotate{"D", "j.i", ir::ForKind::Unrolled}});
  });
  EXPECT_EQ(message, "unroll: stage 'D' has no axis 'j.i' (axes: i, j)");
}

}  // namespace
}  // namespace tensortune::schedule

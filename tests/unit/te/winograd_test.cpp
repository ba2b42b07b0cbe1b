// SPDX-License-Identifier: Apache-2.0
// Winograd convolution equals direct convolution: F(2x2,3x3) and F(4x4,3x3) on shapes whose
// output is and is not a whole number of tiles, with and without padding, batch 1 and 2, through
// the naive reference interpreter on the same inputs.
#include "common/reference.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace tensortune::te {
namespace {

struct ConvShape {
  int64_t n, c, h, w, k, pad;
};

/// Runs both workloads on the same inputs and compares; the Winograd transforms of F(4x4) round
/// more than direct summation, hence the looser tolerance of tile 4.
void expect_equal_to_direct(const ConvShape& s, int64_t tile) {
  std::string dims = "N=" + std::to_string(s.n) + ",C=" + std::to_string(s.c) +
                     ",H=" + std::to_string(s.h) + ",W=" + std::to_string(s.w) +
                     ",K=" + std::to_string(s.k) + ",pad=" + std::to_string(s.pad);
  Workload wino = make_workload("conv2d_winograd:" + dims + ",tile=" + std::to_string(tile));
  Workload direct = make_workload("conv2d:" + dims + ",R=3,S=3");
  ASSERT_EQ(wino.outputs()[0].shape(), direct.outputs()[0].shape());
  testing::HostBuffers a(wino), b(direct);
  a.fill_inputs(11);
  b.fill_inputs(11);
  testing::reference_run(wino, a.args());
  testing::reference_run(direct, b.args());
  testing::Tolerance tol{tile == 2 ? 1e-4 : 1e-3, 1e-4 * std::sqrt(9.0 * s.c)};
  EXPECT_TRUE(testing::close(a.data(2), b.data(2), ir::DataType::float32(), a.num_elements(2), tol))
      << wino.name();
}

TEST(Winograd, EqualsDirectConvolution) {
  for (int64_t tile : {2, 4}) {
    expect_equal_to_direct({1, 3, 8, 8, 4, 1}, tile);  // whole tiles
    expect_equal_to_direct({1, 5, 7, 9, 3, 1}, tile);  // partial tiles in both dimensions
    expect_equal_to_direct({2, 4, 6, 5, 2, 0}, tile);  // no padding, batch 2
    expect_equal_to_direct({1, 2, 3, 3, 2, 2}, tile);  // padding wider than the kernel's reach
  }
}

TEST(Winograd, DeclaresItsWeightsConstantAndNamesItsStages) {
  Workload w = make_workload("conv2d_winograd:N=1,C=8,H=14,W=14,K=16,pad=1");
  EXPECT_EQ(w.name(), "conv2d_winograd_nchw_1x8x14x14_16x3x3_p1_t4_float32");
  EXPECT_TRUE(w.is_constant("weight"));
  EXPECT_FALSE(w.is_constant("data"));
  for (const char* stage :
       {"conv_kernel_pack", "conv_input_tile", "conv_data_rows", "conv_data_pack", "conv_bgemm",
        "conv_inverse_cols", "conv_inverse", "conv"}) {
    EXPECT_NE(w.find_op(stage), nullptr) << stage;
  }
  // alpha = 6: the batched GEMM is 36 x [16 x 8] x [8 x 16 tiles of 4x4].
  EXPECT_EQ(w.find_op("conv_bgemm")->output.shape(), (std::vector<int64_t>{6, 6, 16, 16}));
}

TEST(Winograd, FusedBiasAndReluEqualDirectConvolutionWithThem) {
  // The spec takes conv2d's bias/epilogue keys, so a fused layer can be tuned in both forms.
  const std::string dims = "N=1,C=5,H=7,W=9,K=3,pad=1";
  Workload wino = make_workload("conv2d_winograd:" + dims + ",tile=2,bias=1,epilogue=relu");
  Workload direct = make_workload("conv2d:" + dims + ",R=3,S=3,bias=1,epilogue=relu");
  EXPECT_EQ(wino.name(), "conv2d_winograd_nchw_1x5x7x9_3x3x3_p1_t2_bias_relu_float32");
  EXPECT_TRUE(wino.is_constant("bias"));
  EXPECT_FALSE(wino.is_constant("data"));
  ASSERT_EQ(wino.inputs().size(), 3u);
  testing::HostBuffers a(wino), b(direct);
  a.fill_inputs(5);
  b.fill_inputs(5);
  testing::reference_run(wino, a.args());
  testing::reference_run(direct, b.args());
  const auto* out = static_cast<const float*>(a.data(3));
  size_t zeros = 0;
  for (size_t i = 0; i < a.num_elements(3); ++i) {
    zeros += out[i] == 0.0f ? 1 : 0;  // relu clipped these
  }
  EXPECT_GT(zeros, 0u);
  EXPECT_LT(zeros, a.num_elements(3));
  EXPECT_TRUE(testing::close(a.data(3), b.data(3), ir::DataType::float32(), a.num_elements(3),
                             testing::Tolerance{1e-4, 1e-4 * std::sqrt(45.0)}));
}

TEST(Winograd, RejectsWhatItCannotCompute) {
  EXPECT_THROW(make_workload("conv2d_winograd:N=1,C=8,H=14,W=14,K=16,tile=3"), UserError);
  EXPECT_THROW(make_workload("conv2d_winograd:N=1,C=8,H=1,W=1,K=16,pad=0"), UserError);
  Tensor data = placeholder({1, 4, 8, 8}, ir::DataType::float32(), "data");
  Tensor five = placeholder({4, 4, 5, 5}, ir::DataType::float32(), "weight");
  EXPECT_THROW(conv2d_winograd_nchw(data, five, 1, 2), UserError);
}

}  // namespace
}  // namespace tensortune::te

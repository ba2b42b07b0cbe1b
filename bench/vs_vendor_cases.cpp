// SPDX-License-Identifier: Apache-2.0
// bench/vs_vendor's cases: tensortune workload specs and the same problems for oneDNN.
#include "vs_vendor_cases.h"

#include <fmt/format.h>

namespace tensortune::bench {
namespace {

/// matmul: A [M,K] x B [K,N]. With `constant_b`, B is a weight on both sides: ours packs it in
/// the prepare function (outside the timing), as oneDNN's "matmul(packed B)" reorders it ahead.
Case gemm(const std::string& group,
          const std::string& name,
          int64_t m,
          int64_t n,
          int64_t k,
          bool constant_b = false) {
  Case c;
  c.name = name;
  c.group = group;
  c.spec = fmt::format("matmul:M={},N={},K={}{}", m, n, k, constant_b ? ",constant_b=1" : "");
  c.kind = CaseKind::Gemm;
  c.gemm.m = m;
  c.gemm.n = n;
  c.gemm.k = k;
  return c;
}

/// dense: data [M,K] x weight [N,K]^T + bias[N], then the epilogue.
Case dense(const std::string& group,
           const std::string& name,
           int64_t m,
           int64_t n,
           int64_t k,
           Epilogue epilogue) {
  Case c = gemm(group, name, m, n, k);
  c.kind = CaseKind::Dense;
  c.spec = fmt::format("dense:M={},N={},K={},bias=1,epilogue={}", m, n, k,
                       epilogue == Epilogue::Gelu ? "gelu" : "relu");
  c.gemm.b_transposed = true;
  c.gemm.epilogue = epilogue;
  return c;
}

/// NCHW conv2d, batch 1, square kernel, stride and padding.
Case conv(const std::string& group,
          const std::string& name,
          int64_t ch,
          int64_t hw,
          int64_t k,
          int64_t rs,
          int64_t stride,
          int64_t pad) {
  Case c;
  c.name = name;
  c.group = group;
  c.kind = CaseKind::Conv;
  c.spec = fmt::format("conv2d:N=1,C={},H={},W={},K={},R={},S={},stride={},pad={}", ch, hw, hw, k,
                       rs, rs, stride, pad);
  c.conv.c = ch;
  c.conv.h = c.conv.w = hw;
  c.conv.k = k;
  c.conv.r = c.conv.s = rs;
  c.conv.stride = stride;
  c.conv.pad = pad;
  if (rs == 3 && stride == 1) {  // F(4x4, 3x3), or F(2x2, 3x3) under 8 wide (as graph/ picks)
    c.alternatives.push_back(fmt::format("conv2d_winograd:N=1,C={},H={},W={},K={},pad={},tile={}",
                                         ch, hw, hw, k, pad, hw >= 8 ? 4 : 2));
  }
  return c;
}

}  // namespace

std::vector<Case> all_cases() {
  const std::string rn = "ResNet-18 conv";
  std::vector<Case> cases = {
      // B is a weight (issue 6: packed B ahead of time, as a schedule choice), as oneDNN's
      // fastest variant, "matmul(packed B)", has it.
      gemm("GEMM", "gemm_1024", 1024, 1024, 1024, true),
      gemm("GEMM", "gemm_512", 512, 512, 512, true),
      gemm("GEMM", "gemm_2048", 2048, 2048, 2048, true),
      gemm("GEMM", "gemm_128x3072x768", 128, 3072, 768, true),
      gemm("odd GEMM", "odd_257x513x1000", 257, 513, 1000, true),
      gemm("odd GEMM", "odd_100x300x700", 100, 300, 700, true),
      gemm("odd GEMM", "odd_1000x129x513", 1000, 129, 513, true),
      conv(rn, "conv_3x224_64_7x7s2", 3, 224, 64, 7, 2, 3),
      conv(rn, "conv_64x56_64_3x3", 64, 56, 64, 3, 1, 1),
      conv(rn, "conv_64x56_128_3x3s2", 64, 56, 128, 3, 2, 1),
      conv(rn, "conv_128x28_128_3x3", 128, 28, 128, 3, 1, 1),
      conv(rn, "conv_128x28_256_3x3s2", 128, 28, 256, 3, 2, 1),
      conv(rn, "conv_256x14_256_3x3", 256, 14, 256, 3, 1, 1),
      conv(rn, "conv_256x14_512_3x3s2", 256, 14, 512, 3, 2, 1),
      conv(rn, "conv_512x7_512_3x3", 512, 7, 512, 3, 1, 1),
      dense("fused", "dense_bias_gelu_128x3072x768", 128, 3072, 768, Epilogue::Gelu),
  };
  // conv2d + bias + relu on ResNet's 64x56x56 layer ("skipped" where the spec lacks the keys).
  Case fused_conv = conv("fused", "conv_bias_relu_64x56_64_3x3", 64, 56, 64, 3, 1, 1);
  fused_conv.spec += ",bias=1,epilogue=relu";
  for (std::string& alternative : fused_conv.alternatives) {
    alternative += ",bias=1,epilogue=relu";  // the Winograd form fuses them as well
  }
  fused_conv.conv.epilogue = Epilogue::Relu;
  cases.push_back(fused_conv);
  Case depthwise = conv("depthwise/pointwise", "depthwise_32x112_3x3", 32, 112, 32, 3, 1, 1);
  depthwise.spec = "depthwise_conv2d:N=1,C=32,H=112,W=112,R=3,S=3,pad=1";
  depthwise.alternatives.clear();
  depthwise.conv.groups = 32;
  cases.push_back(depthwise);
  cases.push_back(conv("depthwise/pointwise", "pointwise_256x14_1024", 256, 14, 1024, 1, 1, 0));
  return cases;
}

std::vector<int64_t> expected_sizes(const Case& c) {
  if (c.kind == CaseKind::Conv) {
    const ConvProblem& p = c.conv;
    const int64_t oh = (p.h + 2 * p.pad - p.r) / p.stride + 1;
    const int64_t ow = (p.w + 2 * p.pad - p.s) / p.stride + 1;
    std::vector<int64_t> sizes = {p.n * p.c * p.h * p.w, p.k * (p.c / p.groups) * p.r * p.s};
    if (p.epilogue != Epilogue::None) {
      sizes.push_back(p.k);
    }
    sizes.push_back(p.n * p.k * oh * ow);
    return sizes;
  }
  const GemmProblem& g = c.gemm;
  std::vector<int64_t> sizes = {g.m * g.k, g.k * g.n};
  if (c.kind == CaseKind::Dense) {
    sizes.push_back(g.n);
  }
  sizes.push_back(g.m * g.n);
  return sizes;
}

int64_t reduction_length(const Case& c) {
  if (c.kind == CaseKind::Conv) {
    return c.conv.c / c.conv.groups * c.conv.r * c.conv.s;
  }
  return c.gemm.k;
}

}  // namespace tensortune::bench

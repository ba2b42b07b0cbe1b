// SPDX-License-Identifier: Apache-2.0
// The oneDNN baselines of bench/vs_vendor: GEMM, dense + bias + epilogue and NCHW convolution,
// each as a few variants (primitive, weight layout, activation layout) that compute the same output
// from the same row-major / NCHW buffers the tensortune kernel uses.
#pragma once

#include <cstdint>
#include <dnnl.hpp>
#include <functional>
#include <string>
#include <vector>

namespace tensortune::bench {

/// One way oneDNN computes a case. Weights were reordered into the primitive's layout when the
/// variant was made (not timed); `run` does everything else: reorders of activations into and out
/// of the primitive's layout, the primitives, and the wait on the stream.
struct Variant {
  std::string name;
  /// oneDNN's implementation of each primitive (impl_info_str), joined by " + ".
  std::string impl;
  std::function<void()> run;
  /// False: reported for information, never the baseline of a ratio.
  bool primary = true;
};

/// The element-wise tail after the bias.
enum class Epilogue : uint8_t { None, Relu, Gelu };

/// out[M,N] = A[M,K] x B, where B is [K,N], or [N,K] when `b_transposed` (a dense layer's weight);
/// then + bias[N] when `bias` is set, then the epilogue.
struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  bool b_transposed = false;
  const float* a = nullptr;
  const float* b = nullptr;
  const float* bias = nullptr;
  float* out = nullptr;
  Epilogue epilogue = Epilogue::None;
};

/// NCHW convolution with weights [K, C/groups, R, S] (OIHW; [C, 1, R, S] for depthwise), square
/// stride and padding, no dilation; then + bias[K] when `bias` is set, then the epilogue.
struct ConvProblem {
  int64_t n = 1, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0;
  int64_t stride = 1, pad = 0, groups = 1;
  const float* data = nullptr;
  const float* weight = nullptr;
  const float* bias = nullptr;
  float* out = nullptr;
  Epilogue epilogue = Epilogue::None;
};

/// A CPU engine and stream; the variants it makes hold references to both, and to the buffers of
/// the problem, which must outlive them.
class Dnnl {
 public:
  Dnnl();

  /// Without bias and epilogue: the matmul primitive on plain B, the matmul primitive with B in
  /// its preferred (packed) layout, and dnnl_sgemm. With them: each matmul followed by a binary
  /// add and an eltwise primitive (op by op), and for information the matmul with the bias and
  /// the epilogue fused as post-ops.
  std::vector<Variant> gemm(const GemmProblem& p);

  /// The convolution primitive with src/weights/dst in its preferred layouts (format_tag::any),
  /// the NCHW activations reordered in and out inside the timed call, for the direct algorithm
  /// and for convolution_auto when it picks another implementation; and with plain NCHW src/dst
  /// (weights still preferred, no reorders). A bias and epilogue are separate binary and eltwise
  /// primitives on the convolution's output (op by op).
  std::vector<Variant> conv(const ConvProblem& p);

 private:
  Variant matmul_variant(const GemmProblem& p, bool packed_b, bool fused);
  Variant conv_variant(const ConvProblem& p, bool preferred_layout, dnnl::algorithm algorithm);

  dnnl::engine engine_;
  dnnl::stream stream_;
};

}  // namespace tensortune::bench

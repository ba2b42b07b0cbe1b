// SPDX-License-Identifier: Apache-2.0
// bench/vs_vendor_gpu's baselines: cuBLAS (GEMM) and cuDNN (NCHW convolution), float32 math with
// no tensor cores, loaded with dlopen (never linked; no CUDA header is needed to build) and run on
// the stream of the bench's runtime::CudaDevice, so CUDA events time them like tensortune's
// kernels.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tensortune::runtime {
class CudaDevice;
}

namespace tensortune::bench {

/// Why cuBLAS (libcublas.so.13) cannot be loaded, or empty when it can. Never throws.
std::string cublas_unavailable_reason();
/// Why cuDNN (libcudnn.so.9) cannot be loaded, or empty when it can. Never throws.
std::string cudnn_unavailable_reason();

/// A cuBLAS handle on the device's context and stream: float32 GEMMs with CUBLAS_COMPUTE_32F
/// (no TF32 tensor cores) under CUBLAS_DEFAULT_MATH, scalars passed from the host.
class Cublas {
 public:
  /// Throws UserError naming the call and cuBLAS's status when it cannot start.
  explicit Cublas(runtime::CudaDevice& device);
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  /// C[M,N] = A[M,K] x B[K,N], all row-major float32 device buffers; queued on the device's
  /// stream. UserError when cuBLAS refuses.
  void gemm(int64_t m, int64_t n, int64_t k, uint64_t a, uint64_t b, uint64_t c);
  /// "cublasGemmEx (CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)".
  static std::string describe();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// An NCHW float32 convolution (batch n, weights [K, C, R, S] OIHW, square stride and padding,
/// cross-correlation as in deep learning) planned by cuDNN on the device's context and stream:
/// CUDNN_FMA_MATH (no tensor cores), the algorithm cudnnFindConvolutionForwardAlgorithm timed
/// fastest, and its workspace allocated on the device.
struct ConvShape {
  int64_t n = 1, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, stride = 1, pad = 0;
  int64_t out_h() const { return (h + 2 * pad - r) / stride + 1; }
  int64_t out_w() const { return (w + 2 * pad - s) / stride + 1; }
};

class CudnnConv {
 public:
  /// Creates the handle and descriptors and finds the algorithm. Throws UserError naming the call
  /// and cuDNN's status when cuDNN refuses.
  CudnnConv(runtime::CudaDevice& device, const ConvShape& shape);
  ~CudnnConv();
  CudnnConv(const CudnnConv&) = delete;
  CudnnConv& operator=(const CudnnConv&) = delete;

  /// y = conv(x, w) on device buffers; queued on the device's stream.
  void run(uint64_t x, uint64_t w, uint64_t y);
  /// "CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, workspace 1.2 MiB, cuDNN 91900".
  std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tensortune::bench

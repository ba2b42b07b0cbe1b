// SPDX-License-Identifier: Apache-2.0
// cuBLAS and cuDNN for bench/vs_vendor_gpu, resolved with dlopen/dlsym. The types, enum values and
// signatures below are copied from the CUDA 13 toolkit's headers (cublas_api.h, library_types.h,
// cudnn_graph_v9.h, cudnn_ops_v9.h, cudnn_cnn_v9.h of cuDNN 9.19), which are never included, in
// the way src/runtime/cuda_driver_api.h declares the driver's.
#include "vs_vendor_gpu_libs.h"

#include "tensortune/runtime/cuda_driver.h"
#include "tensortune/support/error.h"

#include <array>
#include <cstddef>
#include <dlfcn.h>
#include <fmt/format.h>
#include <vector>

namespace tensortune::bench {

// The libraries' opaque handle types. Named, not anonymous: Cublas::Impl and CudnnConv::Impl,
// classes with linkage, hold pointers to them.
namespace vendor_abi {
struct CublasContext;  // typedef struct cublasContext* cublasHandle_t;
struct CudnnContext;   // typedef struct cudnnContext* cudnnHandle_t;
struct CudnnTensorStruct;
struct CudnnFilterStruct;
struct CudnnConvolutionStruct;
}  // namespace vendor_abi

namespace {

// ---- cuBLAS (cublas_api.h, library_types.h) ----
using CublasHandle = vendor_abi::CublasContext*;
using CublasStatus = int;                   // cublasStatus_t
constexpr CublasStatus kCublasSuccess = 0;  // CUBLAS_STATUS_SUCCESS = 0
constexpr int kCublasOpN = 0;               // cublasOperation_t: CUBLAS_OP_N = 0
constexpr int kCublasPointerModeHost = 0;   // CUBLAS_POINTER_MODE_HOST = 0
constexpr int kCublasDefaultMath = 0;       // cublasMath_t: CUBLAS_DEFAULT_MATH = 0
constexpr int kCublasCompute32F = 68;       // cublasComputeType_t: CUBLAS_COMPUTE_32F = 68
constexpr int kCudaR32F = 0;                // cudaDataType (library_types.h): CUDA_R_32F = 0
constexpr int kCublasGemmDefault = -1;      // cublasGemmAlgo_t: CUBLAS_GEMM_DEFAULT = -1

struct CublasApi {
  std::string reason;  ///< empty when loaded
  // cublasStatus_t cublasCreate_v2(cublasHandle_t* handle);
  CublasStatus (*create)(CublasHandle*) = nullptr;
  // cublasStatus_t cublasDestroy_v2(cublasHandle_t handle);
  CublasStatus (*destroy)(CublasHandle) = nullptr;
  // cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId);
  CublasStatus (*set_stream)(CublasHandle, void*) = nullptr;
  // cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode);
  CublasStatus (*set_pointer_mode)(CublasHandle, int) = nullptr;
  // cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
  CublasStatus (*set_math_mode)(CublasHandle, int) = nullptr;
  // cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
  //     cublasOperation_t transb, int m, int n, int k, const void* alpha, const void* A,
  //     cudaDataType Atype, int lda, const void* B, cudaDataType Btype, int ldb,
  //     const void* beta, void* C, cudaDataType Ctype, int ldc,
  //     cublasComputeType_t computeType, cublasGemmAlgo_t algo);
  CublasStatus (*gemm_ex)(CublasHandle,
                          int,
                          int,
                          int,
                          int,
                          int,
                          const void*,
                          const void*,
                          int,
                          int,
                          const void*,
                          int,
                          int,
                          const void*,
                          void*,
                          int,
                          int,
                          int,
                          int) = nullptr;
  // const char* cublasGetStatusName(cublasStatus_t status);
  const char* (*status_name)(CublasStatus) = nullptr;
  // const char* cublasGetStatusString(cublasStatus_t status);
  const char* (*status_string)(CublasStatus) = nullptr;
};

// ---- cuDNN 9 (cudnn_graph_v9.h, cudnn_ops_v9.h, cudnn_cnn_v9.h) ----
using CudnnHandle = vendor_abi::CudnnContext*;
using CudnnTensorDesc = vendor_abi::CudnnTensorStruct*;     // cudnnTensorDescriptor_t
using CudnnFilterDesc = vendor_abi::CudnnFilterStruct*;     // cudnnFilterDescriptor_t
using CudnnConvDesc = vendor_abi::CudnnConvolutionStruct*;  // cudnnConvolutionDescriptor_t
using CudnnStatus = int;                                    // cudnnStatus_t
constexpr CudnnStatus kCudnnSuccess = 0;                    // CUDNN_STATUS_SUCCESS = 0
constexpr int kCudnnDataFloat = 0;                          // cudnnDataType_t: CUDNN_DATA_FLOAT = 0
constexpr int kCudnnTensorNchw = 0;        // cudnnTensorFormat_t: CUDNN_TENSOR_NCHW = 0
constexpr int kCudnnCrossCorrelation = 1;  // cudnnConvolutionMode_t: CUDNN_CROSS_CORRELATION
constexpr int kCudnnFmaMath = 3;           // cudnnMathType_t: CUDNN_FMA_MATH = 3
constexpr int kCudnnTensorOpMath = 1;      // CUDNN_TENSOR_OP_MATH = 1
constexpr int kCudnnTensorOpMathAllowConversion = 2;  // CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION = 2
constexpr int kCudnnFwdAlgoCount = 8;                 // CUDNN_CONVOLUTION_FWD_ALGO_COUNT = 8

/// cudnnConvolutionFwdAlgoPerf_t (cudnn_cnn_v9.h): {cudnnConvolutionFwdAlgo_t algo;
/// cudnnStatus_t status; float time; size_t memory; cudnnDeterminism_t determinism;
/// cudnnMathType_t mathType; int reserved[3];}, every enum an int.
struct CudnnFwdAlgoPerf {
  int algo;
  CudnnStatus status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  std::array<int, 3> reserved;
};

/// cudnnConvolutionFwdAlgo_t (cudnn_ops_v9.h), by value 0..7.
constexpr std::array<const char*, kCudnnFwdAlgoCount> kCudnnFwdAlgoNames = {
    "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
    "WINOGRAD",      "WINOGRAD_NONFUSED"};

struct CudnnApi {
  std::string reason;
  // size_t cudnnGetVersion(void);
  size_t (*get_version)() = nullptr;
  // const char* cudnnGetErrorString(cudnnStatus_t status);
  const char* (*error_string)(CudnnStatus) = nullptr;
  // cudnnStatus_t cudnnCreate(cudnnHandle_t* handle);
  CudnnStatus (*create)(CudnnHandle*) = nullptr;
  // cudnnStatus_t cudnnDestroy(cudnnHandle_t handle);
  CudnnStatus (*destroy)(CudnnHandle) = nullptr;
  // cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId);
  CudnnStatus (*set_stream)(CudnnHandle, void*) = nullptr;
  // cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* tensorDesc);
  CudnnStatus (*create_tensor)(CudnnTensorDesc*) = nullptr;
  // cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t tensorDesc,
  //     cudnnTensorFormat_t format, cudnnDataType_t dataType, int n, int c, int h, int w);
  CudnnStatus (*set_tensor_4d)(CudnnTensorDesc, int, int, int, int, int, int) = nullptr;
  // cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensorDesc);
  CudnnStatus (*destroy_tensor)(CudnnTensorDesc) = nullptr;
  // cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* filterDesc);
  CudnnStatus (*create_filter)(CudnnFilterDesc*) = nullptr;
  // cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t filterDesc,
  //     cudnnDataType_t dataType, cudnnTensorFormat_t format, int k, int c, int h, int w);
  // (dataType before format: the reverse of cudnnSetTensor4dDescriptor)
  CudnnStatus (*set_filter_4d)(CudnnFilterDesc, int, int, int, int, int, int) = nullptr;
  // cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t filterDesc);
  CudnnStatus (*destroy_filter)(CudnnFilterDesc) = nullptr;
  // cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* convDesc);
  CudnnStatus (*create_conv)(CudnnConvDesc*) = nullptr;
  // cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t convDesc,
  //     int pad_h, int pad_w, int u, int v, int dilation_h, int dilation_w,
  //     cudnnConvolutionMode_t mode, cudnnDataType_t computeType);
  CudnnStatus (*set_conv_2d)(CudnnConvDesc, int, int, int, int, int, int, int, int) = nullptr;
  // cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc,
  //     cudnnMathType_t mathType);
  CudnnStatus (*set_conv_math)(CudnnConvDesc, int) = nullptr;
  // cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc);
  CudnnStatus (*destroy_conv)(CudnnConvDesc) = nullptr;
  // cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t
  //     convDesc, const cudnnTensorDescriptor_t inputTensorDesc, const cudnnFilterDescriptor_t
  //     filterDesc, int* n, int* c, int* h, int* w);
  CudnnStatus (*output_dim)(
      CudnnConvDesc, CudnnTensorDesc, CudnnFilterDesc, int*, int*, int*, int*) = nullptr;
  // cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(cudnnHandle_t handle,
  //     const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
  //     const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc,
  //     const int requestedAlgoCount, int* returnedAlgoCount,
  //     cudnnConvolutionFwdAlgoPerf_t* perfResults);
  CudnnStatus (*find_fwd)(CudnnHandle,
                          CudnnTensorDesc,
                          CudnnFilterDesc,
                          CudnnConvDesc,
                          CudnnTensorDesc,
                          int,
                          int*,
                          CudnnFwdAlgoPerf*) = nullptr;
  // cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
  //     const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnFilterDescriptor_t wDesc,
  //     const void* w, const cudnnConvolutionDescriptor_t convDesc,
  //     cudnnConvolutionFwdAlgo_t algo, void* workSpace, size_t workSpaceSizeInBytes,
  //     const void* beta, const cudnnTensorDescriptor_t yDesc, void* y);
  CudnnStatus (*forward)(CudnnHandle,
                         const void*,
                         CudnnTensorDesc,
                         const void*,
                         CudnnFilterDesc,
                         const void*,
                         CudnnConvDesc,
                         int,
                         void*,
                         size_t,
                         const void*,
                         CudnnTensorDesc,
                         void*) = nullptr;
};

/// dlopen of the first loadable name; the dlerror texts of every attempt otherwise.
void* open_library(const std::vector<std::string>& names, std::string* tried) {
  for (const std::string& name : names) {
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      return handle;
    }
    const char* why = dlerror();
    *tried += (tried->empty() ? "" : "; ") + std::string(why != nullptr ? why : name);
  }
  return nullptr;
}

/// The entry points of one library: each looked up by name, the names it lacks collected.
class Symbols {
 public:
  explicit Symbols(void* library) : library_(library) {}
  template <class Fn>
  Symbols& operator()(const char* name, Fn& entry) {
    void* address = dlsym(library_, name);
    entry = reinterpret_cast<Fn>(address);
    if (address == nullptr) {
      lacking_ += (lacking_.empty() ? "" : ", ") + std::string(name);
    }
    return *this;
  }
  /// "cublasGemmEx, cublasSetMathMode", or empty when every entry point was found.
  const std::string& lacking() const { return lacking_; }

 private:
  void* library_;
  std::string lacking_;
};

CublasApi load_cublas() {
  CublasApi api;
  std::string tried;
  void* h = open_library({"libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13"}, &tried);
  if (h == nullptr) {
    api.reason = "cannot load cuBLAS (" + tried + ")";
    return api;
  }
  Symbols symbols(h);
  symbols("cublasCreate_v2", api.create)("cublasDestroy_v2", api.destroy);
  symbols("cublasSetStream_v2", api.set_stream)("cublasSetPointerMode_v2", api.set_pointer_mode);
  symbols("cublasSetMathMode", api.set_math_mode)("cublasGemmEx", api.gemm_ex);
  symbols("cublasGetStatusName", api.status_name)("cublasGetStatusString", api.status_string);
  if (!symbols.lacking().empty()) {
    api.reason = "libcublas.so.13 lacks " + symbols.lacking();
  }
  return api;
}

CudnnApi load_cudnn() {
  CudnnApi api;
  std::string tried;
  void* h = open_library({"libcudnn.so.9", "/usr/local/cuda/lib64/libcudnn.so.9"}, &tried);
  if (h == nullptr) {
    api.reason = "cannot load cuDNN (" + tried + ")";
    return api;
  }
  Symbols symbols(h);
  symbols("cudnnGetVersion", api.get_version)("cudnnGetErrorString", api.error_string);
  symbols("cudnnCreate", api.create)("cudnnDestroy", api.destroy);
  symbols("cudnnSetStream", api.set_stream);
  symbols("cudnnCreateTensorDescriptor", api.create_tensor);
  symbols("cudnnSetTensor4dDescriptor", api.set_tensor_4d);
  symbols("cudnnDestroyTensorDescriptor", api.destroy_tensor);
  symbols("cudnnCreateFilterDescriptor", api.create_filter);
  symbols("cudnnSetFilter4dDescriptor", api.set_filter_4d);
  symbols("cudnnDestroyFilterDescriptor", api.destroy_filter);
  symbols("cudnnCreateConvolutionDescriptor", api.create_conv);
  symbols("cudnnSetConvolution2dDescriptor", api.set_conv_2d);
  symbols("cudnnSetConvolutionMathType", api.set_conv_math);
  symbols("cudnnDestroyConvolutionDescriptor", api.destroy_conv);
  symbols("cudnnGetConvolution2dForwardOutputDim", api.output_dim);
  symbols("cudnnFindConvolutionForwardAlgorithm", api.find_fwd);
  symbols("cudnnConvolutionForward", api.forward);
  if (!symbols.lacking().empty()) {
    api.reason = "libcudnn.so.9 lacks " + symbols.lacking();
  }
  return api;
}

const CublasApi& cublas_api() {
  static const CublasApi api = load_cublas();
  return api;
}

const CudnnApi& cudnn_api() {
  static const CudnnApi api = load_cudnn();
  return api;
}

void check_cublas(CublasStatus status, const char* call) {
  if (status == kCublasSuccess) {
    return;
  }
  const CublasApi& api = cublas_api();
  throw UserError(
      fmt::format("cuBLAS: {}: {}: {}", call, api.status_name(status), api.status_string(status)));
}

void check_cudnn(CudnnStatus status, const char* call) {
  if (status == kCudnnSuccess) {
    return;
  }
  throw UserError(
      fmt::format("cuDNN: {}: status {}: {}", call, status, cudnn_api().error_string(status)));
}

int to_int(int64_t value, const char* what) {
  TT_USER_CHECK(value > 0 && value <= INT32_MAX)
      << what << " = " << value << " does not fit the vendor library's int";
  return static_cast<int>(value);
}

void* as_pointer(uint64_t device_address) {
  return reinterpret_cast<void*>(  // NOLINT(performance-no-int-to-ptr)
      static_cast<uintptr_t>(device_address));
}

}  // namespace

std::string cublas_unavailable_reason() {
  return cublas_api().reason;
}

std::string cudnn_unavailable_reason() {
  return cudnn_api().reason;
}

struct Cublas::Impl {
  CublasHandle handle = nullptr;
};

Cublas::Cublas(runtime::CudaDevice& device) : impl_(std::make_unique<Impl>()) {
  const CublasApi& api = cublas_api();
  TT_USER_CHECK(api.reason.empty()) << api.reason;
  check_cublas(api.create(&impl_->handle), "cublasCreate_v2");
  try {
    check_cublas(api.set_stream(impl_->handle, device.native_stream()), "cublasSetStream_v2");
    check_cublas(api.set_pointer_mode(impl_->handle, kCublasPointerModeHost),
                 "cublasSetPointerMode_v2");
    check_cublas(api.set_math_mode(impl_->handle, kCublasDefaultMath), "cublasSetMathMode");
  } catch (...) {
    api.destroy(impl_->handle);
    throw;
  }
}

Cublas::~Cublas() {
  cublas_api().destroy(impl_->handle);
}

void Cublas::gemm(int64_t m, int64_t n, int64_t k, uint64_t a, uint64_t b, uint64_t c) {
  // cuBLAS is column-major: a row-major X[R,C] is the column-major X^T. C = A B row-major is
  // C^T = B^T A^T column-major: cuBLAS's (m, n, k) = (N, M, K), its A = our B (ld N), its B = our
  // A (ld K), its C = our C (ld N).
  const float alpha = 1.0F;
  const float beta = 0.0F;
  const int mi = to_int(m, "M");
  const int ni = to_int(n, "N");
  const int ki = to_int(k, "K");
  check_cublas(
      cublas_api().gemm_ex(impl_->handle, kCublasOpN, kCublasOpN, ni, mi, ki, &alpha, as_pointer(b),
                           kCudaR32F, ni, as_pointer(a), kCudaR32F, ki, &beta, as_pointer(c),
                           kCudaR32F, ni, kCublasCompute32F, kCublasGemmDefault),
      "cublasGemmEx");
}

std::string Cublas::describe() {
  return "cublasGemmEx (CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH, CUBLAS_GEMM_DEFAULT)";
}

struct CudnnConv::Impl {
  runtime::CudaDevice& device;
  CudnnHandle handle = nullptr;
  CudnnTensorDesc x = nullptr, y = nullptr;
  CudnnFilterDesc w = nullptr;
  CudnnConvDesc conv = nullptr;
  int algo = 0;
  float find_ms = 0;
  uint64_t workspace = 0;
  size_t workspace_bytes = 0;

  explicit Impl(runtime::CudaDevice& d) : device(d) {}
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    const CudnnApi& api = cudnn_api();
    if (workspace != 0) {
      try {
        device.free(workspace);
      } catch (const runtime::CudaError&) {  // a lost context took it already
      }
    }
    if (conv != nullptr) {
      api.destroy_conv(conv);
    }
    if (w != nullptr) {
      api.destroy_filter(w);
    }
    for (CudnnTensorDesc t : {x, y}) {
      if (t != nullptr) {
        api.destroy_tensor(t);
      }
    }
    if (handle != nullptr) {
      api.destroy(handle);
    }
  }
};

CudnnConv::CudnnConv(runtime::CudaDevice& device, const ConvShape& shape) {
  const ConvShape& p = shape;
  const CudnnApi& api = cudnn_api();
  TT_USER_CHECK(api.reason.empty()) << api.reason;
  auto impl = std::make_unique<Impl>(device);  // releases what a failure leaves behind
  check_cudnn(api.create(&impl->handle), "cudnnCreate");
  check_cudnn(api.set_stream(impl->handle, device.native_stream()), "cudnnSetStream");
  check_cudnn(api.create_tensor(&impl->x), "cudnnCreateTensorDescriptor");
  check_cudnn(api.set_tensor_4d(impl->x, kCudnnTensorNchw, kCudnnDataFloat, to_int(p.n, "N"),
                                to_int(p.c, "C"), to_int(p.h, "H"), to_int(p.w, "W")),
              "cudnnSetTensor4dDescriptor");
  check_cudnn(api.create_filter(&impl->w), "cudnnCreateFilterDescriptor");
  check_cudnn(api.set_filter_4d(impl->w, kCudnnDataFloat, kCudnnTensorNchw, to_int(p.k, "K"),
                                to_int(p.c, "C"), to_int(p.r, "R"), to_int(p.s, "S")),
              "cudnnSetFilter4dDescriptor");
  check_cudnn(api.create_conv(&impl->conv), "cudnnCreateConvolutionDescriptor");
  const int pad = static_cast<int>(p.pad);
  const int stride = to_int(p.stride, "stride");
  check_cudnn(api.set_conv_2d(impl->conv, pad, pad, stride, stride, 1, 1, kCudnnCrossCorrelation,
                              kCudnnDataFloat),
              "cudnnSetConvolution2dDescriptor");
  check_cudnn(api.set_conv_math(impl->conv, kCudnnFmaMath), "cudnnSetConvolutionMathType");
  std::array<int, 4> out{};
  check_cudnn(api.output_dim(impl->conv, impl->x, impl->w, out.data(), &out[1], &out[2], &out[3]),
              "cudnnGetConvolution2dForwardOutputDim");
  TT_USER_CHECK(out[0] == p.n && out[1] == p.k && out[2] == p.out_h() && out[3] == p.out_w())
      << "cuDNN's output is " << out[0] << "x" << out[1] << "x" << out[2] << "x" << out[3]
      << ", tensortune's " << p.n << "x" << p.k << "x" << p.out_h() << "x" << p.out_w();
  check_cudnn(api.create_tensor(&impl->y), "cudnnCreateTensorDescriptor");
  check_cudnn(
      api.set_tensor_4d(impl->y, kCudnnTensorNchw, kCudnnDataFloat, out[0], out[1], out[2], out[3]),
      "cudnnSetTensor4dDescriptor");
  // Runs every algorithm (with buffers of its own) and returns them fastest first.
  std::array<CudnnFwdAlgoPerf, kCudnnFwdAlgoCount> perf{};
  int returned = 0;
  check_cudnn(api.find_fwd(impl->handle, impl->x, impl->w, impl->conv, impl->y, kCudnnFwdAlgoCount,
                           &returned, perf.data()),
              "cudnnFindConvolutionForwardAlgorithm");
  const CudnnFwdAlgoPerf* best = nullptr;
  for (int i = 0; i < returned && best == nullptr; ++i) {
    // The descriptor restricts cuDNN to FMA kernels; a result reporting tensor-op math would
    // not be a float32 comparison, so it is never taken.
    if (perf[i].status == kCudnnSuccess && perf[i].math_type != kCudnnTensorOpMath &&
        perf[i].math_type != kCudnnTensorOpMathAllowConversion) {
      best = &perf[i];
    }
  }
  TT_USER_CHECK(best != nullptr) << "cuDNN: cudnnFindConvolutionForwardAlgorithm found no "
                                    "float32 (non tensor-op) algorithm among "
                                 << returned;
  impl->algo = best->algo;
  impl->find_ms = best->time;
  impl->workspace_bytes = best->memory;
  if (impl->workspace_bytes > 0) {
    impl->workspace = device.alloc(impl->workspace_bytes);
  }
  impl_ = std::move(impl);
}

CudnnConv::~CudnnConv() = default;

void CudnnConv::run(uint64_t x, uint64_t w, uint64_t y) {
  const float alpha = 1.0F;
  const float beta = 0.0F;
  check_cudnn(
      cudnn_api().forward(impl_->handle, &alpha, impl_->x, as_pointer(x), impl_->w, as_pointer(w),
                          impl_->conv, impl_->algo, as_pointer(impl_->workspace),
                          impl_->workspace_bytes, &beta, impl_->y, as_pointer(y)),
      "cudnnConvolutionForward");
}

std::string CudnnConv::describe() const {
  const char* name = impl_->algo >= 0 && impl_->algo < kCudnnFwdAlgoCount
                         ? kCudnnFwdAlgoNames.at(static_cast<size_t>(impl_->algo))
                         : "?";
  return fmt::format(
      "CUDNN_CONVOLUTION_FWD_ALGO_{} (CUDNN_FMA_MATH), workspace {:.1f} MiB, cuDNN {}", name,
      static_cast<double>(impl_->workspace_bytes) / (1 << 20), cudnn_api().get_version());
}

}  // namespace tensortune::bench

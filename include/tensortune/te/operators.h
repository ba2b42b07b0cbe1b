// SPDX-License-Identifier: Apache-2.0
// The operator library: functions that build tensor expressions for common layers, and the
// named-workload table behind workload specs such as "matmul:M=1024,N=1024,K=1024".
#pragma once

#include "tensortune/te/tensor.h"
#include "tensortune/te/workload.h"

#include <cstdint>
#include <map>
#include <string>

namespace tensortune::te {

Tensor matmul(const Tensor& a,
              const Tensor& b,
              bool transpose_b = false,
              const std::string& name = "C");
Tensor batch_matmul(const Tensor& a,
                    const Tensor& b,
                    bool transpose_b = false,
                    const std::string& name = "C");
/// data[M,K] x weight[N,K]^T (+ bias[N]) -> [M,N].
Tensor dense(const Tensor& data, const Tensor& weight, const std::string& name = "dense");
Tensor bias_add(const Tensor& x, const Tensor& bias, int axis, const std::string& name = "bias");
Tensor relu(const Tensor& x, const std::string& name = "relu");
/// Exact gelu: x * 0.5 * (1 + erf(x / sqrt(2))).
Tensor gelu(const Tensor& x, const std::string& name = "gelu");
Tensor add(const Tensor& a, const Tensor& b, const std::string& name = "add");
Tensor multiply(const Tensor& a, const Tensor& b, const std::string& name = "mul");
Tensor transpose(const Tensor& x, const std::vector<int>& perm, const std::string& name = "T");
/// Constant padding of each dimension by (before[d], after[d]).
Tensor pad(const Tensor& x,
           const std::vector<int64_t>& before,
           const std::vector<int64_t>& after,
           double value = 0.0,
           const std::string& name = "pad");

struct Conv2dParams {
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
};
/// NCHW data, OIHW weight (I = C / groups).
Tensor conv2d_nchw(const Tensor& data,
                   const Tensor& weight,
                   const Conv2dParams& p,
                   const std::string& name = "conv");
/// NHWC data, HWIO weight (I = C / groups).
Tensor conv2d_nhwc(const Tensor& data,
                   const Tensor& weight,
                   const Conv2dParams& p,
                   const std::string& name = "conv");
/// 3x3 stride-1 convolution by Winograd's minimal filtering F(tile x tile, 3 x 3), tile 2 or 4:
/// NCHW data, OIHW weight [K, C, 3, 3], symmetric padding `pad`; the result equals conv2d_nchw's
/// up to rounding. Stages NAME_kernel_pack (weights only), NAME_input_tile, NAME_data_rows and
/// NAME_data_pack (the data transform, one dimension each), NAME_bgemm (alpha^2 GEMMs over the
/// channels, alpha = tile + 2), NAME_inverse_cols and NAME_inverse, and NAME.
Tensor conv2d_winograd_nchw(const Tensor& data,
                            const Tensor& weight,
                            int64_t pad,
                            int64_t tile,
                            const std::string& name = "conv");
/// NCHW data, weight [C, 1, R, S] (groups = C, multiplier 1).
Tensor depthwise_conv2d_nchw(const Tensor& data,
                             const Tensor& weight,
                             const Conv2dParams& p,
                             const std::string& name = "dwconv");

enum class PoolKind { Max, Avg };
/// NCHW pooling; avg divides by the number of non-padding elements.
Tensor pool2d_nchw(const Tensor& data,
                   PoolKind kind,
                   int64_t kernel_h,
                   int64_t kernel_w,
                   const Conv2dParams& p,
                   const std::string& name = "pool");
/// Softmax over the last axis (max-subtracted, numerically stable).
Tensor softmax(const Tensor& x, const std::string& name = "softmax");
/// Layer normalisation over the last axis with gamma and beta of that length.
Tensor layer_norm(const Tensor& x,
                  const Tensor& gamma,
                  const Tensor& beta,
                  double epsilon = 1e-5,
                  const std::string& name = "layer_norm");

/// A parsed workload spec "NAME:key=value,...".
struct WorkloadSpec {
  std::string name;
  std::map<std::string, std::string> params;
  /// The spec in canonical form (keys sorted).
  std::string to_string() const;
};

/// Parses "NAME:key=value,..." (the part after ':' may be empty). Throws UserError with the
/// offending text when malformed.
WorkloadSpec parse_workload_spec(const std::string& text);

/// Builds the named workload. Known names: matmul (M,N,K[,transpose_b]), batch_matmul (B,M,N,K),
/// dense (M,N,K[,bias,epilogue=none|relu|gelu]), conv2d (N,C,H,W,K,R,S,stride,pad,dilation,
/// groups,layout=NCHW|NHWC,bias,epilogue=none|relu), conv2d_winograd (N,C,H,W,K,pad,tile=2|4),
/// depthwise_conv2d (N,C,H,W,R,S,stride,pad), pool2d (kind=max|avg,...),
/// softmax (M,N), layer_norm (M,N), add/mul/relu/gelu (shape "M,N"...), transpose, pad.
/// Every spec takes dtype=float32|int32 (default float32). Throws UserError naming the workload
/// and the key on unknown names, unknown keys, missing keys or bad values.
Workload make_workload(const WorkloadSpec& spec);
Workload make_workload(const std::string& spec_text);

/// The names make_workload() knows, sorted.
std::vector<std::string> workload_names();
/// The keys a spec of workload `name` accepts, in the table's order, then "dtype"; UserError for
/// an unknown name.
std::vector<std::string> workload_keys(const std::string& name);

}  // namespace tensortune::te

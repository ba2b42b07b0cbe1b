// SPDX-License-Identifier: Apache-2.0
// Neural-network operators: conv2d (NCHW, NHWC, depthwise), pool2d, softmax and layer_norm.
// Padding is a separate "injective" stage (as in TVM's topi) so a schedule can inline it.
#include "te/operator_util.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

namespace tensortune::te {
namespace {

using detail::check_float;
using detail::check_ndim;
using detail::check_same_dtype;
using detail::shape_str;

ir::Expr times(const ir::Expr& v, int64_t factor) {
  return factor == 1 ? v : v * ir::Expr(static_cast<int>(factor));
}

/// The input coordinate read by output coordinate `out` at window offset `r`.
ir::Expr window(const ir::Expr& out, int64_t stride, const ir::Expr& r, int64_t dilation) {
  return times(out, stride) + times(r, dilation);
}

/// Output extent of a sliding window; throws UserError naming `op` when it is not positive.
int64_t out_extent(const char* op,
                   const char* dim,
                   int64_t in,
                   int64_t kernel,
                   int64_t stride,
                   int64_t pad,
                   int64_t dilation) {
  int64_t span = dilation * (kernel - 1) + 1;
  TT_USER_CHECK(in + 2 * pad >= span)
      << op << ": window of extent " << span << " (kernel " << kernel << ", dilation " << dilation
      << ") does not fit input " << dim << "=" << in << " with padding " << pad;
  return (in + 2 * pad - span) / stride + 1;
}

void check_params(const char* op, const Conv2dParams& p) {
  TT_USER_CHECK(p.stride_h >= 1 && p.stride_w >= 1)
      << op << ": stride must be positive, got " << p.stride_h << "x" << p.stride_w;
  TT_USER_CHECK(p.dilation_h >= 1 && p.dilation_w >= 1)
      << op << ": dilation must be positive, got " << p.dilation_h << "x" << p.dilation_w;
  TT_USER_CHECK(p.pad_h >= 0 && p.pad_w >= 0)
      << op << ": padding must not be negative, got " << p.pad_h << "x" << p.pad_w;
  TT_USER_CHECK(p.groups >= 1) << op << ": groups must be positive, got " << p.groups;
}

/// Pads the two spatial dimensions (`h_dim`, `h_dim + 1`) of a 4-D tensor, or returns it as is.
Tensor pad_spatial(const Tensor& x,
                   size_t h_dim,
                   const Conv2dParams& p,
                   const ir::Expr& value,
                   const std::string& name) {
  if (p.pad_h == 0 && p.pad_w == 0) {
    return x;
  }
  std::vector<int64_t> before(4, 0);
  before[h_dim] = p.pad_h;
  before[h_dim + 1] = p.pad_w;
  return detail::pad_with(x, before, before, value, name);
}

/// Number of window offsets r in [0, kernel) whose input coordinate lies inside [0, in).
ir::Expr valid_count(const ir::Expr& out,
                     int64_t in,
                     int64_t kernel,
                     int64_t stride,
                     int64_t pad,
                     int64_t dilation) {
  ir::Expr start = times(out, stride);
  ir::Expr d(static_cast<int>(dilation));
  // First r with start - pad + r*d >= 0 is ceil((pad - start) / d); floor division makes
  // (a + d - 1) / d a ceiling for either sign of a.
  ir::Expr lo_num = ir::Expr(static_cast<int>(pad)) - start;
  ir::Expr lo = dilation == 1 ? lo_num : (lo_num + static_cast<int>(dilation - 1)) / d;
  ir::Expr hi_num = ir::Expr(static_cast<int>(in - 1 + pad)) - start;
  ir::Expr hi = dilation == 1 ? hi_num : hi_num / d;
  lo = ir::max(lo, 0);
  hi = ir::min(hi, static_cast<int>(kernel - 1));
  return ir::max(hi - lo + 1, 1);
}

}  // namespace

Tensor conv2d_nchw(const Tensor& data,
                   const Tensor& weight,
                   const Conv2dParams& p,
                   const std::string& name) {
  check_ndim("conv2d_nchw", "data", data, 4);
  check_ndim("conv2d_nchw", "weight", weight, 4);
  check_same_dtype("conv2d_nchw", data, weight);
  check_params("conv2d_nchw", p);
  const auto& ds = data.shape();
  const auto& ws = weight.shape();
  int64_t c = ds[1];
  int64_t k = ws[0];
  int64_t g = p.groups;
  TT_USER_CHECK(c % g == 0 && k % g == 0 && ws[1] == c / g)
      << "conv2d_nchw: data " << shape_str(ds) << " and weight " << shape_str(ws)
      << " do not match with groups=" << g << " (expected weight [K, C/groups, R, S] with C=" << c
      << " and K divisible by groups)";
  int64_t oh = out_extent("conv2d_nchw", "H", ds[2], ws[2], p.stride_h, p.pad_h, p.dilation_h);
  int64_t ow = out_extent("conv2d_nchw", "W", ds[3], ws[3], p.stride_w, p.pad_w, p.dilation_w);
  Tensor padded = pad_spatial(data, 2, p, ir::make_const(data.dtype(), 0.0), name + "_pad");
  ir::IterVar rc = reduce_axis(c / g, "rc");
  ir::IterVar ry = reduce_axis(ws[2], "ry");
  ir::IterVar rx = reduce_axis(ws[3], "rx");
  return compute({ds[0], k, oh, ow},
                 [&](const std::vector<ir::Var>& v) {
                   ir::Expr chan = g == 1 ? ir::Expr(rc.var)
                                          : times(v[1] / static_cast<int>(k / g), c / g) + rc.var;
                   ir::Expr in = padded(v[0], chan, window(v[2], p.stride_h, ry.var, p.dilation_h),
                                        window(v[3], p.stride_w, rx.var, p.dilation_w));
                   return sum(in * weight(v[1], rc.var, ry.var, rx.var), {rc, ry, rx});
                 },
                 name, "conv2d", {"n", "f", "y", "x"});
}

Tensor conv2d_nhwc(const Tensor& data,
                   const Tensor& weight,
                   const Conv2dParams& p,
                   const std::string& name) {
  check_ndim("conv2d_nhwc", "data", data, 4);
  check_ndim("conv2d_nhwc", "weight", weight, 4);
  check_same_dtype("conv2d_nhwc", data, weight);
  check_params("conv2d_nhwc", p);
  const auto& ds = data.shape();
  const auto& ws = weight.shape();
  int64_t c = ds[3];
  int64_t k = ws[3];
  int64_t g = p.groups;
  TT_USER_CHECK(c % g == 0 && k % g == 0 && ws[2] == c / g)
      << "conv2d_nhwc: data " << shape_str(ds) << " and weight " << shape_str(ws)
      << " do not match with groups=" << g << " (expected weight [R, S, C/groups, K] with C=" << c
      << " and K divisible by groups)";
  int64_t oh = out_extent("conv2d_nhwc", "H", ds[1], ws[0], p.stride_h, p.pad_h, p.dilation_h);
  int64_t ow = out_extent("conv2d_nhwc", "W", ds[2], ws[1], p.stride_w, p.pad_w, p.dilation_w);
  Tensor padded = pad_spatial(data, 1, p, ir::make_const(data.dtype(), 0.0), name + "_pad");
  ir::IterVar ry = reduce_axis(ws[0], "ry");
  ir::IterVar rx = reduce_axis(ws[1], "rx");
  ir::IterVar rc = reduce_axis(c / g, "rc");
  return compute({ds[0], oh, ow, k},
                 [&](const std::vector<ir::Var>& v) {
                   ir::Expr chan = g == 1 ? ir::Expr(rc.var)
                                          : times(v[3] / static_cast<int>(k / g), c / g) + rc.var;
                   ir::Expr in = padded(v[0], window(v[1], p.stride_h, ry.var, p.dilation_h),
                                        window(v[2], p.stride_w, rx.var, p.dilation_w), chan);
                   return sum(in * weight(ry.var, rx.var, rc.var, v[3]), {ry, rx, rc});
                 },
                 name, "conv2d", {"n", "y", "x", "f"});
}

Tensor depthwise_conv2d_nchw(const Tensor& data,
                             const Tensor& weight,
                             const Conv2dParams& p,
                             const std::string& name) {
  check_ndim("depthwise_conv2d_nchw", "data", data, 4);
  check_ndim("depthwise_conv2d_nchw", "weight", weight, 4);
  check_same_dtype("depthwise_conv2d_nchw", data, weight);
  check_params("depthwise_conv2d_nchw", p);
  const auto& ds = data.shape();
  const auto& ws = weight.shape();
  TT_USER_CHECK(ws[0] == ds[1] && ws[1] == 1 && (p.groups == 1 || p.groups == ds[1]))
      << "depthwise_conv2d_nchw: data " << shape_str(ds) << " and weight " << shape_str(ws)
      << " do not match (expected weight [" << ds[1] << ", 1, R, S])";
  int64_t oh =
      out_extent("depthwise_conv2d_nchw", "H", ds[2], ws[2], p.stride_h, p.pad_h, p.dilation_h);
  int64_t ow =
      out_extent("depthwise_conv2d_nchw", "W", ds[3], ws[3], p.stride_w, p.pad_w, p.dilation_w);
  Tensor padded = pad_spatial(data, 2, p, ir::make_const(data.dtype(), 0.0), name + "_pad");
  ir::IterVar ry = reduce_axis(ws[2], "ry");
  ir::IterVar rx = reduce_axis(ws[3], "rx");
  return compute({ds[0], ds[1], oh, ow},
                 [&](const std::vector<ir::Var>& v) {
                   ir::Expr in = padded(v[0], v[1], window(v[2], p.stride_h, ry.var, p.dilation_h),
                                        window(v[3], p.stride_w, rx.var, p.dilation_w));
                   return sum(in * weight(v[1], 0, ry.var, rx.var), {ry, rx});
                 },
                 name, "depthwise_conv2d", {"n", "c", "y", "x"});
}

Tensor pool2d_nchw(const Tensor& data,
                   PoolKind kind,
                   int64_t kernel_h,
                   int64_t kernel_w,
                   const Conv2dParams& p,
                   const std::string& name) {
  check_ndim("pool2d_nchw", "data", data, 4);
  check_params("pool2d_nchw", p);
  TT_USER_CHECK(kernel_h >= 1 && kernel_w >= 1)
      << "pool2d_nchw: kernel must be positive, got " << kernel_h << "x" << kernel_w;
  TT_USER_CHECK(p.pad_h <= p.dilation_h * (kernel_h - 1) &&
                p.pad_w <= p.dilation_w * (kernel_w - 1))
      << "pool2d_nchw: padding " << p.pad_h << "x" << p.pad_w
      << " would give windows entirely in the padding (kernel " << kernel_h << "x" << kernel_w
      << ")";
  const auto& ds = data.shape();
  int64_t oh = out_extent("pool2d_nchw", "H", ds[2], kernel_h, p.stride_h, p.pad_h, p.dilation_h);
  int64_t ow = out_extent("pool2d_nchw", "W", ds[3], kernel_w, p.stride_w, p.pad_w, p.dilation_w);
  bool is_max = kind == PoolKind::Max;
  ir::Expr fill = is_max ? ir::min_value(data.dtype()) : ir::make_const(data.dtype(), 0.0);
  Tensor padded = pad_spatial(data, 2, p, fill, name + "_pad");
  ir::IterVar ry = reduce_axis(kernel_h, "ry");
  ir::IterVar rx = reduce_axis(kernel_w, "rx");
  std::vector<int64_t> shape = {ds[0], ds[1], oh, ow};
  std::vector<std::string> axes = {"n", "c", "y", "x"};
  Tensor pooled = compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr in = padded(v[0], v[1], window(v[2], p.stride_h, ry.var, p.dilation_h),
                             window(v[3], p.stride_w, rx.var, p.dilation_w));
        return is_max ? max_reduce(in, {ry, rx}) : sum(in, {ry, rx});
      },
      is_max ? name : name + "_sum", "pool", axes);
  if (is_max) {
    return pooled;
  }
  return compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr count = ir::Expr(static_cast<int>(kernel_h * kernel_w));
        if (p.pad_h != 0 || p.pad_w != 0) {
          count = valid_count(v[2], ds[2], kernel_h, p.stride_h, p.pad_h, p.dilation_h) *
                  valid_count(v[3], ds[3], kernel_w, p.stride_w, p.pad_w, p.dilation_w);
        }
        return pooled(v[0], v[1], v[2], v[3]) / ir::cast(data.dtype(), count);
      },
      name, "elemwise", axes);
}

namespace {

/// The indices of the leading (all but last) dimensions, optionally followed by `last`.
std::vector<ir::Expr> leading(const std::vector<ir::Var>& v, size_t n, const ir::Expr& last) {
  std::vector<ir::Expr> out(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
  if (last.defined()) {
    out.push_back(last);
  }
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, const std::string& name) {
  TT_USER_CHECK(x.defined() && x.ndim() >= 1) << "softmax: needs a tensor with at least one axis";
  check_float("softmax", x);
  std::vector<int64_t> outer(x.shape().begin(), x.shape().end() - 1);
  size_t lead = outer.size();
  ir::IterVar rk = reduce_axis(x.shape().back(), "rk");
  auto all = [](const std::vector<ir::Var>& v) {
    return std::vector<ir::Expr>(v.begin(), v.end());
  };
  Tensor row_max = compute(
      outer,
      [&](const std::vector<ir::Var>& v) { return max_reduce(x(leading(v, lead, rk.var)), {rk}); },
      name + "_max", "reduction");
  Tensor e = compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        return ir::exp(x(all(v)) - row_max(leading(v, lead, ir::Expr())));
      },
      name + "_exp", "broadcast");
  ir::IterVar rs = reduce_axis(x.shape().back(), "rk");
  Tensor row_sum = compute(
      outer, [&](const std::vector<ir::Var>& v) { return sum(e(leading(v, lead, rs.var)), {rs}); },
      name + "_sum", "reduction");
  return compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        return e(all(v)) / row_sum(leading(v, lead, ir::Expr()));
      },
      name, "broadcast");
}

Tensor layer_norm(const Tensor& x,
                  const Tensor& gamma,
                  const Tensor& beta,
                  double epsilon,
                  const std::string& name) {
  TT_USER_CHECK(x.defined() && x.ndim() >= 1)
      << "layer_norm: needs a tensor with at least one axis";
  check_float("layer_norm", x);
  check_ndim("layer_norm", "gamma", gamma, 1);
  check_ndim("layer_norm", "beta", beta, 1);
  check_same_dtype("layer_norm", x, gamma);
  check_same_dtype("layer_norm", x, beta);
  int64_t n = x.shape().back();
  TT_USER_CHECK(gamma.shape()[0] == n && beta.shape()[0] == n)
      << "layer_norm: gamma " << shape_str(gamma.shape()) << " and beta " << shape_str(beta.shape())
      << " must match the last dimension of " << shape_str(x.shape());
  TT_USER_CHECK(epsilon >= 0) << "layer_norm: negative epsilon " << epsilon;
  ir::DataType t = x.dtype();
  ir::Expr inv_n = ir::make_const(t, 1.0 / static_cast<double>(n));
  std::vector<int64_t> outer(x.shape().begin(), x.shape().end() - 1);
  size_t lead = outer.size();
  ir::IterVar rk = reduce_axis(n, "rk");
  Tensor mean = compute(
      outer,
      [&](const std::vector<ir::Var>& v) { return sum(x(leading(v, lead, rk.var)) * inv_n, {rk}); },
      name + "_mean", "reduction");
  ir::IterVar rv = reduce_axis(n, "rk");
  Tensor var = compute(
      outer,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr d = x(leading(v, lead, rv.var)) - mean(leading(v, lead, ir::Expr()));
        return sum(d * d * inv_n, {rv});
      },
      name + "_var", "reduction");
  return compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> row = leading(v, lead, ir::Expr());
        ir::Expr centered = x(std::vector<ir::Expr>(v.begin(), v.end())) - mean(row);
        ir::Expr norm = centered / ir::sqrt(var(row) + ir::make_const(t, epsilon));
        return norm * gamma(v.back()) + beta(v.back());
      },
      name, "broadcast");
}

}  // namespace tensortune::te

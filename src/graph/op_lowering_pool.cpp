// SPDX-License-Identifier: Apache-2.0
// Pooling with ceil_mode (SqueezeNet's MaxPool, ResNet-D's AveragePool) or asymmetric pads: the
// input is padded explicitly, at the end as far as the inferred output's last window reaches,
// and pooled without padding; an average divides by the taps PyTorch and ONNX Runtime count.
#include "graph/op_util.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <algorithm>

namespace tensortune::graph::detail {
namespace {

using Vars = std::vector<ir::Var>;

/// The taps of the window starting at `start` (which may lie in the front padding) that an
/// average divides by along one axis of extent `n`: with `include_pad`, the pads count but the
/// ceil_mode overflow past them never does; without, only the input's own elements count.
ir::Expr taps(const ir::Expr& start, int64_t k, int64_t n, int64_t pad_end, bool include_pad) {
  if (include_pad)
    return ir::min(start + idx(k), idx(n + pad_end)) - start;
  return ir::min(start + idx(k), idx(n)) - ir::max(start, idx(0));
}

}  // namespace

te::Tensor pool_padded(const Graph& g,
                       const Node& node,
                       const te::Tensor& x,
                       const std::vector<int64_t>& k,
                       const std::vector<int64_t>& pads,
                       const std::string& name) {
  const Value& out = g.value(node.outputs[0]);
  std::vector<int64_t> s = node.attr_ints("strides", {1, 1});
  std::vector<int64_t> dil = node.attr_ints("dilations", {1, 1});
  bool is_max = node.op == "MaxPool";
  TT_USER_CHECK(is_max || (dil[0] == 1 && dil[1] == 1))
      << node.describe() << ": dilated average pooling is not supported";
  std::vector<int64_t> after = {pads[2], pads[3]};
  for (size_t d = 0; d < 2; ++d) {
    int64_t needed = (out.shape[2 + d] - 1) * s[d] + dil[d] * (k[d] - 1) + 1;
    int64_t have = x.shape()[2 + d] + pads[d] + pads[2 + d];
    after[d] += std::max<int64_t>(0, needed - have);
  }
  int64_t h_in = x.shape()[2], w_in = x.shape()[3];
  ir::Expr fill = is_max ? ir::min_value(x.dtype()) : ir::make_const(x.dtype(), 0.0);
  te::Tensor padded = te::compute(
      {x.shape()[0], x.shape()[1], h_in + pads[0] + after[0], w_in + pads[1] + after[1]},
      [&](const Vars& v) {
        ir::Expr h = v[2] - idx(pads[0]), w = v[3] - idx(pads[1]);
        ir::Expr inside = h >= idx(0) && h < idx(h_in) && w >= idx(0) && w < idx(w_in);
        ir::Expr hc = ir::max(ir::min(h, idx(h_in - 1)), idx(0));
        ir::Expr wc = ir::max(ir::min(w, idx(w_in - 1)), idx(0));
        return ir::select(inside, x(v[0], v[1], hc, wc), fill);
      },
      name + "_pad", "injective");
  te::Conv2dParams p;
  p.stride_h = s[0], p.stride_w = s[1], p.dilation_h = dil[0], p.dilation_w = dil[1];
  if (is_max)
    return te::pool2d_nchw(padded, te::PoolKind::Max, k[0], k[1], p, name);
  ir::IterVar ry = te::reduce_axis(k[0], "ry");
  ir::IterVar rx = te::reduce_axis(k[1], "rx");
  te::Tensor sum = te::compute(
      out.shape,
      [&](const Vars& v) {
        return te::sum(padded(v[0], v[1], v[2] * idx(s[0]) + ry.var, v[3] * idx(s[1]) + rx.var),
                       {ry, rx});
      },
      name + "_sum", "pool");
  bool include_pad = node.attr_int("count_include_pad", 0) != 0;
  return te::compute(
      out.shape,
      [&](const Vars& v) {
        ir::Expr ch = taps(v[2] * idx(s[0]) - idx(pads[0]), k[0], h_in, pads[2], include_pad);
        ir::Expr cw = taps(v[3] * idx(s[1]) - idx(pads[1]), k[1], w_in, pads[3], include_pad);
        return sum(v[0], v[1], v[2], v[3]) / ir::cast(x.dtype(), ch * cw);
      },
      name, "elemwise");
}

}  // namespace tensortune::graph::detail

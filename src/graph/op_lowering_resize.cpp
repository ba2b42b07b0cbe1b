// SPDX-License-Identifier: Apache-2.0
// Resize (opsets 10 to 13) as a tensor expression: nearest and linear modes with the common
// coordinate transformations. Source coordinates are computed in float32 per output index, as
// ONNX Runtime does, so the indices match its output.
#include "graph/op_util.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"

namespace tensortune::graph::detail {
namespace {

using Vars = std::vector<ir::Var>;

ir::Expr f32(double v) {
  return ir::make_const(ir::DataType::float32(), v);
}

/// How one axis maps an output index to a source coordinate.
struct AxisMap {
  int64_t in = 1, out = 1;
  double scale = 1;
  bool identity = true;
};

/// The source coordinate (float32) of output index `x` on `axis` under `mode`.
ir::Expr source_coordinate(const std::string& mode, const AxisMap& a, const ir::Var& x) {
  ir::Expr xf = ir::cast(ir::DataType::float32(), x);
  if (mode == "asymmetric")
    return xf * f32(1.0 / a.scale);
  if (mode == "align_corners") {
    return a.out == 1 ? f32(0)
                      : xf * f32(static_cast<double>(a.in - 1) / static_cast<double>(a.out - 1));
  }
  if (mode == "pytorch_half_pixel" && a.out == 1)
    return f32(0);
  if (mode == "tf_half_pixel_for_nn")
    return (xf + f32(0.5)) * f32(1.0 / a.scale);
  return (xf + f32(0.5)) * f32(1.0 / a.scale) - f32(0.5);  // half_pixel, pytorch_half_pixel
}

ir::Expr clamp_index(const ir::Expr& i, int64_t n) {
  return ir::max(ir::min(i, ir::Expr(static_cast<int>(n - 1))), ir::Expr(0));
}

ir::Expr to_int(const ir::Expr& f) {
  return ir::cast(ir::DataType::int32(), f);
}

ir::Expr nearest_index(const std::string& rounding, const ir::Expr& c, int64_t n) {
  ir::Expr i;
  if (rounding == "floor")
    i = ir::floor(c);
  else if (rounding == "ceil")
    i = ir::ceil(c);
  else if (rounding == "round_prefer_ceil")
    i = ir::floor(c + f32(0.5));
  else
    i = ir::ceil(c - f32(0.5));  // round_prefer_floor: a tie goes down
  return clamp_index(to_int(i), n);
}

std::vector<AxisMap> axis_maps(const Graph& g, const Node& node, const te::Tensor& x) {
  const Value& out = g.value(node.outputs[0]);
  // Opset 10: Resize(X, scales); from 11: Resize(X, roi, scales, sizes).
  size_t scales_input = node.inputs.size() == 2 ? 1 : 2;
  std::vector<float> scales;
  if (node.inputs.size() > scales_input && !node.inputs[scales_input].empty()) {
    const Value& s = g.value(node.inputs[scales_input]);
    TT_USER_CHECK(s.is_constant()) << node.describe() << ": scales must be a constant";
    scales = s.data->floats;
  }
  std::vector<AxisMap> maps;
  for (size_t d = 0; d < x.ndim(); ++d) {
    AxisMap a;
    a.in = x.shape()[d];
    a.out = out.shape[d];
    a.scale = scales.size() == x.ndim() ? static_cast<double>(scales[d])
                                        : static_cast<double>(a.out) / static_cast<double>(a.in);
    TT_USER_CHECK(a.scale > 0) << node.describe() << ": scale " << a.scale << " on axis " << d;
    a.identity = a.in == a.out && a.scale == 1.0;
    maps.push_back(a);
  }
  return maps;
}

}  // namespace

te::Tensor lower_resize(const Graph& g,
                        const Node& node,
                        const std::function<te::Tensor(size_t)>& input,
                        const std::string& name) {
  te::Tensor x = input(0);
  const Value& out = g.value(node.outputs[0]);
  std::string mode = node.attr_string("mode", "nearest");
  TT_USER_CHECK(mode == "nearest" || mode == "linear")
      << node.describe() << ": mode '" << mode << "' is not supported (nearest, linear)";
  TT_USER_CHECK(mode == "nearest" || x.dtype().is_float())
      << node.describe() << ": linear resize of " << x.dtype().to_string()
      << " is not supported (floating-point only)";
  bool opset10 = node.inputs.size() == 2;
  std::string transform =
      node.attr_string("coordinate_transformation_mode", opset10 ? "asymmetric" : "half_pixel");
  TT_USER_CHECK(transform == "half_pixel" || transform == "pytorch_half_pixel" ||
                transform == "align_corners" || transform == "asymmetric" ||
                transform == "tf_half_pixel_for_nn")
      << node.describe() << ": coordinate_transformation_mode '" << transform
      << "' is not supported";
  std::string rounding = node.attr_string("nearest_mode", opset10 ? "floor" : "round_prefer_floor");
  std::vector<AxisMap> maps = axis_maps(g, node, x);
  std::vector<size_t> interpolated;  // linear axes that are not the identity
  for (size_t d = 0; d < maps.size(); ++d) {
    if (mode == "linear" && !maps[d].identity)
      interpolated.push_back(d);
  }
  TT_USER_CHECK(interpolated.size() <= 3)
      << node.describe() << ": linear resize of more than 3 axes is not supported";
  return te::compute(
      out.shape,
      [&](const Vars& v) {
        std::vector<ir::Expr> base;
        std::vector<ir::Expr> lambda(maps.size());
        std::vector<ir::Expr> next(maps.size());
        for (size_t d = 0; d < maps.size(); ++d) {
          const AxisMap& a = maps[d];
          if (a.identity) {
            base.push_back(v[d]);
            continue;
          }
          ir::Expr c = source_coordinate(transform, a, v[d]);
          if (mode == "nearest") {
            base.push_back(nearest_index(rounding, c, a.in));
            continue;
          }
          ir::Expr fl = ir::floor(c);
          ir::Expr i0 = to_int(fl);
          base.push_back(clamp_index(i0, a.in));
          next[d] = clamp_index(i0 + ir::Expr(1), a.in);
          lambda[d] = c - fl;
        }
        // The sum over the 2^k corners of the interpolated axes, each weighted by the product
        // of its axes' (1 - lambda) or lambda.
        ir::Expr sum;
        for (size_t corner = 0; corner < (size_t{1} << interpolated.size()); ++corner) {
          std::vector<ir::Expr> ix = base;
          ir::Expr w;
          for (size_t k = 0; k < interpolated.size(); ++k) {
            size_t d = interpolated[k];
            bool upper = (corner >> k) & 1;
            if (upper)
              ix[d] = next[d];
            ir::Expr wd = upper ? lambda[d] : f32(1) - lambda[d];
            w = w.defined() ? w * wd : wd;
          }
          ir::Expr term = !w.defined()                           ? x(ix)
                          : x.dtype() == ir::DataType::float32() ? x(ix) * w
                                                                 : x(ix) * ir::cast(x.dtype(), w);
          sum = sum.defined() ? sum + term : term;
        }
        return sum;
      },
      name, "injective");
}

}  // namespace tensortune::graph::detail

// SPDX-License-Identifier: Apache-2.0
// Graph nodes as tensor expressions: the dispatch by op class, views, and the contractions (Conv,
// Gemm, MatMul). Element-wise ops, the other anchors and the data movement ops live in the other
// op_lowering_*.cpp files. Shapes come from the graph (shape inference) and are checked against
// te's.
#include "graph/op_lowering.h"

#include "graph/op_util.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <cmath>
#include <set>

namespace tensortune::graph::detail {
namespace {

using Vars = std::vector<ir::Var>;

/// out[v] = in[...] for a row-major reinterpretation of the same elements.
te::Tensor view(const Graph& g, const Node& node, const te::Tensor& in, const std::string& name) {
  const Value& out = g.value(node.outputs[0]);
  TT_USER_CHECK(numel_of(out.shape) == numel_of(in.shape()))
      << node.describe() << ": cannot view " << in.shape().size() << "-D input of "
      << numel_of(in.shape()) << " elements as " << out.describe();
  return te::compute(
      out.shape,
      [&](const Vars& v) {
        ir::Expr flat = idx(0);
        for (size_t d = 0; d < v.size(); ++d) {
          flat = flat * idx(out.shape[d]) + v[d];
        }
        std::vector<ir::Expr> r(in.shape().size());
        int64_t stride = 1;
        for (size_t d = in.shape().size(); d-- > 0;) {
          ir::Expr q = stride == 1 ? flat : flat / idx(stride);
          r[d] = d == 0 ? q : q % idx(in.shape()[d]);
          stride *= in.shape()[d];
        }
        return in(r);
      },
      name, "injective");
}

te::Tensor add_bias(const te::Tensor& x,
                    const te::Tensor& bias,
                    size_t axis,
                    const std::string& name) {
  return te::compute(
      x.shape(),
      [&](const Vars& v) {
        std::vector<ir::Expr> all(v.begin(), v.end());
        std::vector<ir::Expr> b = {v[axis]};
        if (bias.ndim() == 2)
          b = broadcast_indices(bias.shape(), x.shape(), v);
        return x(all) + bias(b);
      },
      name, "elemwise");
}

te::Conv2dParams conv_params(const Node& node,
                             const std::vector<int64_t>& kernel,
                             bool* explicit_pad,
                             std::vector<int64_t>* pads) {
  std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  TT_USER_CHECK(auto_pad == "NOTSET" || auto_pad == "VALID")
      << node.describe() << ": auto_pad '" << auto_pad << "' is not supported (use explicit pads)";
  *pads = node.attr_ints("pads", {0, 0, 0, 0});
  std::vector<int64_t> strides = node.attr_ints("strides", {1, 1});
  std::vector<int64_t> dil = node.attr_ints("dilations", {1, 1});
  TT_USER_CHECK(kernel.size() == 2 && pads->size() == 4 && strides.size() == 2 && dil.size() == 2)
      << node.describe() << ": only 2-D windows are supported";
  te::Conv2dParams p;
  p.stride_h = strides[0];
  p.stride_w = strides[1];
  p.dilation_h = dil[0];
  p.dilation_w = dil[1];
  p.groups = node.attr_int("group", 1);
  *explicit_pad = (*pads)[0] != (*pads)[2] || (*pads)[1] != (*pads)[3];
  if (!*explicit_pad) {
    p.pad_h = (*pads)[0];
    p.pad_w = (*pads)[1];
  }
  return p;
}

te::Tensor conv(const Node& node,
                const std::function<te::Tensor(size_t)>& input,
                const std::string& name,
                int64_t winograd) {
  te::Tensor x = input(0);
  te::Tensor w = input(1);
  TT_USER_CHECK(x.ndim() == 4 && w.ndim() == 4)
      << node.describe() << ": only 2-D convolution (4-D NCHW input, OIHW weight) is supported";
  bool explicit_pad = false;
  std::vector<int64_t> pads;
  te::Conv2dParams p = conv_params(
      node, node.attr_ints("kernel_shape", {w.shape()[2], w.shape()[3]}), &explicit_pad, &pads);
  if (explicit_pad) {
    x = te::pad(x, {0, 0, pads[0], pads[1]}, {0, 0, pads[2], pads[3]}, 0.0, name + "_pad");
  }
  bool depthwise =
      p.groups > 1 && p.groups == x.shape()[1] && w.shape()[0] == p.groups && w.shape()[1] == 1;
  std::string cname = node.inputs.size() > 2 && !node.inputs[2].empty() ? name + "_conv" : name;
  te::Tensor y = depthwise  ? te::depthwise_conv2d_nchw(x, w, p, cname)
                 : winograd ? te::conv2d_winograd_nchw(x, w, p.pad_h, winograd, cname)
                            : te::conv2d_nchw(x, w, p, cname);
  if (cname != name) {
    y = add_bias(y, input(2), 1, name);
  }
  return y;
}

te::Tensor gemm(const Graph& g,
                const Node& node,
                const std::function<te::Tensor(size_t)>& input,
                const std::string& name) {
  te::Tensor a = input(0);
  te::Tensor b = input(1);
  bool ta = node.attr_int("transA", 0) != 0;
  bool tb = node.attr_int("transB", 0) != 0;
  double alpha = node.attr_float("alpha", 1.0);
  double beta = node.attr_float("beta", 1.0);
  bool has_c = node.inputs.size() > 2 && !node.inputs[2].empty() && beta != 0;
  std::string pname = has_c ? name + "_mm" : name;
  te::Tensor y;
  if (!ta && alpha == 1.0) {
    y = tb ? te::dense(a, b, pname) : te::matmul(a, b, false, pname);
  } else {
    const Value& out = g.value(node.outputs[0]);
    int64_t k = ta ? a.shape()[0] : a.shape()[1];
    ir::IterVar rk = te::reduce_axis(k, "rk");
    y = te::compute(
        out.shape,
        [&](const Vars& v) {
          ir::Expr av = ta ? a(rk.var, v[0]) : a(v[0], rk.var);
          ir::Expr bv = tb ? b(v[1], rk.var) : b(rk.var, v[1]);
          return te::sum(av * bv * ir::make_const(out.dtype, alpha), {rk});
        },
        pname, "matmul");
  }
  if (!has_c)
    return y;
  const Value& cv = g.value(node.inputs[2]);
  return te::compute(
      y.shape(),
      [&](const Vars& v) {
        ir::Expr c = input_is_parameter(g, node, 2)
                         ? ir::make_const(cv.dtype, constant_scalar(cv))
                         : input(2)(broadcast_indices(cv.shape, y.shape(), v));
        if (beta != 1.0)
          c = c * ir::make_const(cv.dtype, beta);
        return y(std::vector<ir::Expr>(v.begin(), v.end())) + c;
      },
      name, "elemwise");
}

/// MatMul with numpy's rules: batch dimensions broadcast, and a 1-D operand is a row (a) or a
/// column (b) whose dimension the output drops.
te::Tensor matmul_nd(const Graph& g,
                     const Node& node,
                     const std::function<te::Tensor(size_t)>& input,
                     const std::string& name) {
  te::Tensor a = input(0);
  te::Tensor b = input(1);
  if (a.ndim() == 2 && b.ndim() == 2)
    return te::matmul(a, b, false, name);
  const Value& out = g.value(node.outputs[0]);
  bool a_row = a.ndim() == 1, b_column = b.ndim() == 1;
  // The output's batch rank: what precedes its M (absent for a row) and N (absent for a column).
  size_t batch = out.shape.size() - (a_row ? 0 : 1) - (b_column ? 0 : 1);
  ir::IterVar rk = te::reduce_axis(a.shape().back(), "rk");
  return te::compute(
      out.shape,
      [&](const Vars& v) {
        std::vector<int64_t> out_batch(out.shape.begin(),
                                       out.shape.begin() + static_cast<std::ptrdiff_t>(batch));
        Vars bv(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(batch));
        auto operand_of = [&](const te::Tensor& t, bool is_a) {
          if (t.ndim() == 1)
            return t(std::vector<ir::Expr>{rk.var});
          std::vector<int64_t> t_batch(t.shape().begin(), t.shape().end() - 2);
          std::vector<ir::Expr> ix = broadcast_indices(t_batch, out_batch, bv);
          ix.push_back(is_a ? ir::Expr(v[batch]) : ir::Expr(rk.var));
          ix.push_back(is_a ? ir::Expr(rk.var) : ir::Expr(v.back()));
          return t(ix);
        };
        return te::sum(operand_of(a, true) * operand_of(b, false), {rk});
      },
      name, "batch_matmul");
}

}  // namespace

OpClass op_class(const std::string& op) {
  static const std::set<std::string> elementwise = elementwise_ops();
  static const std::set<std::string> views = {"Reshape", "Flatten", "Squeeze", "Unsqueeze"};
  if (elementwise.count(op))
    return OpClass::Elementwise;
  if (views.count(op))
    return OpClass::View;
  if (op == "Shape")
    return OpClass::ShapeOf;
  return OpClass::Anchor;
}

bool input_is_parameter(const Graph& graph, const Node& node, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i].empty())
    return true;
  const Value& v = graph.value(node.inputs[i]);
  OpClass c = op_class(node.op);
  if (c == OpClass::View)
    return i > 0;  // the target shape / axes
  // Shapes, axes, pads, scales, repeats and bounds are read at lowering time.
  static const std::set<std::string> parameters_after_first = {
      "Clip",      "Pad",    "ReduceMax", "ReduceMean", "ReduceMin",
      "ReduceSum", "Resize", "Slice",     "Tile"};
  if (parameters_after_first.count(node.op))
    return i > 0;
  if (node.op == "Gather" || node.op == "Expand")
    return i == 1 || (node.op == "Expand" && v.is_constant() && v.numel() == 1);
  if (node.op == "Gemm")
    return v.is_constant() && v.numel() == 1 && v.dtype.is_float();
  // A one-element constant of an element-wise node is an immediate (a Where's -inf, a bool).
  return c == OpClass::Elementwise && v.is_constant() && v.numel() == 1;
}

int64_t winograd_tile(const Graph& graph, const Node& node) {
  if (node.op != "Conv" || node.inputs.size() < 2) {
    return 0;
  }
  const Value& x = graph.value(node.inputs[0]);
  const Value& w = graph.value(node.inputs[1]);
  const Value& out = graph.value(node.outputs[0]);
  if (x.shape.size() != 4 || w.shape.size() != 4 || !x.dtype.is_float() || x.dtype.bits() != 32 ||
      w.shape[2] != 3 || w.shape[3] != 3 || node.attr_int("group", 1) != 1 ||
      node.attr_string("auto_pad", "NOTSET") != "NOTSET") {
    return 0;
  }
  const std::vector<int64_t> ones{1, 1};
  const std::vector<int64_t> pads = node.attr_ints("pads", {0, 0, 0, 0});
  if (node.attr_ints("strides", ones) != ones || node.attr_ints("dilations", ones) != ones ||
      pads.size() != 4 || pads[0] != pads[1] || pads[0] != pads[2] || pads[0] != pads[3]) {
    return 0;
  }
  // F(4x4, 3x3) does a quarter of the multiplications; on maps under 8 wide its partial tiles
  // waste most of that, and F(2x2, 3x3) wastes less.
  return std::min(out.shape[2], out.shape[3]) >= 8 ? 4 : 2;
}

te::Tensor lower_node(const Graph& graph,
                      const Node& node,
                      const std::function<te::Tensor(size_t)>& input,
                      const std::string& name,
                      int64_t winograd) {
  const std::string& op = node.op;
  const Value& out = graph.value(node.outputs[0]);
  TT_USER_CHECK(!out.shape.empty() || op_class(op) == OpClass::ShapeOf)
      << node.describe() << ": its output '" << out.name
      << "' is a scalar (rank 0), which tensortune's kernels do not produce (keep a dimension, "
         "e.g. keepdims=1)";
  te::Tensor y;
  switch (op_class(op)) {
    case OpClass::Elementwise:
      y = lower_elementwise(graph, node, input, name);
      break;
    case OpClass::View:
      y = view(graph, node, input(0), name);
      break;
    case OpClass::ShapeOf:
      TT_CHECK(false) << node.describe() << " reached lowering (constant folding runs first)";
      break;
    case OpClass::Anchor:
      if (op == "Conv") {
        y = conv(node, input, name, winograd);
      } else if (op == "Gemm") {
        y = gemm(graph, node, input, name);
      } else if (op == "MatMul") {
        y = matmul_nd(graph, node, input, name);
      } else {
        y = lower_anchor(graph, node, input, name);
      }
      break;
  }
  TT_USER_CHECK(y.shape() == out.shape && y.dtype() == out.dtype)
      << node.describe() << ": computes " << y.dtype().to_string() << shape_text(y.shape())
      << " but the model declares " << out.describe();
  return y;
}

}  // namespace tensortune::graph::detail

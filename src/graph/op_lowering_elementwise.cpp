// SPDX-License-Identifier: Apache-2.0
// Element-wise nodes as tensor expressions, with ONNX broadcasting: unary activations, binary
// arithmetic and comparisons, n-ary Min/Max/Sum, Where and Expand. ONNX's bool tensors are
// uint8 0 or 1 here (the importer maps them so): comparisons, Not, And and Or write that, and
// Where reads any non-zero condition as true.
#include "graph/op_lowering.h"
#include "graph/op_util.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"

#include <cmath>

namespace tensortune::graph::detail {

std::vector<ir::Expr> broadcast_indices(const std::vector<int64_t>& in,
                                        const std::vector<int64_t>& out,
                                        const std::vector<ir::Var>& v) {
  std::vector<ir::Expr> r;
  size_t offset = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    r.push_back(in[d] == 1 && out[d + offset] != 1 ? ir::Expr(0) : ir::Expr(v[d + offset]));
  }
  return r;
}

namespace {

using Vars = std::vector<ir::Var>;

/// Operand `i` of an element-wise node at output index `v`: an immediate for a one-element
/// constant, else a broadcast read of the input tensor.
ir::Expr operand(const Graph& g,
                 const Node& node,
                 size_t i,
                 const std::function<te::Tensor(size_t)>& input,
                 const std::vector<int64_t>& out,
                 const Vars& v) {
  const Value& val = g.value(node.inputs[i]);
  if (input_is_parameter(g, node, i)) {
    return ir::make_const(val.dtype, constant_scalar(val));
  }
  te::Tensor t = input(i);
  return t(broadcast_indices(t.shape(), out, v));
}

/// A condition as ONNX's bool: uint8 1 or 0.
ir::Expr as_flag(const ir::Expr& condition) {
  ir::DataType u8(ir::DataType::Code::UInt, 8);
  return ir::select(condition, ir::make_const(u8, 1.0), ir::make_const(u8, 0.0));
}

ir::Expr clip(const Graph& g, const Node& node, ir::Expr r, ir::DataType t) {
  auto c = [&](double value) {
    return ir::make_const(t, value);
  };
  bool has_max = node.inputs.size() > 2 && !node.inputs[2].empty();
  bool has_min = node.inputs.size() > 1 && !node.inputs[1].empty();
  if (has_max)
    r = ir::min(r, c(constant_scalar(g.value(node.inputs[2]))));
  if (has_min)
    r = ir::max(r, c(constant_scalar(g.value(node.inputs[1]))));
  if (node.has_attr("max"))
    r = ir::min(r, c(node.attr_float("max", 0)));
  if (node.has_attr("min"))
    r = ir::max(r, c(node.attr_float("min", 0)));
  return r;
}

ir::Expr unary(const Graph& g, const Node& node, const ir::Expr& x, ir::DataType t) {
  const std::string& op = node.op;
  auto c = [&](double value) {
    return ir::make_const(t, value);
  };
  if (op == "Relu")
    return ir::max(x, c(0));
  if (op == "Sigmoid")
    return c(1) / (c(1) + ir::exp(c(0) - x));
  if (op == "Tanh")
    return ir::tanh(x);
  if (op == "Erf")
    return ir::erf(x);
  if (op == "Sqrt")
    return ir::sqrt(x);
  if (op == "Exp")
    return ir::exp(x);
  if (op == "Log")
    return ir::log(x);
  if (op == "Neg")
    return c(0) - x;
  if (op == "Softplus")  // log(1 + e^x), as log1p(e^-|x|) + max(x, 0) to not overflow
    return ir::log(c(1) + ir::exp(c(0) - ir::abs(x))) + ir::max(x, c(0));
  if (op == "Elu") {
    ir::Expr alpha = c(node.attr_float("alpha", 1.0));
    return ir::select(x < c(0), alpha * (ir::exp(x) - c(1)), x);
  }
  if (op == "Abs")
    return ir::abs(x);
  if (op == "Reciprocal")
    return c(1) / x;
  if (op == "Not")
    return as_flag(x == c(0));
  if (op == "Identity" || op == "Dropout" || op == "Expand")
    return x;
  if (op == "Cast")
    return ir::cast(t, x);
  if (op == "LeakyRelu")
    return ir::select(x < c(0), x * c(node.attr_float("alpha", 0.01)), x);
  if (op == "HardSigmoid") {
    ir::Expr y = x * c(node.attr_float("alpha", 0.2)) + c(node.attr_float("beta", 0.5));
    return ir::max(ir::min(y, c(1)), c(0));
  }
  if (op == "HardSwish")
    return x * ir::max(ir::min(x * c(1.0 / 6.0) + c(0.5), c(1)), c(0));
  if (op == "Gelu") {
    if (node.attr_string("approximate", "none") == "tanh") {
      ir::Expr inner = c(std::sqrt(2.0 / M_PI)) * (x + c(0.044715) * x * x * x);
      return c(0.5) * x * (c(1) + ir::tanh(inner));
    }
    return c(0.5) * x * (c(1) + ir::erf(x * c(1.0 / std::sqrt(2.0))));
  }
  TT_CHECK(op == "Clip") << "unary: " << op;
  return clip(g, node, x, t);
}

ir::Expr power(const Graph& g, const Node& node, const ir::Expr& a, const ir::Expr& b) {
  if (input_is_parameter(g, node, 1)) {
    double e = constant_scalar(g.value(node.inputs[1]));
    if (e == 1)
      return a;
    if (e == 2)
      return a * a;
    if (e == 3)
      return a * a * a;
    if (e == 0.5)
      return ir::sqrt(a);
    return ir::pow(a, ir::make_const(a.type(), e));
  }
  return ir::pow(a, b.type() == a.type() ? b : ir::cast(a.type(), b));
}

ir::Expr binary(const Graph& g, const Node& node, const ir::Expr& a, const ir::Expr& b) {
  const std::string& op = node.op;
  if (op == "Add" || op == "Sum")
    return a + b;
  if (op == "Sub")
    return a - b;
  if (op == "Mul")
    return a * b;
  if (op == "Div")
    return a / b;
  if (op == "Min")
    return ir::min(a, b);
  if (op == "Max")
    return ir::max(a, b);
  if (op == "Equal")
    return as_flag(a == b);
  if (op == "Less")
    return as_flag(a < b);
  if (op == "LessOrEqual")
    return as_flag(a <= b);
  if (op == "Greater")
    return as_flag(a > b);
  if (op == "GreaterOrEqual")
    return as_flag(a >= b);
  ir::Expr zero = ir::make_const(a.type(), 0.0);
  if (op == "And")
    return as_flag(a != zero && b != zero);
  if (op == "Or")
    return as_flag(a != zero || b != zero);
  if (op == "PRelu")
    return ir::select(a < ir::make_const(a.type(), 0.0), a * b, a);
  TT_CHECK(op == "Pow") << "binary: " << op;
  return power(g, node, a, b);
}

bool is_binary(const std::string& op) {
  static const std::set<std::string> ops = {
      "Add",   "Sub",  "Mul",         "Div",     "Pow",
      "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual",
      "And",   "Or",   "PRelu"};
  return ops.count(op) != 0;
}

}  // namespace

std::set<std::string> elementwise_ops() {
  return {"Abs",         "Add",       "And",      "Cast",      "Clip",
          "Div",         "Dropout",   "Elu",      "Equal",     "Erf",
          "Exp",         "Expand",    "Gelu",     "Greater",   "GreaterOrEqual",
          "HardSigmoid", "HardSwish", "Identity", "LeakyRelu", "Less",
          "LessOrEqual", "Log",       "Max",      "Min",       "Mul",
          "Neg",         "Not",       "Or",       "Pow",       "PRelu",
          "Reciprocal",  "Relu",      "Sigmoid",  "Softplus",  "Sqrt",
          "Sub",         "Sum",       "Tanh",     "Where"};
}

te::Tensor lower_elementwise(const Graph& g,
                             const Node& node,
                             const std::function<te::Tensor(size_t)>& input,
                             const std::string& name) {
  const Value& out = g.value(node.outputs[0]);
  const std::string& op = node.op;
  bool nary = op == "Min" || op == "Max" || op == "Sum";
  return te::compute(
      out.shape,
      [&](const Vars& v) {
        ir::Expr a = operand(g, node, 0, input, out.shape, v);
        if (op == "Where") {
          return ir::select(a != ir::make_const(a.type(), 0.0),
                            operand(g, node, 1, input, out.shape, v),
                            operand(g, node, 2, input, out.shape, v));
        }
        if (nary) {
          for (size_t i = 1; i < node.inputs.size(); ++i)
            a = binary(g, node, a, operand(g, node, i, input, out.shape, v));
          return a;
        }
        if (is_binary(op))
          return binary(g, node, a, operand(g, node, 1, input, out.shape, v));
        return unary(g, node, a, out.dtype);
      },
      name, "elemwise");
}

}  // namespace tensortune::graph::detail

// SPDX-License-Identifier: Apache-2.0
// The anchors that are not contractions: pooling, Softmax, LayerNormalization, the reductions,
// Transpose, Concat and Gather as tensor expressions; and the helpers of op_util.h.
#include "graph/op_util.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <cstring>
#include <sstream>

namespace tensortune::graph::detail {

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? "," : "") << shape[i];
  os << "]";
  return os.str();
}

double constant_scalar(const Value& value) {
  TT_USER_CHECK(value.is_constant() && value.numel() == 1)
      << "value '" << value.name << "' " << value.describe()
      << " must be a one-element constant here";
  return value.data->floats.empty() ? static_cast<double>(value.data->ints.at(0))
                                    : static_cast<double>(value.data->floats.at(0));
}

std::vector<int64_t> constant_ints(const Value& value) {
  TT_USER_CHECK(value.is_constant()) << "value '" << value.name << "' " << value.describe()
                                     << " must be a constant here (it is computed at run time)";
  if (!value.data->ints.empty() || value.data->floats.empty())
    return value.data->ints;
  std::vector<int64_t> r;
  for (float f : value.data->floats)
    r.push_back(static_cast<int64_t>(f));
  return r;
}

bool constant_bytes_supported(ir::DataType t) {
  return t == ir::DataType::float32() || t == ir::DataType::int64() || t == ir::DataType::int32() ||
         t == ir::DataType(ir::DataType::Code::Int, 8) ||
         t == ir::DataType(ir::DataType::Code::UInt, 8);
}

std::vector<uint8_t> constant_bytes(const Value& value) {
  TT_CHECK(value.is_constant() && constant_bytes_supported(value.dtype))
      << "value '" << value.name << "' " << value.describe() << " has no kernel layout";
  size_t n = static_cast<size_t>(value.numel());
  size_t per = static_cast<size_t>(value.dtype.bytes());
  std::vector<uint8_t> bytes(n * per);
  if (value.dtype == ir::DataType::float32()) {
    std::memcpy(bytes.data(), value.data->floats.data(), bytes.size());
    return bytes;
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t x = value.data->ints.at(i);
    std::memcpy(bytes.data() + i * per, &x, per);  // little-endian: the low bytes
  }
  return bytes;
}

int64_t normalize_axis(const Node& node, int64_t axis, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  TT_USER_CHECK(axis >= -r && axis < r)
      << node.describe() << ": axis " << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + r : axis;
}

namespace {

using Vars = std::vector<ir::Var>;
using InputFn = std::function<te::Tensor(size_t)>;

std::vector<ir::Expr> all(const Vars& v) {
  return std::vector<ir::Expr>(v.begin(), v.end());
}

te::Tensor pool(const Graph& g, const Node& node, const InputFn& input, const std::string& name) {
  te::Tensor x = input(0);
  TT_USER_CHECK(x.ndim() == 4) << node.describe() << ": only 2-D pooling of NCHW is supported";
  TT_USER_CHECK(node.attr_string("auto_pad", "NOTSET") == "NOTSET" ||
                node.attr_string("auto_pad", "NOTSET") == "VALID")
      << node.describe() << ": auto_pad is not supported (use explicit pads)";
  std::vector<int64_t> k = node.attr_ints("kernel_shape", {});
  std::vector<int64_t> pads = node.attr_ints("pads", {0, 0, 0, 0});
  std::vector<int64_t> s = node.attr_ints("strides", {1, 1});
  std::vector<int64_t> dil = node.attr_ints("dilations", {1, 1});
  TT_USER_CHECK(k.size() == 2 && pads.size() == 4 && s.size() == 2 && dil.size() == 2)
      << node.describe() << ": only 2-D windows are supported";
  if (node.attr_int("ceil_mode", 0) != 0 || pads[0] != pads[2] || pads[1] != pads[3])
    return pool_padded(g, node, x, k, pads, name);
  te::Conv2dParams p;
  p.stride_h = s[0], p.stride_w = s[1], p.pad_h = pads[0], p.pad_w = pads[1];
  p.dilation_h = dil[0], p.dilation_w = dil[1];
  bool is_max = node.op == "MaxPool";
  bool include_pad = node.attr_int("count_include_pad", 0) != 0;
  if (is_max || !include_pad || (p.pad_h == 0 && p.pad_w == 0)) {
    return te::pool2d_nchw(x, is_max ? te::PoolKind::Max : te::PoolKind::Avg, k[0], k[1], p, name);
  }
  // count_include_pad: the padding counts, so every window divides by kh * kw.
  te::Tensor padded =
      te::pad(x, {0, 0, p.pad_h, p.pad_w}, {0, 0, p.pad_h, p.pad_w}, 0.0, name + "_pad");
  const Value& out = g.value(node.outputs[0]);
  ir::IterVar ry = te::reduce_axis(k[0], "ry");
  ir::IterVar rx = te::reduce_axis(k[1], "rx");
  ir::Expr inv = ir::make_const(out.dtype, 1.0 / static_cast<double>(k[0] * k[1]));
  return te::compute(
      out.shape,
      [&](const Vars& v) {
        return te::sum(padded(v[0], v[1], v[2] * idx(s[0]) + ry.var * idx(dil[0]),
                              v[3] * idx(s[1]) + rx.var * idx(dil[1])) *
                           inv,
                       {ry, rx});
      },
      name, "pool");
}

/// ReduceMean, ReduceSum, ReduceMax or ReduceMin (by node.op; GlobalAveragePool is a mean,
/// GlobalMaxPool a max) over `axes` (every axis when empty).
te::Tensor reduce(const Graph& g,
                  const Node& node,
                  const te::Tensor& x,
                  std::vector<int64_t> axes,
                  const std::string& name) {
  const Value& out = g.value(node.outputs[0]);
  size_t rank = x.ndim();
  if (axes.empty()) {
    for (size_t d = 0; d < rank; ++d)
      axes.push_back(static_cast<int64_t>(d));
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes)
    reduced[static_cast<size_t>(normalize_axis(node, a, rank))] = true;
  bool keep = node.attr_int("keepdims", 1) != 0;
  std::vector<ir::IterVar> raxes;
  int64_t count = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      raxes.push_back(te::reduce_axis(x.shape()[d], "r" + std::to_string(d)));
      count *= x.shape()[d];
    }
  }
  ir::Expr inv = ir::make_const(out.dtype, 1.0 / static_cast<double>(count));
  const std::string& op = node.op;
  return te::compute(
      out.shape,
      [&](const Vars& v) {
        std::vector<ir::Expr> ix;
        size_t o = 0, r = 0;
        for (size_t d = 0; d < rank; ++d) {
          if (reduced[d]) {
            ix.push_back(raxes[r++].var);
            if (keep)
              ++o;
          } else {
            ix.push_back(v[o++]);
          }
        }
        if (op == "ReduceSum")
          return te::sum(x(ix), raxes);
        if (op == "ReduceMax" || op == "GlobalMaxPool")
          return te::max_reduce(x(ix), raxes);
        if (op == "ReduceMin")
          return te::min_reduce(x(ix), raxes);
        return te::sum(x(ix) * inv, raxes);
      },
      name, "reduction");
}

/// Softmax or log-softmax of `x` over any one axis (the operator library's softmax takes the
/// last): the maximum, the shifted exponentials and their sum, as stages of their own.
te::Tensor softmax_over(const te::Tensor& x, size_t axis, bool log, const std::string& name) {
  std::vector<int64_t> kept = x.shape();
  kept[axis] = 1;
  auto at = [&](const Vars& v, const ir::Expr& a) {
    std::vector<ir::Expr> ix = all(v);
    ix[axis] = a;
    return ix;
  };
  ir::IterVar rm = te::reduce_axis(x.shape()[axis], "rm");
  te::Tensor mx = te::compute(
      kept, [&](const Vars& v) { return te::max_reduce(x(at(v, rm.var)), {rm}); }, name + "_max",
      "reduction");
  te::Tensor e = te::compute(
      x.shape(), [&](const Vars& v) { return ir::exp(x(all(v)) - mx(at(v, idx(0)))); },
      name + "_exp", "elemwise");
  ir::IterVar rs = te::reduce_axis(x.shape()[axis], "rs");
  te::Tensor sum = te::compute(
      kept, [&](const Vars& v) { return te::sum(e(at(v, rs.var)), {rs}); }, name + "_sum",
      "reduction");
  return te::compute(
      x.shape(),
      [&](const Vars& v) {
        if (log)
          return x(all(v)) - mx(at(v, idx(0))) - ir::log(sum(at(v, idx(0))));
        return e(all(v)) / sum(at(v, idx(0)));
      },
      name, "elemwise");
}

te::Tensor concat(const Graph& g, const Node& node, const InputFn& input, const std::string& name) {
  const Value& out = g.value(node.outputs[0]);
  size_t axis =
      static_cast<size_t>(normalize_axis(node, node.attr_int("axis", 0), out.shape.size()));
  std::vector<te::Tensor> parts;
  for (size_t i = 0; i < node.inputs.size(); ++i)
    parts.push_back(input(i));
  return te::compute(
      out.shape,
      [&](const Vars& v) {
        // select(i < offset_1, part_0[i], select(i < offset_2, part_1[i - offset_1], ...)), each
        // index clamped so that every arm's read stays in bounds.
        std::vector<int64_t> offsets;
        int64_t off = 0;
        for (const te::Tensor& p : parts) {
          offsets.push_back(off);
          off += p.shape()[axis];
        }
        auto read = [&](size_t k) {
          std::vector<ir::Expr> ix = all(v);
          ir::Expr local = ir::Expr(v[axis]) - idx(offsets[k]);
          ix[axis] = ir::max(ir::min(local, idx(parts[k].shape()[axis] - 1)), idx(0));
          return parts[k](ix);
        };
        ir::Expr r = read(parts.size() - 1);
        for (size_t k = parts.size() - 1; k-- > 0;) {
          r = ir::select(ir::Expr(v[axis]) < idx(offsets[k + 1]), read(k), r);
        }
        return r;
      },
      name, "injective");
}

te::Tensor gather(const Graph& g, const Node& node, const InputFn& input, const std::string& name) {
  te::Tensor data = input(0);
  const Value& iv = g.value(node.inputs[1]);
  std::vector<int64_t> indices = constant_ints(iv);
  size_t axis = static_cast<size_t>(normalize_axis(node, node.attr_int("axis", 0), data.ndim()));
  int64_t extent = data.shape()[axis];
  for (int64_t& i : indices) {
    TT_USER_CHECK(i >= -extent && i < extent)
        << node.describe() << ": index " << i << " is out of range for extent " << extent;
    if (i < 0)
      i += extent;
  }
  TT_USER_CHECK(iv.shape.size() <= 1)
      << node.describe() << ": only scalar or 1-D constant indices are supported";
  const Value& out = g.value(node.outputs[0]);
  bool scalar = iv.shape.empty();
  return te::compute(
      out.shape,
      [&](const Vars& v) {
        std::vector<ir::Expr> ix;
        for (size_t d = 0; d < axis; ++d)
          ix.push_back(v[d]);
        size_t rest = axis;
        if (scalar) {
          ix.push_back(idx(indices[0]));
        } else {
          ir::Expr j = v[axis];
          ir::Expr sel = idx(indices.back());
          for (size_t k = indices.size() - 1; k-- > 0;) {
            sel = ir::select(j == idx(static_cast<int64_t>(k)), idx(indices[k]), sel);
          }
          ix.push_back(sel);
          rest = axis + 1;
        }
        for (size_t d = axis + 1; d < data.ndim(); ++d)
          ix.push_back(v[rest + d - axis - 1]);
        return data(ix);
      },
      name, "injective");
}

}  // namespace

te::Tensor lower_anchor(const Graph& g,
                        const Node& node,
                        const InputFn& input,
                        const std::string& name) {
  const std::string& op = node.op;
  if (op == "MaxPool" || op == "AveragePool")
    return pool(g, node, input, name);
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    te::Tensor x = input(0);
    TT_USER_CHECK(x.ndim() == 4) << node.describe() << ": needs a 4-D NCHW input";
    return reduce(g, node, x, {2, 3}, name);
  }
  if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin") {
    te::Tensor x = input(0);
    // Axes are an attribute, or an input from opset 13 (ReduceSum) and 18 (the others).
    std::vector<int64_t> axes = node.attr_ints("axes", {});
    if (node.inputs.size() > 1 && !node.inputs[1].empty()) {
      axes = constant_ints(g.value(node.inputs[1]));
    }
    if (axes.empty() && node.attr_int("noop_with_empty_axes", 0) != 0) {
      return te::compute(
          x.shape(), [&](const Vars& v) { return x(all(v)); }, name, "injective");
    }
    return reduce(g, node, x, axes, name);
  }
  if (op == "Softmax" || op == "LogSoftmax") {
    te::Tensor x = input(0);
    int64_t axis = normalize_axis(node, node.attr_int("axis", -1), x.ndim());
    if (op == "Softmax" && axis == static_cast<int64_t>(x.ndim()) - 1)
      return te::softmax(x, name);
    return softmax_over(x, static_cast<size_t>(axis), op == "LogSoftmax", name);
  }
  if (op == "LayerNormalization") {
    te::Tensor x = input(0);
    int64_t axis = normalize_axis(node, node.attr_int("axis", -1), x.ndim());
    TT_USER_CHECK(axis == static_cast<int64_t>(x.ndim()) - 1)
        << node.describe() << ": layer normalization over axes from " << axis
        << " is not supported (only the last axis)";
    te::Tensor gamma = input(1);
    te::Tensor beta;
    if (node.inputs.size() > 2 && !node.inputs[2].empty()) {
      beta = input(2);
    } else {
      beta = te::compute(
          {x.shape().back()}, [&](const Vars&) { return ir::make_const(x.dtype(), 0.0); },
          name + "_zero", "injective");
    }
    return te::layer_norm(x, gamma, beta, node.attr_float("epsilon", 1e-5), name);
  }
  if (op == "Transpose") {
    te::Tensor x = input(0);
    std::vector<int64_t> perm = node.attr_ints("perm", {});
    if (perm.empty()) {
      for (size_t d = x.ndim(); d-- > 0;)
        perm.push_back(static_cast<int64_t>(d));
    }
    return te::transpose(x, std::vector<int>(perm.begin(), perm.end()), name);
  }
  if (op == "Concat")
    return concat(g, node, input, name);
  if (op == "Gather")
    return gather(g, node, input, name);
  te::Tensor moved = lower_data_movement(g, node, input, name);
  if (moved.defined())
    return moved;
  TT_USER_CHECK(false) << node.describe() << ": op '" << op << "' cannot be compiled";
  return {};
}

}  // namespace tensortune::graph::detail

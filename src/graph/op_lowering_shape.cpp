// SPDX-License-Identifier: Apache-2.0
// The data movement anchors: Slice (Split is imported as Slices), Pad, Tile, DepthToSpace,
// SpaceToDepth and Resize (nearest and linear). Each output element reads input elements at
// indices computed from its own; shapes, pads and scales are constants read here.
#include "graph/op_util.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"

#include <algorithm>

namespace tensortune::graph::detail {
namespace {

using Vars = std::vector<ir::Var>;
using InputFn = std::function<te::Tensor(size_t)>;

bool has_input(const Node& node, size_t i) {
  return node.inputs.size() > i && !node.inputs[i].empty();
}

/// Integer operand `i` (a constant input), else the attribute `key` (older opsets), else
/// `fallback`.
std::vector<int64_t> ints_of(const Graph& g,
                             const Node& node,
                             size_t i,
                             const std::string& key,
                             const std::vector<int64_t>& fallback) {
  if (has_input(node, i))
    return constant_ints(g.value(node.inputs[i]));
  return node.attr_ints(key, fallback);
}

te::Tensor slice(const Graph& g, const Node& node, const InputFn& input, const std::string& name) {
  te::Tensor x = input(0);
  const Value& out = g.value(node.outputs[0]);
  std::vector<int64_t> starts = ints_of(g, node, 1, "starts", {});
  std::vector<int64_t> ends = ints_of(g, node, 2, "ends", {});
  std::vector<int64_t> axes = ints_of(g, node, 3, "axes", {});
  std::vector<int64_t> steps = ints_of(g, node, 4, "steps", {});
  if (axes.empty()) {
    for (size_t d = 0; d < starts.size(); ++d)
      axes.push_back(static_cast<int64_t>(d));
  }
  if (steps.empty())
    steps.assign(starts.size(), 1);
  TT_USER_CHECK(starts.size() == ends.size() && starts.size() == axes.size() &&
                starts.size() == steps.size())
      << node.describe() << ": starts, ends, axes and steps differ in length";
  std::vector<int64_t> first(x.ndim(), 0), step(x.ndim(), 1);
  for (size_t k = 0; k < axes.size(); ++k) {
    size_t d = static_cast<size_t>(normalize_axis(node, axes[k], x.ndim()));
    int64_t n = x.shape()[d];
    TT_USER_CHECK(steps[k] != 0) << node.describe() << ": a step of 0";
    int64_t s = starts[k] < 0 ? starts[k] + n : starts[k];
    // ONNX clamps the start to [0, n] going forward and to [0, n - 1] going backward.
    first[d] = std::clamp<int64_t>(s, 0, steps[k] > 0 ? n : n - 1);
    step[d] = steps[k];
  }
  return te::compute(
      out.shape,
      [&](const Vars& v) {
        std::vector<ir::Expr> ix;
        for (size_t d = 0; d < v.size(); ++d) {
          ir::Expr e = step[d] == 1 ? ir::Expr(v[d]) : v[d] * idx(step[d]);
          ix.push_back(first[d] == 0 ? e : e + idx(first[d]));
        }
        return x(ix);
      },
      name, "injective");
}

/// The index of input dimension `d` (extent n) read at padded position p (before: the pad in
/// front), for edge and reflect modes; constant mode reads a clamped index and selects.
ir::Expr padded_index(const std::string& mode, const ir::Expr& p, int64_t before, int64_t n) {
  ir::Expr s = before == 0 ? p : p - idx(before);
  if (mode == "reflect") {
    // Reflection about the first and last elements (pads < n, which ONNX requires).
    s = ir::select(s < idx(0), idx(0) - s, s);
    s = ir::select(s >= idx(n), idx(2 * (n - 1)) - s, s);
  }
  return ir::max(ir::min(s, idx(n - 1)), idx(0));
}

te::Tensor pad(const Graph& g, const Node& node, const InputFn& input, const std::string& name) {
  te::Tensor x = input(0);
  const Value& out = g.value(node.outputs[0]);
  size_t rank = x.ndim();
  std::vector<int64_t> pads = ints_of(g, node, 1, "pads", {});
  std::vector<int64_t> axes = ints_of(g, node, 3, "axes", {});
  if (axes.empty()) {
    for (size_t d = 0; d < rank; ++d)
      axes.push_back(static_cast<int64_t>(d));
  }
  TT_USER_CHECK(pads.size() == 2 * axes.size())
      << node.describe() << ": " << pads.size() << " pads for " << axes.size() << " axes";
  std::vector<int64_t> before(rank, 0);
  for (size_t k = 0; k < axes.size(); ++k)
    before[static_cast<size_t>(normalize_axis(node, axes[k], rank))] = pads[k];
  std::string mode = node.attr_string("mode", "constant");
  TT_USER_CHECK(mode == "constant" || mode == "reflect" || mode == "edge")
      << node.describe() << ": pad mode '" << mode << "' is not supported";
  for (size_t k = 0; k < axes.size() && mode == "reflect"; ++k) {
    int64_t n = x.shape()[static_cast<size_t>(normalize_axis(node, axes[k], rank))];
    TT_USER_CHECK(pads[k] < n && pads[k + axes.size()] < n)
        << node.describe() << ": reflect pads must be smaller than the padded extent " << n;
  }
  double value =
      has_input(node, 2) ? constant_scalar(g.value(node.inputs[2])) : node.attr_float("value", 0.0);
  return te::compute(
      out.shape,
      [&](const Vars& v) {
        std::vector<ir::Expr> ix;
        ir::Expr inside;
        for (size_t d = 0; d < rank; ++d) {
          ix.push_back(padded_index(mode, v[d], before[d], x.shape()[d]));
          if (mode != "constant" || (out.shape[d] == x.shape()[d] && before[d] == 0))
            continue;
          ir::Expr s = ir::Expr(v[d]) - idx(before[d]);
          ir::Expr ok = s >= idx(0) && s < idx(x.shape()[d]);
          inside = inside.defined() ? (inside && ok) : ok;
        }
        if (!inside.defined())
          return x(ix);
        return ir::select(inside, x(ix), ir::make_const(out.dtype, value));
      },
      name, "injective");
}

te::Tensor tile(const Graph& g, const Node& node, const InputFn& input, const std::string& name) {
  te::Tensor x = input(0);
  const Value& out = g.value(node.outputs[0]);
  return te::compute(
      out.shape,
      [&](const Vars& v) {
        std::vector<ir::Expr> ix;
        for (size_t d = 0; d < v.size(); ++d)
          ix.push_back(out.shape[d] == x.shape()[d] ? ir::Expr(v[d]) : v[d] % idx(x.shape()[d]));
        return x(ix);
      },
      name, "injective");
}

/// DepthToSpace (DCR or CRD order) and SpaceToDepth on NCHW.
te::Tensor depth_space(const Graph& g,
                       const Node& node,
                       const InputFn& input,
                       const std::string& name) {
  te::Tensor x = input(0);
  TT_USER_CHECK(x.ndim() == 4) << node.describe() << ": needs a 4-D NCHW input";
  const Value& out = g.value(node.outputs[0]);
  int64_t b = node.attr_int("blocksize", 0);
  TT_USER_CHECK(b >= 1) << node.describe() << ": blocksize " << b << " (must be >= 1)";
  std::string mode = node.attr_string("mode", "DCR");
  TT_USER_CHECK(mode == "DCR" || mode == "CRD")
      << node.describe() << ": mode '" << mode << "' is not supported";
  bool to_space = node.op == "DepthToSpace";
  return te::compute(
      out.shape,
      [&](const Vars& v) {
        if (to_space) {
          int64_t c_out = out.shape[1];
          ir::Expr i = v[2] % idx(b), j = v[3] % idx(b);
          ir::Expr c = mode == "DCR" ? (i * idx(b) + j) * idx(c_out) + v[1]
                                     : (ir::Expr(v[1]) * idx(b) + i) * idx(b) + j;
          return x(v[0], c, v[2] / idx(b), v[3] / idx(b));
        }
        int64_t c_in = x.shape()[1];
        ir::Expr c = v[1] % idx(c_in);
        ir::Expr j = (v[1] / idx(c_in)) % idx(b);
        ir::Expr i = v[1] / idx(c_in * b);
        return x(v[0], c, v[2] * idx(b) + i, v[3] * idx(b) + j);
      },
      name, "injective");
}

}  // namespace

te::Tensor lower_data_movement(const Graph& g,
                               const Node& node,
                               const InputFn& input,
                               const std::string& name) {
  const std::string& op = node.op;
  if (op == "Slice")
    return slice(g, node, input, name);
  if (op == "Pad")
    return pad(g, node, input, name);
  if (op == "Tile")
    return tile(g, node, input, name);
  if (op == "DepthToSpace" || op == "SpaceToDepth")
    return depth_space(g, node, input, name);
  if (op == "Resize")
    return lower_resize(g, node, input, name);
  return {};
}

}  // namespace tensortune::graph::detail

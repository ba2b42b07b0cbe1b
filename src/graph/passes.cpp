// SPDX-License-Identifier: Apache-2.0
// Graph passes: constant folding (direct for shape arithmetic, a compiled kernel for the rest),
// batch-norm folding, identity removal, dead-node elimination.
#include "tensortune/graph/passes.h"

#include "graph/op_lowering.h"
#include "graph/op_util.h"
#include "tensortune/driver/compile.h"
#include "tensortune/graph/partition.h"
#include "tensortune/support/error.h"
#include "tensortune/target/target.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <sstream>

namespace tensortune::graph {

std::string PassReport::to_string() const {
  std::ostringstream os;
  os << "folded " << folded_constants << " constant node(s), " << folded_batch_norms
     << " batch norm(s) into convolutions, " << batch_norms_to_affine
     << " batch norm(s) into scale+shift; removed " << removed_identities
     << " identity node(s) and " << removed_dead << " dead node(s)";
  if (transposed_weights > 0) {
    os << "; stored " << transposed_weights << " Gemm weight(s) as [K, N]";
  }
  return os.str();
}

namespace {

using detail::numel_of;

Value constant_value(const Value& like, ConstantData data) {
  Value v = like;
  v.data = std::make_shared<const ConstantData>(std::move(data));
  return v;
}

/// Integer shape arithmetic folded without a kernel; false when `node` is not such a case. Its
/// inputs are all constants, or it is a Shape.
bool fold_directly(Graph& g, const Node& node) {
  const Value& out = g.value(node.outputs[0]);
  if (node.op == "Shape") {
    const Value& in = g.value(node.inputs[0]);
    ConstantData d;
    d.ints = in.shape;
    g.set_value(constant_value(out, d));
    return true;
  }
  const Value& x = g.value(node.inputs[0]);
  if (detail::op_class(node.op) == detail::OpClass::View || node.op == "Identity" ||
      node.op == "Dropout") {
    g.set_value(constant_value(out, *x.data));  // row-major: the same elements
    return true;
  }
  if (node.op == "ConstantOfShape" || node.op == "Range") {
    // Folded into memory here, before any kernel could refuse them.
    TT_USER_CHECK(numel_of(out.shape) <= (int64_t{1} << 27))
        << node.describe() << ": its output " << out.describe() << " is too large to fold";
  }
  if (node.op == "ConstantOfShape") {
    double value = node.attr_float("value", 0.0);
    ConstantData d;
    if (out.dtype.is_float())
      d.floats.assign(static_cast<size_t>(numel_of(out.shape)), static_cast<float>(value));
    else
      d.ints.assign(static_cast<size_t>(numel_of(out.shape)), static_cast<int64_t>(value));
    g.set_value(constant_value(out, d));
    return true;
  }
  if (node.op == "Range") {
    double start = detail::constant_scalar(x);
    double delta = detail::constant_scalar(g.value(node.inputs.at(2)));
    ConstantData d;
    for (int64_t i = 0; i < numel_of(out.shape); ++i) {
      double v = start + static_cast<double>(i) * delta;
      if (out.dtype.is_float())
        d.floats.push_back(static_cast<float>(v));
      else
        d.ints.push_back(static_cast<int64_t>(v));
    }
    g.set_value(constant_value(out, d));
    return true;
  }
  if (!out.dtype.is_int())
    return false;
  std::vector<int64_t> xs = detail::constant_ints(x);
  ConstantData d;
  if (node.op == "Cast") {
    d.ints = xs;
  } else if (node.op == "Concat" && out.shape.size() == 1) {
    for (const std::string& in : node.inputs) {
      std::vector<int64_t> part = detail::constant_ints(g.value(in));
      d.ints.insert(d.ints.end(), part.begin(), part.end());
    }
  } else if (node.op == "Gather" && x.shape.size() == 1) {
    for (int64_t i : detail::constant_ints(g.value(node.inputs[1]))) {
      d.ints.push_back(xs.at(static_cast<size_t>(i < 0 ? i + static_cast<int64_t>(xs.size()) : i)));
    }
  } else if (node.op == "Slice" && x.shape.size() == 1 && node.inputs.size() >= 3) {
    // Shape -> Slice: the dimensions from `start` on, as exporters take a shape's tail.
    int64_t n = static_cast<int64_t>(xs.size());
    int64_t start = detail::constant_ints(g.value(node.inputs[1])).at(0);
    int64_t step = node.inputs.size() > 4 && !node.inputs[4].empty()
                       ? detail::constant_ints(g.value(node.inputs[4])).at(0)
                       : 1;
    start = std::clamp<int64_t>(start < 0 ? start + n : start, 0, step > 0 ? n : n - 1);
    for (int64_t i = 0; i < numel_of(out.shape); ++i)
      d.ints.push_back(xs.at(static_cast<size_t>(start + i * step)));
  } else {
    return false;
  }
  TT_USER_CHECK(static_cast<int64_t>(d.ints.size()) == numel_of(out.shape))
      << node.describe() << ": folded to " << d.ints.size() << " elements, the model declares "
      << out.describe();
  g.set_value(constant_value(out, d));
  return true;
}

/// The kinds of constants a folding kernel reads and writes: float32, and the integers and
/// bools (uint8) of shape arithmetic and masks, which ConstantData keeps as int64.
bool foldable(ir::DataType t) {
  return detail::constant_bytes_supported(t);
}

std::vector<uint8_t> to_bytes(const Value& v, const Node& node) {
  TT_USER_CHECK(foldable(v.dtype) && v.is_constant())
      << node.describe() << ": cannot fold with input '" << v.name << "' of type "
      << v.dtype.to_string();
  return detail::constant_bytes(v);
}

ConstantData from_bytes(const std::vector<uint8_t>& bytes, const Value& out, const Node& node) {
  TT_USER_CHECK(foldable(out.dtype))
      << node.describe() << ": cannot fold a constant of type " << out.dtype.to_string();
  ConstantData d;
  size_t n = static_cast<size_t>(out.numel());
  if (out.dtype == ir::DataType::float32()) {
    d.floats.resize(n);
    std::memcpy(d.floats.data(), bytes.data(), n * 4);
    return d;
  }
  int bytes_per = out.dtype.bytes();
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = bytes.data() + i * static_cast<size_t>(bytes_per);
    int64_t x = 0;
    if (bytes_per == 8) {
      std::memcpy(&x, p, 8);
    } else if (bytes_per == 4) {
      int32_t v = 0;
      std::memcpy(&v, p, 4);
      x = v;
    } else {
      x = out.dtype.is_uint() ? static_cast<int64_t>(*p) : static_cast<int8_t>(*p);
    }
    d.ints.push_back(x);
  }
  return d;
}

/// Runs the single-node kernel of `node` on its constant inputs.
void fold_by_kernel(Graph& g, size_t index, driver::Compiler& compiler) {
  const Node& node = g.nodes[index];
  Kernel k;
  k.nodes = {index};
  k.output = node.outputs[0];
  k.label = "fold";
  for (size_t j = 0; j < node.inputs.size(); ++j) {
    // Each value once: Mul(c, c) reads one input twice (a second copy would be an input the
    // kernel never reads).
    if (!detail::input_is_parameter(g, node, j) &&
        std::find(k.inputs.begin(), k.inputs.end(), node.inputs[j]) == k.inputs.end())
      k.inputs.push_back(node.inputs[j]);
  }
  te::Workload w = kernel_workload(g, k);
  const Value& out = g.value(k.output);
  std::vector<std::vector<uint8_t>> args;
  for (const std::string& in : k.inputs)
    args.push_back(to_bytes(g.value(in), node));
  args.emplace_back(static_cast<size_t>(numel_of(out.shape) * out.dtype.bytes()));
  std::vector<void*> buffers;
  for (auto& a : args)
    buffers.push_back(a.data());
  driver::Compiled c = compiler.compile(w);
  TT_CHECK(c.artifact(buffers.data()) == 0) << node.describe() << ": folding kernel failed";
  ConstantData d = from_bytes(args.back(), out, node);
  g.set_value(constant_value(out, std::move(d)));
}

}  // namespace

int fold_constants(Graph& graph) {
  std::unique_ptr<driver::Compiler> compiler;
  std::vector<Node> kept;
  int folded = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    bool all_const = !node.inputs.empty();
    for (const std::string& in : node.inputs) {
      if (!in.empty() && !graph.value(in).is_constant())
        all_const = false;
    }
    if (!all_const && node.op != "Shape") {
      kept.push_back(node);
      continue;
    }
    if (!fold_directly(graph, node)) {
      if (!compiler) {
        compiler = std::make_unique<driver::Compiler>(nullptr, target::Target::parse("llvm"));
      }
      fold_by_kernel(graph, i, *compiler);
    }
    ++folded;
  }
  graph.nodes = std::move(kept);
  return folded;
}

namespace {

struct BnParams {
  std::vector<float> scale, shift;  // y = x * scale[c] + shift[c]
};

BnParams bn_params(const Graph& g, const Node& bn) {
  TT_USER_CHECK(bn.inputs.size() == 5) << bn.describe() << ": needs 5 inputs";
  for (size_t o = 1; o < bn.outputs.size(); ++o) {
    TT_USER_CHECK(bn.outputs[o].empty() || g.use_count(bn.outputs[o]) == 0)
        << bn.describe() << ": training mode (running statistics as outputs) is not supported";
  }
  std::vector<const std::vector<float>*> p;
  for (size_t i = 1; i < 5; ++i) {
    const Value& v = g.value(bn.inputs[i]);
    TT_USER_CHECK(v.is_constant() && !v.data->floats.empty())
        << bn.describe() << ": parameter '" << v.name << "' must be a float constant";
    p.push_back(&v.data->floats);
  }
  double eps = bn.attr_float("epsilon", 1e-5);
  BnParams r;
  for (size_t c = 0; c < p[0]->size(); ++c) {
    double s = (*p[0])[c] / std::sqrt(static_cast<double>((*p[3])[c]) + eps);
    r.scale.push_back(static_cast<float>(s));
    r.shift.push_back(static_cast<float>((*p[1])[c] - (*p[2])[c] * s));
  }
  return r;
}

/// Folds `bn` into `conv` (which produces its input); false when the pattern does not hold.
bool fold_into_conv(Graph& g, Node& conv, const Node& bn, const BnParams& bp) {
  const Value& w = g.value(conv.inputs[1]);
  if (!w.is_constant() || w.data->floats.empty() || g.use_count(conv.outputs[0]) != 1)
    return false;
  bool has_bias = conv.inputs.size() > 2 && !conv.inputs[2].empty();
  if (has_bias && !g.value(conv.inputs[2]).is_constant())
    return false;
  int64_t k = w.shape[0];
  if (static_cast<int64_t>(bp.scale.size()) != k)
    return false;
  ConstantData nw = *w.data;
  int64_t per = numel_of(w.shape) / k;
  for (int64_t o = 0; o < k; ++o) {
    for (int64_t e = 0; e < per; ++e)
      nw.floats[static_cast<size_t>(o * per + e)] *= bp.scale[static_cast<size_t>(o)];
  }
  ConstantData nb;
  for (int64_t o = 0; o < k; ++o) {
    float b = has_bias ? g.value(conv.inputs[2]).data->floats[static_cast<size_t>(o)] : 0.f;
    nb.floats.push_back(b * bp.scale[static_cast<size_t>(o)] + bp.shift[static_cast<size_t>(o)]);
  }
  Value wv = w;
  wv.name = g.fresh_name(conv.name + "_bn_weight");
  g.set_value(constant_value(wv, std::move(nw)));
  Value bv;
  bv.name = g.fresh_name(conv.name + "_bn_bias");
  bv.shape = {k};
  g.set_value(constant_value(bv, std::move(nb)));
  conv.inputs.resize(3);
  conv.inputs[1] = wv.name;
  conv.inputs[2] = bv.name;
  // The conv now writes the BN's output directly.
  Value out = g.value(bn.outputs[0]);
  conv.outputs[0] = out.name;
  return true;
}

}  // namespace

void fold_batch_norm(Graph& graph, PassReport* report) {
  std::vector<Node> nodes;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node node = graph.nodes[i];
    if (node.op != "BatchNormalization") {
      nodes.push_back(node);
      continue;
    }
    BnParams bp = bn_params(graph, node);
    int producer = graph.producer(node.inputs[0]);
    if (producer >= 0 && graph.nodes[static_cast<size_t>(producer)].op == "Conv") {
      // The conv is among the nodes kept so far.
      for (Node& kept : nodes) {
        if (kept.outputs[0] == node.inputs[0] && fold_into_conv(graph, kept, node, bp)) {
          if (report)
            ++report->folded_batch_norms;
          node.op.clear();
          break;
        }
      }
      if (node.op.empty())
        continue;
    }
    // y = x * scale + shift with per-channel constants shaped [C, 1, ...] for broadcasting.
    const Value& x = graph.value(node.inputs[0]);
    std::vector<int64_t> cshape = {static_cast<int64_t>(bp.scale.size())};
    for (size_t d = 2; d < x.shape.size(); ++d)
      cshape.push_back(1);
    Value sv, hv, mid = graph.value(node.outputs[0]);
    sv.name = graph.fresh_name(node.name + "_scale");
    sv.shape = cshape;
    graph.set_value(constant_value(sv, ConstantData{bp.scale, {}}));
    hv.name = graph.fresh_name(node.name + "_shift");
    hv.shape = cshape;
    graph.set_value(constant_value(hv, ConstantData{bp.shift, {}}));
    mid.name = graph.fresh_name(node.name + "_scaled");
    graph.set_value(mid);
    nodes.push_back(Node{node.name + "_mul", "Mul", {node.inputs[0], sv.name}, {mid.name}, {}});
    nodes.push_back(Node{node.name + "_add", "Add", {mid.name, hv.name}, {node.outputs[0]}, {}});
    if (report)
      ++report->batch_norms_to_affine;
  }
  graph.nodes = std::move(nodes);
}

int remove_identities(Graph& graph) {
  std::map<std::string, std::string> replace;
  std::vector<Node> nodes;
  int removed = 0;
  auto resolve = [&](const std::string& v) {
    auto it = replace.find(v);
    return it == replace.end() ? v : it->second;
  };
  std::set<std::string> outputs(graph.outputs.begin(), graph.outputs.end());
  for (Node node : graph.nodes) {
    for (std::string& in : node.inputs)
      in = resolve(in);
    bool identity = node.op == "Identity" || node.op == "Dropout";
    if (identity && !outputs.count(node.outputs[0]) &&
        (node.outputs.size() < 2 || graph.use_count(node.outputs[1]) == 0)) {
      replace[node.outputs[0]] = node.inputs[0];
      ++removed;
      continue;
    }
    nodes.push_back(node);
  }
  graph.nodes = std::move(nodes);
  return removed;
}

int eliminate_dead_nodes(Graph& graph) {
  std::set<std::string> live(graph.outputs.begin(), graph.outputs.end());
  std::vector<bool> keep(graph.nodes.size(), false);
  for (size_t i = graph.nodes.size(); i-- > 0;) {
    const Node& node = graph.nodes[i];
    for (const std::string& o : node.outputs) {
      if (live.count(o))
        keep[i] = true;
    }
    if (keep[i])
      live.insert(node.inputs.begin(), node.inputs.end());
  }
  std::vector<Node> nodes;
  int removed = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (keep[i]) {
      nodes.push_back(graph.nodes[i]);
    } else {
      ++removed;
    }
  }
  graph.nodes = std::move(nodes);
  live.insert(graph.inputs.begin(), graph.inputs.end());
  std::vector<std::string> unused;
  for (const auto& [name, v] : graph.values()) {
    if (!live.count(name))
      unused.push_back(name);
  }
  for (const std::string& name : unused)
    graph.erase_value(name);
  return removed;
}

int transpose_gemm_weights(Graph& graph) {
  int transposed = 0;
  for (Node& node : graph.nodes) {
    if (node.op != "Gemm" || node.inputs.size() < 2 || node.attr_int("transB", 0) == 0) {
      continue;
    }
    const Value& w = graph.value(node.inputs[1]);
    if (!w.is_constant() || w.data->floats.empty() || w.shape.size() != 2) {
      continue;
    }
    const int64_t n = w.shape[0];
    const int64_t k = w.shape[1];
    ConstantData t;
    t.floats.resize(w.data->floats.size());
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t r = 0; r < k; ++r) {
        t.floats[static_cast<size_t>(r * n + j)] = w.data->floats[static_cast<size_t>(j * k + r)];
      }
    }
    Value tv = w;
    tv.name = graph.fresh_name(w.name + "_kn");
    tv.shape = {k, n};
    graph.set_value(constant_value(tv, std::move(t)));
    node.inputs[1] = tv.name;
    node.attrs.erase("transB");
    ++transposed;
  }
  return transposed;
}

PassReport optimize(Graph& graph) {
  PassReport r;
  r.folded_constants += fold_constants(graph);
  fold_batch_norm(graph, &r);
  r.removed_identities += remove_identities(graph);
  r.folded_constants += fold_constants(graph);
  r.transposed_weights += transpose_gemm_weights(graph);
  r.removed_dead += eliminate_dead_nodes(graph);
  graph.validate();
  return r;
}

}  // namespace tensortune::graph

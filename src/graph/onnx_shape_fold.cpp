// SPDX-License-Identifier: Apache-2.0
// Shape arithmetic folded on the ONNX model itself, before the graph is built: ONNX 1.12's data
// propagation resolves Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains only from opset
// 14, and exporters still write opsets 11 to 13. Nodes whose inputs are known become Constant
// nodes, and shape inference runs again. Compiled to nothing without TT_WITH_ONNX.
#ifdef TT_WITH_ONNX

#include "graph/onnx_convert.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>

namespace tensortune::graph::onnx_detail {
namespace {

using onnx::TensorProto;

/// A small integer tensor known at import time.
struct Known {
  int elem_type = TensorProto::INT64;
  std::vector<int64_t> dims;
  std::vector<int64_t> ints;
};

/// Results larger than this are left to the graph's own constant folding.
constexpr size_t kMaxElements = 4096;

bool is_int_type(int t) {
  return t == TensorProto::INT64 || t == TensorProto::INT32 || t == TensorProto::BOOL;
}

int64_t count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// The numpy-broadcast of `fn` over two known tensors; false when the shapes do not broadcast.
bool broadcast(const Known& a,
               const Known& b,
               const std::function<int64_t(int64_t, int64_t)>& fn,
               Known* out) {
  size_t rank = std::max(a.dims.size(), b.dims.size());
  std::vector<int64_t> da(rank, 1), db(rank, 1);
  std::copy(a.dims.begin(), a.dims.end(), da.begin() + static_cast<long>(rank - a.dims.size()));
  std::copy(b.dims.begin(), b.dims.end(), db.begin() + static_cast<long>(rank - b.dims.size()));
  out->dims.assign(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    if (da[d] != db[d] && da[d] != 1 && db[d] != 1)
      return false;
    out->dims[d] = std::max(da[d], db[d]);
  }
  int64_t n = count(out->dims);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, ia = 0, ib = 0, sa = 1, sb = 1;
    for (size_t d = rank; d-- > 0;) {
      int64_t x = rest % out->dims[d];
      rest /= out->dims[d];
      ia += (da[d] == 1 ? 0 : x) * sa;
      ib += (db[d] == 1 ? 0 : x) * sb;
      sa *= da[d];
      sb *= db[d];
    }
    out->ints.push_back(fn(a.ints[static_cast<size_t>(ia)], b.ints[static_cast<size_t>(ib)]));
  }
  return true;
}

class ShapeFolder {
 public:
  ShapeFolder(onnx::GraphProto* graph, std::string what) : graph_(graph), what_(std::move(what)) {}

  bool run() {
    collect();
    bool changed = false;
    for (onnx::NodeProto& node : *graph_->mutable_node()) {
      if (node.op_type() == "Constant" || node.output_size() != 1 ||
          !(node.domain().empty() || node.domain() == "ai.onnx"))
        continue;
      Known k;
      if (!evaluate(node, &k) || k.ints.size() > kMaxElements)
        continue;
      known_[node.output(0)] = k;
      replace_with_constant(&node, k);
      changed = true;
    }
    return changed;
  }

 private:
  void collect() {
    for (const onnx::TensorProto& t : graph_->initializer()) {
      if (is_int_type(t.data_type()) && !has_external_data(t))
        remember(t.name(), t);
    }
    for (const onnx::NodeProto& node : graph_->node()) {
      for (const onnx::AttributeProto& a : node.attribute()) {
        if (node.op_type() == "Constant" && a.name() == "value" && is_int_type(a.t().data_type()))
          remember(node.output(0), a.t());
      }
    }
    for (const auto* list : {&graph_->input(), &graph_->value_info(), &graph_->output()}) {
      for (const onnx::ValueInfoProto& info : *list) {
        std::vector<int64_t> shape;
        if (static_shape(info.type(), &shape))
          shapes_[info.name()] = shape;
      }
    }
  }

  void remember(const std::string& name, const onnx::TensorProto& t) {
    Value v = constant_from_tensor(t, name, what_);
    if (v.data->ints.size() > kMaxElements)
      return;
    known_[name] = Known{t.data_type(), v.shape, v.data->ints};
  }

  const Known* input(const onnx::NodeProto& node, int i) const {
    if (i >= node.input_size() || node.input(i).empty())
      return nullptr;
    auto it = known_.find(node.input(i));
    return it == known_.end() ? nullptr : &it->second;
  }

  static int64_t attr_int(const onnx::NodeProto& node, const std::string& key, int64_t fallback) {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.name() == key)
        return a.i();
    }
    return fallback;
  }

  static std::vector<int64_t> attr_ints(const onnx::NodeProto& node, const std::string& key) {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.name() == key)
        return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    }
    return {};
  }

  bool evaluate(const onnx::NodeProto& node, Known* out) const {
    const std::string& op = node.op_type();
    if (op == "Shape" || op == "Size") {
      auto it = shapes_.find(node.input(0));
      if (it == shapes_.end())
        return false;
      const std::vector<int64_t>& s = it->second;
      if (op == "Size") {
        out->ints = {count(s)};
        return true;
      }
      int64_t n = static_cast<int64_t>(s.size());
      int64_t start = attr_int(node, "start", 0), end = attr_int(node, "end", n);
      start = std::clamp<int64_t>(start < 0 ? start + n : start, 0, n);
      end = std::clamp<int64_t>(end < 0 ? end + n : end, 0, n);
      for (int64_t d = start; d < end; ++d)
        out->ints.push_back(s[static_cast<size_t>(d)]);
      out->dims = {static_cast<int64_t>(out->ints.size())};
      return true;
    }
    const Known* x = input(node, 0);
    if (x == nullptr)
      return false;
    for (int i = 1; i < node.input_size(); ++i) {
      if (!node.input(i).empty() && input(node, i) == nullptr)
        return false;
    }
    return evaluate_known(node, *x, out);
  }

  bool evaluate_known(const onnx::NodeProto& node, const Known& x, Known* out) const {
    const std::string& op = node.op_type();
    out->elem_type = x.elem_type;
    if (op == "Unsqueeze" || op == "Squeeze") {
      std::vector<int64_t> axes = input(node, 1) ? input(node, 1)->ints : attr_ints(node, "axes");
      return reshape_axes(op == "Unsqueeze", x, axes, out);
    }
    if (op == "Cast") {
      int to = static_cast<int>(attr_int(node, "to", 0));
      if (!is_int_type(to))
        return false;
      *out = x;
      out->elem_type = to;
      return true;
    }
    if (op == "Concat" && x.dims.size() == 1) {
      out->dims = {0};
      for (int i = 0; i < node.input_size(); ++i) {
        const Known* p = input(node, i);
        if (p->dims.size() != 1)
          return false;
        out->ints.insert(out->ints.end(), p->ints.begin(), p->ints.end());
      }
      out->dims = {static_cast<int64_t>(out->ints.size())};
      return true;
    }
    if (op == "Gather" && x.dims.size() == 1 && attr_int(node, "axis", 0) == 0) {
      const Known& ix = *input(node, 1);
      int64_t n = static_cast<int64_t>(x.ints.size());
      for (int64_t i : ix.ints) {
        if (i < -n || i >= n)
          return false;
        out->ints.push_back(x.ints[static_cast<size_t>(i < 0 ? i + n : i)]);
      }
      out->dims = ix.dims;
      return true;
    }
    if (op == "Slice" && x.dims.size() == 1 && node.input_size() >= 3) {
      int64_t n = static_cast<int64_t>(x.ints.size());
      int64_t start = input(node, 1)->ints.at(0), end = input(node, 2)->ints.at(0);
      int64_t step = input(node, 4) ? input(node, 4)->ints.at(0) : 1;
      if (step <= 0)
        return false;
      start = std::clamp<int64_t>(start < 0 ? start + n : start, 0, n);
      end = std::clamp<int64_t>(end < 0 ? end + n : end, 0, n);
      for (int64_t i = start; i < end; i += step)
        out->ints.push_back(x.ints[static_cast<size_t>(i)]);
      out->dims = {static_cast<int64_t>(out->ints.size())};
      return true;
    }
    return evaluate_arithmetic(node, x, out);
  }

  bool evaluate_arithmetic(const onnx::NodeProto& node, const Known& x, Known* out) const {
    const std::string& op = node.op_type();
    static const std::map<std::string, std::function<int64_t(int64_t, int64_t)>> binary = {
        {"Add",
         [](int64_t a, int64_t b) {
           return a + b;
         }},
        {"Sub",
         [](int64_t a, int64_t b) {
           return a - b;
         }},
        {"Mul",
         [](int64_t a, int64_t b) {
           return a * b;
         }},
        {"Div",
         [](int64_t a, int64_t b) {
           return b == 0 ? 0 : a / b;
         }},
        {"Equal",
         [](int64_t a, int64_t b) {
           return static_cast<int64_t>(a == b);
         }},
    };
    auto it = binary.find(op);
    if (it == binary.end() || node.input_size() != 2)
      return false;
    const Known& y = *input(node, 1);
    if (op == "Div" && std::find(y.ints.begin(), y.ints.end(), 0) != y.ints.end())
      return false;  // left for the checker and inference to report
    out->elem_type = op == "Equal" ? static_cast<int>(TensorProto::BOOL) : x.elem_type;
    return broadcast(x, y, it->second, out);
  }

  static bool reshape_axes(bool unsqueeze,
                           const Known& x,
                           const std::vector<int64_t>& axes,
                           Known* out) {
    int64_t rank =
        static_cast<int64_t>(x.dims.size()) + (unsqueeze ? static_cast<int64_t>(axes.size()) : 0);
    std::vector<bool> listed(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
    for (int64_t a : axes) {
      if (a < -rank || a >= rank)
        return false;
      listed[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
    }
    out->ints = x.ints;
    if (unsqueeze) {
      for (int64_t d = 0, k = 0; d < rank; ++d)
        out->dims.push_back(listed[static_cast<size_t>(d)] ? 1 : x.dims[static_cast<size_t>(k++)]);
      return true;
    }
    for (size_t d = 0; d < x.dims.size(); ++d) {
      if (!(x.dims[d] == 1 && (axes.empty() || listed[d])))
        out->dims.push_back(x.dims[d]);
    }
    return true;
  }

  static void replace_with_constant(onnx::NodeProto* node, const Known& k) {
    std::string output = node->output(0);
    std::string name = node->name();
    node->Clear();
    node->set_op_type("Constant");
    node->set_name(name);
    node->add_output(output);
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    onnx::TensorProto* t = a->mutable_t();
    t->set_data_type(k.elem_type);
    for (int64_t d : k.dims)
      t->add_dims(d);
    for (int64_t v : k.ints) {
      if (k.elem_type == TensorProto::INT64)
        t->add_int64_data(v);
      else
        t->add_int32_data(static_cast<int32_t>(v));  // INT32 and BOOL are stored there
    }
  }

  onnx::GraphProto* graph_;
  std::string what_;
  std::map<std::string, Known> known_;
  std::map<std::string, std::vector<int64_t>> shapes_;
};

}  // namespace

bool fold_shape_arithmetic(onnx::ModelProto* model, const std::string& what) {
  return ShapeFolder(model->mutable_graph(), what).run();
}

}  // namespace tensortune::graph::onnx_detail

#endif  // TT_WITH_ONNX

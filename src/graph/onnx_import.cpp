// SPDX-License-Identifier: Apache-2.0
// The ONNX importer: parse with ONNX's protobuf classes, run ONNX's checker and shape inference,
// reject unsupported ops and dynamic shapes (listing every offender), then build a graph::Graph.
#include "tensortune/graph/onnx_import.h"

#include "tensortune/support/error.h"

#ifdef TT_WITH_ONNX
#include "graph/onnx_convert.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#endif

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

namespace tensortune::graph {

std::vector<std::string> supported_onnx_ops() {
  return {"Abs",
          "Add",
          "And",
          "AveragePool",
          "BatchNormalization",
          "Cast",
          "Clip",
          "Concat",
          "Constant",
          "ConstantOfShape",
          "Conv",
          "DepthToSpace",
          "Div",
          "Dropout",
          "Elu",
          "Equal",
          "Erf",
          "Exp",
          "Expand",
          "Flatten",
          "Gather",
          "Gelu",
          "Gemm",
          "GlobalAveragePool",
          "GlobalMaxPool",
          "Greater",
          "GreaterOrEqual",
          "HardSigmoid",
          "HardSwish",
          "Identity",
          "LayerNormalization",
          "LeakyRelu",
          "Less",
          "LessOrEqual",
          "Log",
          "LogSoftmax",
          "MatMul",
          "Max",
          "MaxPool",
          "Min",
          "Mul",
          "Neg",
          "Not",
          "Or",
          "PRelu",
          "Pad",
          "Pow",
          "Range",
          "Reciprocal",
          "ReduceMax",
          "ReduceMean",
          "ReduceMin",
          "ReduceSum",
          "Relu",
          "Reshape",
          "Resize",
          "Shape",
          "Sigmoid",
          "Slice",
          "Softmax",
          "Softplus",
          "SpaceToDepth",
          "Split",
          "Sqrt",
          "Squeeze",
          "Sub",
          "Sum",
          "Tanh",
          "Tile",
          "Transpose",
          "Unsqueeze",
          "Where"};
}

#ifndef TT_WITH_ONNX

namespace {
const char* const kNoOnnx =
    "tensortune was built without ONNX support (install libonnx-dev and rebuild)";
}  // namespace

bool onnx_available() {
  return false;
}

Graph import_onnx(const std::string& /*path*/) {
  throw UserError(kNoOnnx);
}

Graph import_onnx_bytes(const std::string& /*bytes*/, const std::string& /*what*/) {
  throw UserError(kNoOnnx);
}

#else  // TT_WITH_ONNX

namespace {

/// The graph name as a C identifier: it ends up in kernel and file names.
std::string sanitize_name(const std::string& raw) {
  if (raw.empty()) {
    return "model";
  }
  std::string s = raw;
  for (char& c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    c = ok ? c : '_';
  }
  return (s[0] >= '0' && s[0] <= '9') ? "m_" + s : s;
}

bool is_supported(const onnx::NodeProto& node) {
  static const std::vector<std::string> ops = supported_onnx_ops();
  bool standard_domain = node.domain().empty() || node.domain() == "ai.onnx";
  return standard_domain && std::binary_search(ops.begin(), ops.end(), node.op_type());
}

/// Parses and runs ONNX's checker; UserError naming `what` for each failure.
onnx::ModelProto parse_and_check(const std::string& bytes, const std::string& what) {
  onnx::ModelProto model;
  TT_USER_CHECK(model.ParseFromString(bytes))
      << "'" << what << "' is not an ONNX model (protobuf parse failed)";
  for (const onnx::TensorProto& init : model.graph().initializer()) {
    TT_USER_CHECK(!onnx_detail::has_external_data(init))
        << "'" << what << "': initializer '" << init.name()
        << "' keeps its data in an external file, which tensortune does not read";
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw UserError("'" + what + "' fails the ONNX checker: " + e.what());
  }
  return model;
}

/// Runs ONNX's shape inference, which fills value_info with the intermediate values' types.
void infer_shapes(onnx::ModelProto* model, const std::string& what) {
  try {
    // Strict mode surfaces node-level inference errors; data propagation resolves the shape
    // inputs of Reshape computed by Shape -> Gather -> Concat chains, as exporters emit them.
    onnx::ShapeInferenceOptions options(/*check_type_val=*/true, /*strict_mode_val=*/1,
                                        /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(*model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    throw UserError("'" + what + "': ONNX shape inference failed: " + e.what());
  }
}

/// True when some node output has no static shape in the model's inferred types.
bool has_unknown_shapes(const onnx::GraphProto& graph) {
  std::set<std::string> known;
  std::vector<int64_t> shape;
  for (const auto* list : {&graph.input(), &graph.value_info(), &graph.output()}) {
    for (const onnx::ValueInfoProto& info : *list) {
      if (onnx_detail::static_shape(info.type(), &shape))
        known.insert(info.name());
    }
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& out : node.output()) {
      if (!out.empty() && !known.count(out))
        return true;
    }
  }
  return false;
}

/// One UserError listing every node whose op the importer does not support.
void reject_unsupported(const onnx::GraphProto& graph, const std::string& what) {
  std::ostringstream lines;
  int count = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (is_supported(node)) {
      continue;
    }
    bool standard_domain = node.domain().empty() || node.domain() == "ai.onnx";
    lines << "\n  node '" << (node.name().empty() ? "#" + std::to_string(i) : node.name()) << "' ("
          << (standard_domain ? "" : node.domain() + ".") << node.op_type() << ")";
    ++count;
  }
  if (count == 0) {
    return;
  }
  std::string supported;
  for (const std::string& op : supported_onnx_ops()) {
    supported += (supported.empty() ? "" : ", ") + op;
  }
  throw UserError("'" + what + "': " + std::to_string(count) +
                  " unsupported node(s) (supported: " + supported + "):" + lines.str());
}

/// Builds the graph from a checked, shape-inferred model.
class Importer {
 public:
  Importer(const onnx::GraphProto& proto, std::string what, int64_t opset)
      : proto_(proto), what_(std::move(what)), opset_(opset) {
    collect_types();
  }

  /// A declared output that nothing computes is the file's mistake, named here (the fuzzer found
  /// it as Graph::validate's InternalError).
  void check_outputs_produced() const {
    std::set<std::string> produced(graph_.inputs.begin(), graph_.inputs.end());
    for (const Node& node : graph_.nodes)
      produced.insert(node.outputs.begin(), node.outputs.end());
    for (const std::string& out : graph_.outputs) {
      TT_USER_CHECK(produced.count(out) != 0 ||
                    (graph_.has_value(out) && graph_.value(out).is_constant()))
          << what_ << ": graph output '" << out
          << "' is not produced by any node, input or constant";
    }
  }

  Graph run() {
    graph_.name = sanitize_name(proto_.name());
    for (const onnx::TensorProto& init : proto_.initializer()) {
      graph_.set_value(onnx_detail::constant_from_tensor(init, init.name(), what_));
    }
    for (const onnx::ValueInfoProto& in : proto_.input()) {
      if (!graph_.has_value(in.name())) {
        graph_.inputs.push_back(in.name());
        add_value(in.name());
      }
    }
    for (int i = 0; i < proto_.node_size(); ++i) {
      add_node(proto_.node(i), i);
    }
    for (const onnx::ValueInfoProto& out : proto_.output()) {
      graph_.outputs.push_back(out.name());
      add_value(out.name());
    }
    throw_problems();
    check_outputs_produced();
    onnx_detail::resolve_auto_pad(graph_);
    graph_.validate();
    return std::move(graph_);
  }

 private:
  /// The most complete type known for each value: a static shape beats a partial one, which
  /// beats none. Declared outputs may carry less than what inference found.
  void collect_types() {
    auto rank = [](const onnx::TypeProto& t) {
      std::vector<int64_t> shape;
      if (onnx_detail::static_shape(t, &shape)) {
        return 2;
      }
      return t.has_tensor_type() && t.tensor_type().has_shape() ? 1 : 0;
    };
    for (const auto* list : {&proto_.input(), &proto_.value_info(), &proto_.output()}) {
      for (const onnx::ValueInfoProto& info : *list) {
        auto it = types_.find(info.name());
        if (it == types_.end() || rank(info.type()) > rank(*it->second)) {
          types_[info.name()] = &info.type();
        }
      }
    }
  }

  void add_node(const onnx::NodeProto& proto, int index) {
    std::string name =
        proto.name().empty() ? proto.op_type() + "_" + std::to_string(index) : proto.name();
    if (!node_names_.insert(name).second) {
      name += "_" + std::to_string(index);
      node_names_.insert(name);
    }
    if (proto.op_type() == "Constant") {
      graph_.set_value(onnx_detail::constant_from_node(proto, name, what_));
      return;
    }
    if (proto.op_type() == "Split") {
      add_split(proto, name);
      return;
    }
    Node node;
    node.name = name;
    node.op = proto.op_type();
    node.inputs.assign(proto.input().begin(), proto.input().end());
    node.outputs.assign(proto.output().begin(), proto.output().end());
    for (const onnx::AttributeProto& a : proto.attribute()) {
      Attribute attr;
      if (onnx_detail::to_attribute(a, &attr)) {
        node.attrs[a.name()] = std::move(attr);
      }
      // ConstantOfShape's fill value is a one-element tensor; the graph keeps it as a number.
      if (node.op == "ConstantOfShape" && a.name() == "value") {
        Value fill = onnx_detail::constant_from_tensor(a.t(), name + ".value", what_);
        TT_USER_CHECK(fill.numel() == 1)
            << "'" << what_ << "': node '" << name << "' (ConstantOfShape): value has "
            << fill.numel() << " elements, not 1";
        node.attrs["value"].kind = Attribute::Kind::Float;
        node.attrs["value"].f = fill.data->floats.empty()
                                    ? static_cast<double>(fill.data->ints.at(0))
                                    : static_cast<double>(fill.data->floats.at(0));
      }
    }
    for (const std::string& v : node.inputs) {
      add_value(v);
    }
    for (const std::string& v : node.outputs) {
      add_value(v);
    }
    if (!add_old_softmax(node))
      graph_.nodes.push_back(std::move(node));
  }

  /// A Split as one Slice per output: each output is its own kernel or view then, and the
  /// split sizes need no reading, the outputs' inferred shapes give them.
  void add_split(const onnx::NodeProto& proto, const std::string& name) {
    add_value(proto.input(0));
    std::vector<int64_t> in_shape;
    auto it = types_.find(proto.input(0));
    if (it == types_.end() || !onnx_detail::static_shape(*it->second, &in_shape))
      return;  // reported as a dynamic shape
    int64_t axis = 0;
    for (const onnx::AttributeProto& a : proto.attribute()) {
      if (a.name() == "axis")
        axis = a.i();
    }
    int64_t rank = static_cast<int64_t>(in_shape.size());
    TT_USER_CHECK(axis >= -rank && axis < rank)
        << "'" << what_ << "': node '" << name << "' (Split): axis " << axis
        << " is out of range for rank " << rank;
    axis = axis < 0 ? axis + rank : axis;
    int64_t start = 0;
    for (int k = 0; k < proto.output_size(); ++k) {
      const std::string& out = proto.output(k);
      add_value(out);
      std::vector<int64_t> out_shape;
      auto type = types_.find(out);
      if (type == types_.end() || !onnx_detail::static_shape(*type->second, &out_shape) ||
          out_shape.size() != in_shape.size())
        continue;  // reported by add_value
      int64_t extent = out_shape[static_cast<size_t>(axis)];
      Node node;
      node.name = name + "_" + std::to_string(k);
      node.op = "Slice";
      node.inputs = {proto.input(0), ints_constant(node.name + "_starts", {start}),
                     ints_constant(node.name + "_ends", {start + extent}),
                     ints_constant(node.name + "_axes", {axis})};
      node.outputs = {out};
      graph_.nodes.push_back(std::move(node));
      start += extent;
    }
  }

  /// Before opset 13, (Log)Softmax flattened the axes from `axis` on into one. Unless that is
  /// the last axis alone (the later meaning), the node becomes what opset 13 defines it as:
  /// Reshape to 2-D, (Log)Softmax over the last axis, Reshape back.
  bool add_old_softmax(Node& node) {
    if ((node.op != "Softmax" && node.op != "LogSoftmax") || opset_ >= 13 ||
        !graph_.has_value(node.inputs[0]) || !graph_.has_value(node.outputs[0]))
      return false;
    Value x = graph_.value(node.inputs[0]);
    int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = node.attr_int("axis", 1);
    TT_USER_CHECK(axis >= -rank && axis < rank)
        << node.describe() << ": axis " << axis << " is out of range for rank " << rank;
    axis = axis < 0 ? axis + rank : axis;
    if (axis == rank - 1)
      return false;
    std::vector<int64_t> flat = {1, 1};
    for (int64_t d = 0; d < rank; ++d)
      flat[d < axis ? 0 : 1] *= x.shape[static_cast<size_t>(d)];
    Value in2 = x, out2 = x;
    in2.name = graph_.fresh_name(node.name + "_2d");
    in2.shape = flat;
    graph_.set_value(in2);
    out2.name = graph_.fresh_name(node.name + "_2d_out");
    out2.shape = flat;
    graph_.set_value(out2);
    graph_.nodes.push_back(Node{node.name + "_flatten",
                                "Reshape",
                                {node.inputs[0], ints_constant(node.name + "_2d_shape", flat)},
                                {in2.name},
                                {}});
    Node soft = node;
    soft.inputs = {in2.name};
    soft.outputs = {out2.name};
    soft.attrs["axis"] = Attribute{Attribute::Kind::Int, -1, 0, "", {}, {}};
    graph_.nodes.push_back(soft);
    graph_.nodes.push_back(Node{node.name + "_unflatten",
                                "Reshape",
                                {out2.name, ints_constant(node.name + "_shape", x.shape)},
                                {node.outputs[0]},
                                {}});
    return true;
  }

  /// A new int64 constant vector named after `base`.
  std::string ints_constant(const std::string& base, const std::vector<int64_t>& values) {
    Value c;
    c.name = graph_.fresh_name(base);
    c.dtype = ir::DataType::int64();
    c.shape = {static_cast<int64_t>(values.size())};
    c.data = std::make_shared<const ConstantData>(ConstantData{{}, values});
    graph_.set_value(c);
    return c.name;
  }

  /// Adds the value `name` from its inferred type, or records why it cannot be.
  void add_value(const std::string& name) {
    if (name.empty() || graph_.has_value(name) || !seen_.insert(name).second) {
      return;
    }
    auto it = types_.find(name);
    if (it == types_.end()) {
      shape_problems_.push_back("'" + name + "' (unknown shape)");
      return;
    }
    const onnx::TypeProto& type = *it->second;
    Value v;
    v.name = name;
    int elem_type = type.has_tensor_type() ? type.tensor_type().elem_type() : 0;
    if (!onnx_detail::to_dtype(elem_type, &v.dtype)) {
      dtype_problems_.push_back("'" + name + "' " + onnx_detail::dtype_name(elem_type));
    }
    if (!onnx_detail::static_shape(type, &v.shape)) {
      shape_problems_.push_back("'" + name + "' " + onnx_detail::describe_shape(type));
    } else if (too_large(v.shape)) {
      size_problems_.push_back("'" + name + "' " + onnx_detail::describe_shape(type));
    }
    graph_.set_value(std::move(v));
  }

  /// More elements than any kernel here could hold (a ConstantOfShape of [1e6, 1e6] would be
  /// folded into memory); false for shapes whose product fits.
  static bool too_large(const std::vector<int64_t>& shape) {
    constexpr int64_t kMaxElements = int64_t{1} << 32;
    int64_t n = 1;
    for (int64_t d : shape) {
      if (d > 0 && n > kMaxElements / d)
        return true;
      n *= d;
    }
    return false;
  }

  void throw_problems() const {
    auto join = [](const std::vector<std::string>& items) {
      std::string s;
      for (const std::string& item : items) {
        s += (s.empty() ? "" : ", ") + item;
      }
      return s;
    };
    TT_USER_CHECK(dtype_problems_.empty())
        << "'" << what_ << "': unsupported data types: " << join(dtype_problems_);
    TT_USER_CHECK(shape_problems_.empty())
        << "'" << what_ << "': dynamic or unknown shapes: " << join(shape_problems_);
    TT_USER_CHECK(size_problems_.empty())
        << "'" << what_ << "': values of more than 2^32 elements: " << join(size_problems_);
  }

  const onnx::GraphProto& proto_;
  std::string what_;
  int64_t opset_;
  Graph graph_;
  std::map<std::string, const onnx::TypeProto*> types_;
  std::set<std::string> node_names_;
  std::set<std::string> seen_;
  std::vector<std::string> dtype_problems_;
  std::vector<std::string> shape_problems_;
  std::vector<std::string> size_problems_;
};

}  // namespace

bool onnx_available() {
  return true;
}

Graph import_onnx(const std::string& path) {
  std::error_code ec;
  TT_USER_CHECK(std::filesystem::is_regular_file(path, ec))
      << "cannot read ONNX model '" << path
      << "': " << (std::filesystem::exists(path, ec) ? "not a regular file" : "no such file");
  std::ifstream in(path, std::ios::binary);
  TT_USER_CHECK(in.good()) << "cannot read ONNX model '" << path << "'";
  std::ostringstream bytes;
  bytes << in.rdbuf();
  TT_USER_CHECK(!in.bad()) << "cannot read ONNX model '" << path << "'";
  return import_onnx_bytes(bytes.str(), path);
}

Graph import_onnx_bytes(const std::string& bytes, const std::string& what) {
  onnx::ModelProto model = parse_and_check(bytes, what);
  reject_unsupported(model.graph(), what);
  int64_t opset = 0;  // of the default domain
  for (const onnx::OperatorSetIdProto& set : model.opset_import()) {
    if (set.domain().empty() || set.domain() == "ai.onnx")
      opset = set.version();
  }
  for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
    if (node.op_type() == "Constant") {
      onnx_detail::normalize_constant(&node);
    }
    // Before opset 13 Softmax's axis defaulted to 1 (and flattened the axes from it on); from 13
    // it is -1. The lowering reads a missing axis as -1, so an old model gets its default
    // written out, and the Importer rewrites the flattening (add_old_softmax).
    // A Gemm with beta 0 ignores C: dropped here, so no kernel takes an input it never reads.
    if (node.op_type() == "Gemm" && node.input_size() == 3) {
      for (const onnx::AttributeProto& a : node.attribute()) {
        if (a.name() == "beta" && a.f() == 0.0f)
          node.mutable_input()->RemoveLast();
      }
    }
    if ((node.op_type() == "Softmax" || node.op_type() == "LogSoftmax") && opset < 13 &&
        std::none_of(node.attribute().begin(), node.attribute().end(),
                     [](const onnx::AttributeProto& a) { return a.name() == "axis"; })) {
      onnx::AttributeProto* axis = node.add_attribute();
      axis->set_name("axis");
      axis->set_type(onnx::AttributeProto::INT);
      axis->set_i(1);
    }
  }
  onnx_detail::check_window_attributes(model.graph(), what);
  infer_shapes(&model, what);
  // Shape chains ONNX's data propagation left unresolved (opsets before 14): fold what is known
  // and infer again, as long as that makes progress.
  for (int round = 0; round < 16 && has_unknown_shapes(model.graph()) &&
                      onnx_detail::fold_shape_arithmetic(&model, what);
       ++round) {
    infer_shapes(&model, what);
  }
  return Importer(model.graph(), what, opset).run();
}

#endif  // TT_WITH_ONNX

}  // namespace tensortune::graph

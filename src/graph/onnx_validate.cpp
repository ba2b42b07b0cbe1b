// SPDX-License-Identifier: Apache-2.0
// Checks of window attributes (strides, dilations, kernel_shape, pads, group) that must hold
// before ONNX's shape inference runs: libonnx 1.12 divides by a stride of 0 (SIGFPE) rather
// than reporting it. Compiled to nothing without TT_WITH_ONNX.
#ifdef TT_WITH_ONNX

#include "graph/onnx_convert.h"
#include "tensortune/support/error.h"

#include <map>
#include <sstream>

namespace tensortune::graph::onnx_detail {
namespace {

bool is_windowed(const std::string& op) {
  return op == "Conv" || op == "ConvTranspose" || op == "MaxPool" || op == "AveragePool" ||
         op == "LpPool";
}

std::string ints_text(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i)
    os << (i ? "," : "") << v[i];
  os << "]";
  return os.str();
}

/// The static shape of a graph input, value_info or initializer named `name`; empty if unknown.
std::vector<int64_t> known_shape(const onnx::GraphProto& g, const std::string& name) {
  for (const onnx::TensorProto& t : g.initializer()) {
    if (t.name() == name)
      return std::vector<int64_t>(t.dims().begin(), t.dims().end());
  }
  std::vector<int64_t> shape;
  for (const auto* list : {&g.input(), &g.value_info()}) {
    for (const onnx::ValueInfoProto& info : *list) {
      if (info.name() == name && static_shape(info.type(), &shape))
        return shape;
    }
  }
  return {};
}

/// The problems of one windowed node, each a phrase; empty when its attributes are sound.
std::vector<std::string> window_problems(const onnx::GraphProto& g, const onnx::NodeProto& node) {
  std::map<std::string, const onnx::AttributeProto*> attrs;
  for (const onnx::AttributeProto& a : node.attribute())
    attrs[a.name()] = &a;
  auto ints = [&](const std::string& key) {
    auto it = attrs.find(key);
    return it == attrs.end()
               ? std::vector<int64_t>{}
               : std::vector<int64_t>(it->second->ints().begin(), it->second->ints().end());
  };
  std::vector<std::string> problems;
  auto each_at_least = [&](const std::string& key, int64_t low) {
    for (int64_t v : ints(key)) {
      if (v < low) {
        problems.push_back(key + " " + ints_text(ints(key)) +
                           " (each must be >= " + std::to_string(low) + ")");
        return;
      }
    }
  };
  each_at_least("strides", 1);
  each_at_least("dilations", 1);
  each_at_least("kernel_shape", 1);
  each_at_least("pads", 0);
  // The spatial rank: from kernel_shape, else from the weight of a convolution.
  std::vector<int64_t> kernel = ints("kernel_shape");
  std::vector<int64_t> w =
      node.input_size() > 1 ? known_shape(g, node.input(1)) : std::vector<int64_t>{};
  bool is_conv = node.op_type() == "Conv" || node.op_type() == "ConvTranspose";
  size_t rank = !kernel.empty() ? kernel.size() : (is_conv && w.size() > 2 ? w.size() - 2 : 0);
  if (!is_conv && kernel.empty())
    problems.push_back("no kernel_shape");
  if (rank > 0) {
    auto sized = [&](const std::string& key, size_t n) {
      if (attrs.count(key) && ints(key).size() != n)
        problems.push_back(key + " " + ints_text(ints(key)) + " (expected " + std::to_string(n) +
                           " values for a " + std::to_string(rank) + "-D window)");
    };
    sized("strides", rank);
    sized("dilations", rank);
    sized("pads", 2 * rank);
    if (is_conv && w.size() > 2 && !kernel.empty() && w.size() - 2 != rank)
      problems.push_back("kernel_shape " + ints_text(kernel) + " does not match weight shape " +
                         ints_text(w));
  }
  if (!is_conv)
    return problems;
  auto it = attrs.find("group");
  int64_t group = it == attrs.end() ? 1 : it->second->i();
  if (group < 1) {
    problems.push_back("group " + std::to_string(group) + " (must be >= 1)");
    return problems;
  }
  std::vector<int64_t> x = known_shape(g, node.input(0));
  // Conv's weight is [M, C/group, ...]; ConvTranspose's is [C, M/group, ...].
  if (x.size() > 1 && x[1] % group != 0)
    problems.push_back("group " + std::to_string(group) + " does not divide the " +
                       std::to_string(x[1]) + " input channels");
  if (node.op_type() == "Conv" && w.size() > 1 && w[0] % group != 0)
    problems.push_back("group " + std::to_string(group) + " does not divide the " +
                       std::to_string(w[0]) + " output channels");
  if (node.op_type() == "Conv" && x.size() > 1 && w.size() > 1 && x[1] % group == 0 &&
      w[1] * group != x[1])
    problems.push_back("weight " + ints_text(w) + " expects " + std::to_string(w[1] * group) +
                       " input channels with group " + std::to_string(group) + ", the input has " +
                       std::to_string(x[1]));
  return problems;
}

}  // namespace

void check_window_attributes(const onnx::GraphProto& graph, const std::string& what) {
  std::ostringstream lines;
  int count = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (!is_windowed(node.op_type()) || !(node.domain().empty() || node.domain() == "ai.onnx"))
      continue;
    for (const std::string& p : window_problems(graph, node)) {
      lines << "\n  node '" << (node.name().empty() ? "#" + std::to_string(i) : node.name())
            << "' (" << node.op_type() << "): " << p;
      ++count;
    }
  }
  TT_USER_CHECK(count == 0) << "'" << what << "': " << count
                            << " invalid window attribute(s):" << lines.str();
}

}  // namespace tensortune::graph::onnx_detail

#endif  // TT_WITH_ONNX

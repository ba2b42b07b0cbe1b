// SPDX-License-Identifier: Apache-2.0
// A whole model as a dataflow graph: named values (inputs, constants, node outputs) with static
// shapes, and nodes in topological order. The op vocabulary is ONNX's (op types and attribute
// names), so an imported model needs no translation table; passes rewrite it in place.
#pragma once

#include "tensortune/ir/type.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tensortune::graph {

/// Constant contents, row-major: `floats` for floating-point values, `ints` for integer (and
/// boolean) ones; exactly one of them holds numel() elements.
struct ConstantData {
  std::vector<float> floats;
  std::vector<int64_t> ints;
};

/// A tensor of the graph.
struct Value {
  std::string name;
  ir::DataType dtype = ir::DataType::float32();
  std::vector<int64_t> shape;
  /// Set for initializers and folded constants; shared, so copying a graph is cheap.
  std::shared_ptr<const ConstantData> data;

  bool is_constant() const { return data != nullptr; }
  int64_t numel() const;
  /// "float32[1,64,56,56]".
  std::string describe() const;
};

/// A node attribute (ONNX's kinds that tensortune reads).
struct Attribute {
  enum class Kind : uint8_t { Int, Float, String, Ints, Floats };
  Kind kind = Kind::Int;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
};

/// One operation. Inputs and outputs are value names; an omitted optional input is "".
struct Node {
  std::string name;
  std::string op;  ///< ONNX op type: "Conv", "Gemm", "Relu", ...
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, Attribute> attrs;

  bool has_attr(const std::string& key) const { return attrs.count(key) != 0; }
  /// The attribute's value, or `fallback` when absent. UserError naming the node when present
  /// with another kind.
  int64_t attr_int(const std::string& key, int64_t fallback) const;
  double attr_float(const std::string& key, double fallback) const;
  std::string attr_string(const std::string& key, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& key,
                                 const std::vector<int64_t>& fallback) const;
  /// "node 'conv1' (Conv)".
  std::string describe() const;
};

/// A model: values by name, nodes in topological order, the graph inputs (non-constant values
/// the caller supplies) and outputs in declaration order.
class Graph {
 public:
  std::string name = "model";
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<Node> nodes;

  bool has_value(const std::string& key) const { return values_.count(key) != 0; }
  /// InternalError when absent.
  const Value& value(const std::string& key) const;
  /// Adds or replaces a value.
  void set_value(Value value);
  void erase_value(const std::string& key) { values_.erase(key); }
  const std::map<std::string, Value>& values() const { return values_; }

  /// The index of the node producing `value`, or -1 (an input or a constant).
  int producer(const std::string& value) const;
  /// How many node inputs read `value`, plus one when it is a graph output.
  int use_count(const std::string& value) const;
  /// A value name not used yet, starting with `base`.
  std::string fresh_name(const std::string& base) const;

  /// Checks the invariants: every node input is a graph input, a constant or an earlier node's
  /// output; every output is produced once; graph inputs and outputs exist. InternalError
  /// naming the broken node otherwise.
  void validate() const;
  /// One line per node ("conv1: Conv(x, w, b) -> y float32[1,8,8,8]"), for logs and tests.
  std::string to_string() const;

 private:
  std::map<std::string, Value> values_;
};

}  // namespace tensortune::graph

// SPDX-License-Identifier: Apache-2.0
// Test helper: small graphs written by hand (no ONNX needed), with deterministic constants.
#pragma once

#include "tensortune/graph/graph.h"

#include <cmath>
#include <string>
#include <vector>

namespace tensortune::graph::testing {

class Builder {
 public:
  Graph g;

  std::string input(const std::string& name, std::vector<int64_t> shape) {
    Value v;
    v.name = name;
    v.shape = std::move(shape);
    g.set_value(v);
    g.inputs.push_back(name);
    return name;
  }
  /// A float constant whose element i is `scale * sin(i + seed) + offset`.
  std::string constant(const std::string& name,
                       std::vector<int64_t> shape,
                       double scale = 0.5,
                       double offset = 0.0,
                       int seed = 1) {
    Value v;
    v.name = name;
    v.shape = std::move(shape);
    ConstantData d;
    for (int64_t i = 0; i < v.numel(); ++i) {
      d.floats.push_back(
          static_cast<float>(scale * std::sin(static_cast<double>(i + seed)) + offset));
    }
    v.data = std::make_shared<const ConstantData>(std::move(d));
    g.set_value(v);
    return name;
  }
  std::string ints(const std::string& name, std::vector<int64_t> values, bool scalar = false) {
    Value v;
    v.name = name;
    v.dtype = ir::DataType::int64();
    if (!scalar)
      v.shape = {static_cast<int64_t>(values.size())};
    ConstantData d;
    d.ints = std::move(values);
    v.data = std::make_shared<const ConstantData>(std::move(d));
    g.set_value(v);
    return name;
  }
  /// Adds a node with one output of `shape` (float32 unless `dtype` is given).
  std::string node(const std::string& op,
                   std::vector<std::string> inputs,
                   const std::string& out,
                   std::vector<int64_t> shape,
                   std::map<std::string, Attribute> attrs = {},
                   ir::DataType dtype = ir::DataType::float32()) {
    Value v;
    v.name = out;
    v.shape = std::move(shape);
    v.dtype = dtype;
    g.set_value(v);
    g.nodes.push_back(Node{out + "_node", op, std::move(inputs), {out}, std::move(attrs)});
    return out;
  }
  void output(const std::string& name) { g.outputs.push_back(name); }
};

inline Attribute ints_attr(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}
inline Attribute int_attr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  return a;
}
inline Attribute float_attr(double v) {
  Attribute a;
  a.kind = Attribute::Kind::Float;
  a.f = v;
  return a;
}

/// Deterministic inputs: element i is sin(0.7 i + 0.3).
inline std::vector<float> wave(int64_t n) {
  std::vector<float> r;
  for (int64_t i = 0; i < n; ++i)
    r.push_back(static_cast<float>(std::sin(0.7 * static_cast<double>(i) + 0.3)));
  return r;
}

}  // namespace tensortune::graph::testing

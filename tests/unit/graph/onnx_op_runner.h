// SPDX-License-Identifier: Apache-2.0
// Test helper for the operator tests: a tiny ONNX model built in C++ is imported, optimized,
// compiled with default schedules and run; the outputs are compared with a naive reference.
// Only usable where onnx_test_models.h is (the test target links ONNX).
#pragma once

#include "onnx_test_models.h"
#include "tensortune/driver/compile.h"
#include "tensortune/graph/executor.h"
#include "tensortune/graph/onnx_import.h"
#include "tensortune/graph/passes.h"
#include "tensortune/target/target.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace tensortune::test {

/// Imports, optimizes, builds and runs `model` on `inputs` (one per graph input, float32).
inline std::vector<std::vector<float>> run_onnx(const onnx::ModelProto& model,
                                                const std::vector<std::vector<float>>& inputs) {
  graph::Graph g = graph::import_onnx_bytes(serialize(model), "op.onnx");
  graph::optimize(g);
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  graph::Executable exe = graph::Executable::build(g, compiler);
  return exe.run(inputs);
}

/// Row-major strides of `shape`.
inline std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    s[d - 1] = s[d] * shape[d];
  return s;
}

/// The multi-index of flat position `flat` in `shape`.
inline std::vector<int64_t> unravel(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> ix(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    ix[d] = flat % shape[d];
    flat /= shape[d];
  }
  return ix;
}

inline int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// The flat position in `in` read by output index `ix` under ONNX broadcasting.
inline int64_t broadcast_flat(const std::vector<int64_t>& ix, const std::vector<int64_t>& in) {
  size_t offset = ix.size() - in.size();
  std::vector<int64_t> s = strides_of(in);
  int64_t flat = 0;
  for (size_t d = 0; d < in.size(); ++d)
    flat += (in[d] == 1 ? 0 : ix[d + offset]) * s[d];
  return flat;
}

/// Deterministic values: element i is sin(0.7 i + seed) * scale + offset.
inline std::vector<float> wave(int64_t n, double seed = 0.3, double scale = 1, double offset = 0) {
  std::vector<float> r;
  for (int64_t i = 0; i < n; ++i)
    r.push_back(static_cast<float>(std::sin(0.7 * static_cast<double>(i) + seed) * scale + offset));
  return r;
}

inline void expect_near_all(const std::vector<float>& got,
                            const std::vector<float>& want,
                            const std::string& what,
                            double tolerance = 1e-5) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tolerance) << what << " element " << i;
}

inline void add_int_attr(onnx::NodeProto* node, const std::string& name, int64_t v) {
  add_attr(node, name, onnx::AttributeProto::INT)->set_i(v);
}
inline void add_float_attr(onnx::NodeProto* node, const std::string& name, float v) {
  add_attr(node, name, onnx::AttributeProto::FLOAT)->set_f(v);
}
inline void add_string_attr(onnx::NodeProto* node, const std::string& name, const std::string& v) {
  add_attr(node, name, onnx::AttributeProto::STRING)->set_s(v);
}

}  // namespace tensortune::test

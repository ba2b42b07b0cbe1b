// SPDX-License-Identifier: Apache-2.0
// Small ONNX ModelProtos built in C++ for the importer tests. Only usable when the test target
// links ONNX (its CMake target defines ONNX_NAMESPACE); include it under that condition.
#pragma once

#include <cstdint>
#include <cstring>
#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

namespace tensortune::test {

/// An empty model at IR version 8 importing the default domain at `opset`.
inline onnx::ModelProto onnx_model(const std::string& graph_name, int64_t opset = 17) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("tensortune-tests");
  onnx::OperatorSetIdProto* op_set = model.add_opset_import();
  op_set->set_domain("");
  op_set->set_version(opset);
  model.mutable_graph()->set_name(graph_name);
  return model;
}

/// Fills a ValueInfoProto; a dimension of -1 is left unknown and `symbols[i]` (when not empty)
/// names dimension i symbolically instead of giving its value.
inline void set_tensor_type(onnx::ValueInfoProto* info,
                            const std::string& name,
                            int elem_type,
                            const std::vector<int64_t>& dims,
                            const std::vector<std::string>& symbols = {}) {
  info->set_name(name);
  onnx::TypeProto_Tensor* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    onnx::TensorShapeProto_Dimension* dim = shape->add_dim();
    if (i < symbols.size() && !symbols[i].empty()) {
      dim->set_dim_param(symbols[i]);
    } else if (dims[i] >= 0) {
      dim->set_dim_value(dims[i]);
    }
  }
}

inline void add_input(onnx::GraphProto* graph,
                      const std::string& name,
                      const std::vector<int64_t>& dims,
                      const std::vector<std::string>& symbols = {},
                      int elem_type = onnx::TensorProto::FLOAT) {
  set_tensor_type(graph->add_input(), name, elem_type, dims, symbols);
}

/// A graph output; a dimension of -1 is unknown (ONNX 1.12's checker wants a shape on every
/// graph output, but its dimensions may be left for shape inference).
inline void add_output(onnx::GraphProto* graph,
                       const std::string& name,
                       const std::vector<int64_t>& dims,
                       int elem_type = onnx::TensorProto::FLOAT) {
  set_tensor_type(graph->add_output(), name, elem_type, dims);
}

inline onnx::NodeProto* add_node(onnx::GraphProto* graph,
                                 const std::string& op,
                                 const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs,
                                 const std::string& name = "") {
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name(name);
  for (const std::string& in : inputs) {
    node->add_input(in);
  }
  for (const std::string& out : outputs) {
    node->add_output(out);
  }
  return node;
}

inline onnx::AttributeProto* add_attr(onnx::NodeProto* node,
                                      const std::string& name,
                                      onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(type);
  return attr;
}

inline void add_ints_attr(onnx::NodeProto* node,
                          const std::string& name,
                          const std::vector<int64_t>& values) {
  onnx::AttributeProto* attr = add_attr(node, name, onnx::AttributeProto::INTS);
  for (int64_t v : values) {
    attr->add_ints(v);
  }
}

/// A float tensor, in raw_data (little-endian bytes) or in float_data.
inline void fill_float_tensor(onnx::TensorProto* tensor,
                              const std::string& name,
                              const std::vector<int64_t>& dims,
                              const std::vector<float>& data,
                              bool raw) {
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) {
    tensor->add_dims(d);
  }
  if (raw) {
    std::string bytes(data.size() * sizeof(float), '\0');
    std::memcpy(bytes.data(), data.data(), bytes.size());
    tensor->set_raw_data(bytes);
    return;
  }
  for (float v : data) {
    tensor->add_float_data(v);
  }
}

/// An int64 tensor in raw_data.
inline void fill_int64_tensor(onnx::TensorProto* tensor,
                              const std::string& name,
                              const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& data) {
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) {
    tensor->add_dims(d);
  }
  std::string bytes(data.size() * sizeof(int64_t), '\0');
  std::memcpy(bytes.data(), data.data(), bytes.size());
  tensor->set_raw_data(bytes);
}

/// 0, 0.01, 0.02, ...: distinct, exactly comparable weights.
inline std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<float>(i) * 0.01f;
  }
  return v;
}

/// y = Relu(Conv(x, w, b)) with x [batch,3,8,8], w [4,3,3,3] (raw_data initializer), b [4]
/// (float_data initializer), 3x3 kernel, pads 1. The Conv is named "conv1", the Relu unnamed;
/// the intermediate "c" has no value_info and "y" no declared dimensions.
inline onnx::ModelProto conv_relu_model(const std::vector<std::string>& x_symbols = {}) {
  onnx::ModelProto model = onnx_model("conv relu");
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {1, 3, 8, 8}, x_symbols);
  fill_float_tensor(g->add_initializer(), "w", {4, 3, 3, 3}, ramp(4 * 3 * 3 * 3), true);
  fill_float_tensor(g->add_initializer(), "b", {4}, {0.5f, -0.5f, 1.0f, -1.0f}, false);
  onnx::NodeProto* conv = add_node(g, "Conv", {"x", "w", "b"}, {"c"}, "conv1");
  add_ints_attr(conv, "kernel_shape", {3, 3});
  add_ints_attr(conv, "pads", {1, 1, 1, 1});
  add_ints_attr(conv, "strides", {1, 1});
  add_attr(conv, "auto_pad", onnx::AttributeProto::STRING)->set_s("NOTSET");
  add_attr(conv, "group", onnx::AttributeProto::INT)->set_i(1);
  add_node(g, "Relu", {"c"}, {"y"});
  add_output(g, "y", {-1, -1, -1, -1});
  return model;
}

/// y = Gemm(x, w, b, transB=1, alpha=0.5) with x [2,16], w [8,16], b [8] (float_data).
inline onnx::ModelProto gemm_model() {
  onnx::ModelProto model = onnx_model("gemm");
  onnx::GraphProto* g = model.mutable_graph();
  add_input(g, "x", {2, 16});
  fill_float_tensor(g->add_initializer(), "w", {8, 16}, ramp(8 * 16), false);
  fill_float_tensor(g->add_initializer(), "b", {8}, ramp(8), false);
  onnx::NodeProto* gemm = add_node(g, "Gemm", {"x", "w", "b"}, {"y"}, "fc");
  add_attr(gemm, "transB", onnx::AttributeProto::INT)->set_i(1);
  add_attr(gemm, "alpha", onnx::AttributeProto::FLOAT)->set_f(0.5f);
  add_output(g, "y", {-1, -1});
  return model;
}

inline std::string serialize(const onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

}  // namespace tensortune::test

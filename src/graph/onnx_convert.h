// SPDX-License-Identifier: Apache-2.0
// Private to src/graph: conversions from ONNX protobuf messages (tensors, types, attributes) to
// graph values and attributes. Included only by the importer's files, only with TT_WITH_ONNX.
#pragma once

#include "tensortune/graph/graph.h"

#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

namespace tensortune::graph::onnx_detail {

/// The tensortune type of an ONNX element type; false for types the importer does not read
/// (FLOAT16, strings, complex, unsigned wider than 8 bits, ...).
bool to_dtype(int elem_type, ir::DataType* dtype);

/// "FLOAT16", "STRING", ... for messages.
std::string dtype_name(int elem_type);

/// True when the tensor keeps its data outside the model file.
bool has_external_data(const onnx::TensorProto& tensor);

/// A constant value `name` holding the tensor's contents (raw_data or the typed fields).
/// UserError naming the value (and `what`, the model) for external data, an unsupported dtype,
/// a negative dimension or a data size that does not match the dimensions.
Value constant_from_tensor(const onnx::TensorProto& tensor,
                           const std::string& name,
                           const std::string& what);

/// Rewrites a Constant node's value_float, value_int, value_floats or value_ints attribute as the
/// equivalent `value` tensor: ONNX 1.12's shape inference reads only `value` when a Reshape or
/// Unsqueeze takes its shape from a Constant.
void normalize_constant(onnx::NodeProto* node);

/// The constant value that a Constant node (attribute `value`, after normalize_constant) defines
/// under its output name. UserError for the other attributes (sparse_value, value_string, ...).
Value constant_from_node(const onnx::NodeProto& node,
                         const std::string& node_name,
                         const std::string& what);

/// Converts INT, FLOAT, STRING, INTS and FLOATS attributes; false for the other kinds.
bool to_attribute(const onnx::AttributeProto& proto, Attribute* attr);

/// The static shape of a tensor type; false when the type is not a tensor, has no shape or any
/// dimension is symbolic or unknown.
bool static_shape(const onnx::TypeProto& type, std::vector<int64_t>* shape);

/// "[N,3,224,224]" with symbolic dimensions by name and unknown ones as "?"; "unknown shape"
/// when there is no shape at all.
std::string describe_shape(const onnx::TypeProto& type);

/// Folds the shape arithmetic of `model` whose inputs are known (Shape and Size of values with a
/// static inferred shape; Gather, Unsqueeze, Squeeze, Concat, Slice, Cast, Add, Sub, Mul, Div and
/// Equal of small integer constants) into Constant nodes. True when any node was folded; shape
/// inference must run again then.
bool fold_shape_arithmetic(onnx::ModelProto* model, const std::string& what);

/// Rewrites the auto_pad of every Conv, MaxPool and AveragePool of an imported graph as explicit
/// pads computed from the node's inferred input and output shapes. UserError naming the node for
/// an unknown mode.
void resolve_auto_pad(Graph& graph);

/// Checks the window attributes of every Conv, ConvTranspose and pooling node (strides,
/// dilations and kernel_shape >= 1, pads >= 0, their lengths against the window's rank, group
/// >= 1 and dividing the known channel counts). ONNX's shape inference must not see them
/// otherwise: it divides by the stride. One UserError listing every problem, naming the nodes.
void check_window_attributes(const onnx::GraphProto& graph, const std::string& what);

}  // namespace tensortune::graph::onnx_detail

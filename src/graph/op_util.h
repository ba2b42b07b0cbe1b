// SPDX-License-Identifier: Apache-2.0
// Private to src/graph: small helpers shared by the op lowering, the passes and the executor.
#pragma once

#include "tensortune/graph/graph.h"
#include "tensortune/te/tensor.h"

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace tensortune::graph::detail {

/// An index constant (the lowered computes index in int32).
inline ir::Expr idx(int64_t v) {
  return ir::Expr(static_cast<int>(v));
}

int64_t numel_of(const std::vector<int64_t>& shape);
/// "[1,64,56,56]".
std::string shape_text(const std::vector<int64_t>& shape);
/// The single element of a one-element constant, as double. UserError naming the value when it
/// is not a constant or has more than one element.
double constant_scalar(const Value& value);
/// The elements of an integer constant (e.g. Reshape's shape). UserError when not a constant.
std::vector<int64_t> constant_ints(const Value& value);
/// True for the constant types that have a kernel buffer layout: float32, int64, int32, int8 and
/// uint8 (ONNX's bool).
bool constant_bytes_supported(ir::DataType t);
/// A constant's elements as a kernel reads them (little-endian, `dtype.bytes()` each).
/// InternalError for other types (check constant_bytes_supported first).
std::vector<uint8_t> constant_bytes(const Value& value);
/// `axis` in [-rank, rank) made non-negative; UserError naming `node` when out of range.
int64_t normalize_axis(const Node& node, int64_t axis, size_t rank);

/// The indices into an input of shape `in` read by output index `v` under ONNX broadcasting
/// (trailing dimensions aligned; a dimension of extent 1 is read at 0).
std::vector<ir::Expr> broadcast_indices(const std::vector<int64_t>& in,
                                        const std::vector<int64_t>& out,
                                        const std::vector<ir::Var>& v);

/// The ops lowered by lower_elementwise, which fusion appends to their producer's kernel.
std::set<std::string> elementwise_ops();

/// An element-wise node (op in elementwise_ops()) as one compute over its output's shape.
te::Tensor lower_elementwise(const Graph& graph,
                             const Node& node,
                             const std::function<te::Tensor(size_t)>& input,
                             const std::string& name);

/// The anchors other than Conv, Gemm and MatMul: MaxPool, AveragePool, GlobalAveragePool,
/// Softmax, LayerNormalization, ReduceMean, Transpose, Concat, Gather.
te::Tensor lower_anchor(const Graph& graph,
                        const Node& node,
                        const std::function<te::Tensor(size_t)>& input,
                        const std::string& name);

/// MaxPool or AveragePool of NCHW `x` with ceil_mode or asymmetric `pads` (op_lowering_pool.cpp).
te::Tensor pool_padded(const Graph& graph,
                       const Node& node,
                       const te::Tensor& x,
                       const std::vector<int64_t>& kernel,
                       const std::vector<int64_t>& pads,
                       const std::string& name);

/// Slice, Pad, Tile, DepthToSpace, SpaceToDepth and Resize; an undefined tensor for other ops.
te::Tensor lower_data_movement(const Graph& graph,
                               const Node& node,
                               const std::function<te::Tensor(size_t)>& input,
                               const std::string& name);
/// Resize: nearest and linear modes (op_lowering_resize.cpp).
te::Tensor lower_resize(const Graph& graph,
                        const Node& node,
                        const std::function<te::Tensor(size_t)>& input,
                        const std::string& name);

}  // namespace tensortune::graph::detail

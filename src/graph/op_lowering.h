// SPDX-License-Identifier: Apache-2.0
// Private to src/graph: one graph node as tensor expressions (te), with ONNX semantics
// (broadcasting, attributes, constant operands that are really parameters).
#pragma once

#include "tensortune/graph/graph.h"
#include "tensortune/te/tensor.h"

#include <functional>
#include <string>

namespace tensortune::graph::detail {

/// How a node is treated by fusion.
enum class OpClass : uint8_t {
  Anchor,       ///< a reduction or data movement that starts a kernel (Conv, Gemm, Softmax, ...)
  Elementwise,  ///< one output element from the same-index elements of its inputs (broadcast)
  View,         ///< the same bytes under another shape (Reshape, Flatten, Squeeze, ...)
  ShapeOf,      ///< metadata only (Shape): always folded to a constant
};
OpClass op_class(const std::string& op);

/// The te tensor of `node`'s first output. `input(i)` returns the te tensor of input i (a
/// placeholder or a tensor built earlier in the same kernel); inputs that are parameters
/// (Reshape's shape, Clip's bounds, a scalar constant operand) are read from the graph's
/// constant data instead and `input` is not called for them. Computes are named `name`,
/// `name_pad`, ... UserError naming the node on unsupported attributes. A Conv with `winograd`
/// > 0 (a tile winograd_tile() allows) is computed by Winograd's F(winograd x winograd, 3 x 3).
te::Tensor lower_node(const Graph& graph,
                      const Node& node,
                      const std::function<te::Tensor(size_t)>& input,
                      const std::string& name,
                      int64_t winograd = 0);

/// The Winograd tile `node` can be computed with, or 0: a float32 Conv with a 3x3 window, stride
/// and dilation 1, one group and the same padding on every side; 4 (F(4x4, 3x3)) unless the
/// output is under 8 wide, then 2.
int64_t winograd_tile(const Graph& graph, const Node& node);

/// True when input `i` of `node` is read from constant data at lowering time (a parameter or a
/// one-element constant folded into the expression) rather than passed as a buffer.
bool input_is_parameter(const Graph& graph, const Node& node, size_t i);

}  // namespace tensortune::graph::detail

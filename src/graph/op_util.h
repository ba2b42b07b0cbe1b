// SPDX-License-Identifier: Apache-2.0
// Private to src/graph: small helpers shared by the op lowering, the passes and the executor.
#pragma once

#include "tensortune/graph/graph.h"
#include "tensortune/te/tensor.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tensortune::graph::detail {

int64_t numel_of(const std::vector<int64_t>& shape);
/// "[1,64,56,56]".
std::string shape_text(const std::vector<int64_t>& shape);
/// The single element of a one-element constant, as double. UserError naming the value when it
/// is not a constant or has more than one element.
double constant_scalar(const Value& value);
/// The elements of an integer constant (e.g. Reshape's shape). UserError when not a constant.
std::vector<int64_t> constant_ints(const Value& value);
/// `axis` in [-rank, rank) made non-negative; UserError naming `node` when out of range.
int64_t normalize_axis(const Node& node, int64_t axis, size_t rank);

/// The anchors other than Conv, Gemm and MatMul: MaxPool, AveragePool, GlobalAveragePool,
/// Softmax, LayerNormalization, ReduceMean, Transpose, Concat, Gather.
te::Tensor lower_anchor(const Graph& graph,
                        const Node& node,
                        const std::function<te::Tensor(size_t)>& input,
                        const std::string& name);

}  // namespace tensortune::graph::detail

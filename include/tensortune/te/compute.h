// SPDX-License-Identifier: Apache-2.0
// Declaring computations: placeholder, compute, reduce_axis and the reductions.
#pragma once

#include "tensortune/te/tensor.h"

#include <functional>
#include <string>
#include <vector>

namespace tensortune::te {

/// An input tensor. Throws UserError on an empty name or a non-positive extent.
Tensor placeholder(std::vector<int64_t> shape, ir::DataType dtype, std::string name);

/// A reduction axis over [0, extent), named `name` (e.g. "k").
ir::IterVar reduce_axis(int64_t extent, std::string name);

/// out[axes] = fn(axes). Axis variables are named i, j, k, l, ... unless `axis_names` is given.
/// `fn` may return a reduction (sum/max_reduce/...) at the top only; anywhere else is a UserError,
/// as is a body reading a tensor with the wrong number of indices.
Tensor compute(std::vector<int64_t> shape,
               const std::function<ir::Expr(const std::vector<ir::Var>&)>& fn, std::string name,
               std::string tag = "", std::vector<std::string> axis_names = {});

/// Reductions of `source` over `axes`, with identities 0, 1, lowest, highest.
ir::Expr sum(ir::Expr source, std::vector<ir::IterVar> axes);
ir::Expr prod(ir::Expr source, std::vector<ir::IterVar> axes);
ir::Expr max_reduce(ir::Expr source, std::vector<ir::IterVar> axes);
ir::Expr min_reduce(ir::Expr source, std::vector<ir::IterVar> axes);

}  // namespace tensortune::te

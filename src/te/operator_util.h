// SPDX-License-Identifier: Apache-2.0
// Private to te: helpers shared by the operator files (shape text, checks, padding with an
// arbitrary fill expression).
#pragma once

#include "tensortune/te/tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::te::detail {

/// "[1, 64, 56, 56]".
std::string shape_str(const std::vector<int64_t>& shape);
/// Throws UserError "<op>: <what> must have <n> dimensions, got [..]".
void check_ndim(const char* op, const char* what, const Tensor& t, size_t n);
/// Throws UserError "<op>: element types differ (float32 vs int32)".
void check_same_dtype(const char* op, const Tensor& a, const Tensor& b);
/// Throws UserError "<op>: needs a float tensor, got int32".
void check_float(const char* op, const Tensor& t);
/// Pads every dimension of `x` by (before[d], after[d]) with `value`, a constant of x's type.
/// Reads are clamped into bounds, so the padded region never reads outside `x` even where a
/// select evaluates both branches. Tagged "injective".
Tensor pad_with(const Tensor& x,
                const std::vector<int64_t>& before,
                const std::vector<int64_t>& after,
                const ir::Expr& value,
                const std::string& name);

}  // namespace tensortune::te::detail

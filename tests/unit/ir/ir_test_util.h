// SPDX-License-Identifier: Apache-2.0
// Builders shared by the IR tests.
#pragma once

#include "tensortune/ir/expr.h"

namespace tensortune::ir::test_util {

/// A float32 constant.
inline Expr f32(double v) {
  return FloatImm::make(DataType::float32(), v);
}

}  // namespace tensortune::ir::test_util

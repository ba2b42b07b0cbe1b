// SPDX-License-Identifier: Apache-2.0
// Private to src/schedule: finding and redirecting the tensor reads (ir::Load)
// of an operation's body. Used for stage consumers/producers and by
// cache_read/cache_write.
#pragma once

#include "tensortune/ir/expr.h"
#include "tensortune/te/tensor.h"

#include <vector>

namespace tensortune::schedule {

/// True when `op`'s body loads from `buffer` (by identity). Placeholders read
/// nothing.
bool reads_buffer(const te::Operation& op, const ir::Buffer& buffer);
/// The buffers `op`'s body loads from, each once, in first-read order.
std::vector<ir::Buffer> buffers_read(const te::Operation& op);
/// `e` with every Load of `from` replaced by the same Load of `to`; everything
/// else untouched.
ir::Expr redirect_loads(const ir::Expr& e, const ir::Buffer& from, const ir::Buffer& to);

}  // namespace tensortune::schedule

// SPDX-License-Identifier: Apache-2.0
// Private to src/schedule: finding and redirecting the tensor reads (ir::Load)
// of an operation's body. Used for stage consumers/producers and by
// cache_read/cache_write.
#pragma once

#include "tensortune/ir/expr.h"
#include "tensortune/te/tensor.h"

#include <functional>
#include <vector>

namespace tensortune::schedule {

/// True when `op`'s body loads from `buffer` (by identity). Placeholders read
/// nothing.
bool reads_buffer(const te::Operation& op, const ir::Buffer& buffer);
/// The buffers `op`'s body loads from, each once, in first-read order.
std::vector<ir::Buffer> buffers_read(const te::Operation& op);
/// Maps the indices of a load of one buffer to those of another.
using IndexMap = std::function<std::vector<ir::Expr>(const std::vector<ir::Expr>&)>;

/// `e` with every Load of `from` replaced by a Load of `to` at the same indices (or at
/// `map(indices)` when a map is given); everything else untouched.
ir::Expr redirect_loads(const ir::Expr& e,
                        const ir::Buffer& from,
                        const ir::Buffer& to,
                        const IndexMap& map = {});

}  // namespace tensortune::schedule

// SPDX-License-Identifier: Apache-2.0
// Shared by the runtime's allocator and thread pool: the order in which their state is created,
// and therefore torn down.
#pragma once

namespace tensortune::runtime {

/// Creates tt_alloc's block cache when it does not exist yet (alloc.cpp).
void ensure_block_cache();

}  // namespace tensortune::runtime

// SPDX-License-Identifier: Apache-2.0
// Stable (platform-independent) hashing for workload keys and caches.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tensortune::support {

/// 64-bit FNV-1a of the bytes of `text`; identical on every platform and run.
uint64_t fnv1a64(std::string_view text);

/// `fnv1a64(text)` as 16 lower-case hex digits.
std::string hash_hex(std::string_view text);

/// Mixes `value` into `seed` (boost::hash_combine style, 64-bit).
uint64_t hash_combine(uint64_t seed, uint64_t value);

}  // namespace tensortune::support

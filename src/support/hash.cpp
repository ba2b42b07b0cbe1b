// SPDX-License-Identifier: Apache-2.0
// FNV-1a (Fowler, Noll, Vo) over bytes: simple, platform-independent and stable across releases,
// which is what workload keys stored in tuning logs need.
#include "tensortune/support/hash.h"

namespace tensortune::support {

uint64_t fnv1a64(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a 64-bit offset basis
  for (char c : text) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ULL;  // FNV 64-bit prime
  }
  return hash;
}

std::string hash_hex(std::string_view text) {
  static constexpr char kDigits[] = "0123456789abcdef";
  uint64_t hash = fnv1a64(text);
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<size_t>(i)] = kDigits[hash & 0xf];
    hash >>= 4;
  }
  return out;
}

uint64_t hash_combine(uint64_t seed, uint64_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

}  // namespace tensortune::support

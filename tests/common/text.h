// SPDX-License-Identifier: Apache-2.0
// Substring checks on generated text (C, CUDA C, IR dumps, error messages).
#pragma once

#include <cstddef>
#include <string>

namespace tensortune::test {

inline bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

/// Occurrences of `what` in `text`, overlapping ones included.
inline size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace tensortune::test

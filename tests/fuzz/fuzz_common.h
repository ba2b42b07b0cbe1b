// SPDX-License-Identifier: Apache-2.0
// Shared by the fuzz targets: input errors (UserError, ScheduleError) are expected outcomes of
// arbitrary bytes; anything else escaping a target (InternalError, std::bad_alloc, ...) reaches
// std::terminate, which libFuzzer and the replay driver both report as a crash.
#pragma once

#include "tensortune/support/error.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tensortune::fuzz {

inline std::string as_string(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Runs `body`, treating a user error as a handled input.
template <class F>
int guarded(F&& body) {
  try {
    body();
  } catch (const UserError&) {
  }
  return 0;
}

/// A broken invariant: a finding, reported with its message.
[[noreturn]] inline void finding(const std::string& message) {
  std::fprintf(stderr, "fuzz finding: %s\n", message.c_str());
  std::abort();
}

}  // namespace tensortune::fuzz

// SPDX-License-Identifier: Apache-2.0
// Test helper: the committed models of tests/models (written by scripts/make_models.py).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace tensortune::graph::testing {

/// The path of tests/models/`file` under TT_SOURCE_DIR, or else beside this header (CMake
/// compiles the tests by absolute path); "" when the file is absent.
inline std::string model_path(const std::string& file) {
  const char* root = std::getenv("TT_SOURCE_DIR");
  std::filesystem::path dir =
      root != nullptr ? std::filesystem::path(root) / "tests"
                      : std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
  std::filesystem::path path = dir / "models" / file;
  return std::filesystem::exists(path) ? path.string() : "";
}

}  // namespace tensortune::graph::testing

// SPDX-License-Identifier: Apache-2.0
// Levelled logging to stderr, enabled per module by TT_LOG=1 or TT_LOG=search=2,lower=3.
// Arguments are not evaluated when the level is off.
#pragma once

#include <iostream>
#include <string>
#include <string_view>

namespace tensortune::support {

/// True when messages of `level` from the module owning source file `file` are enabled.
/// The module is log_module_of(file, the project root at build time); the setting comes from
/// TT_LOG or set_log_spec().
bool log_enabled(const char* file, int level);

/// The module of source file `file`: under `source_root`, the folder after its leading "src/",
/// "tools/" or "include/tensortune/" ("" for tests/ and the like); a path relative to the build
/// folder is read the same way after its "../"; any other path, the folder after its last
/// "src/" or "tools/". Empty when none applies (lines then say "[tensortune]").
std::string_view log_module_of(std::string_view file, std::string_view source_root);

/// Overrides TT_LOG, e.g. "2" or "search=2,lower=3" (the CLI's -v/-vv use this).
void set_log_spec(const std::string& spec);

/// Writes one line to stderr with a "[module] " prefix when destroyed.
class LogLine {
 public:
  explicit LogLine(const char* file);
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;
  ~LogLine();
  std::ostream& stream();

 private:
  std::string buffer_;
  std::ostream* os_;
};

}  // namespace tensortune::support

/// `TT_LOG(1) << "message"`: 0 errors, 1 progress, 2 details, 3 IR dumps.
#define TT_LOG(level)                                           \
  if (!::tensortune::support::log_enabled(__FILE__, (level))) { \
  } else                                                        \
    ::tensortune::support::LogLine(__FILE__).stream()

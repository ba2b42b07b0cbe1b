// SPDX-License-Identifier: Apache-2.0
// Files a build writes for the user (headers, plans, weights): written whole or not at all.
#pragma once

#include <string>
#include <string_view>

namespace tensortune::support {

/// A temporary name beside `path` for writing it whole before renaming: "DIR/.NAME.tmp-PID".
std::string temp_path_beside(const std::string& path);

/// Writes `bytes` to a temporary file beside `path` and renames it over `path`: a reader (or a
/// process that has the file mapped) sees the old file or the new one, never half of one, and a
/// failed write leaves the old file as it was. UserError "WHAT: cannot write 'PATH'..." on
/// failure.
void write_file_atomically(const std::string& path,
                           std::string_view bytes,
                           const std::string& what);

}  // namespace tensortune::support

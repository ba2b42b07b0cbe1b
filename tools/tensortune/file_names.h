// SPDX-License-Identifier: Apache-2.0
// File names made from user-chosen names (a model's output names): safe characters only, and
// distinct, so that no file overwrites another written by the same command.
#pragma once

#include <string>
#include <vector>

namespace tensortune::cli {

/// `name` with every character other than letters, digits, '_', '-' and '.' replaced by '_';
/// "output" for an empty name, and "_" prefixed to "." and "..".
std::string safe_file_name(const std::string& name);

/// One distinct file stem per name, in order. A name that is already safe keeps its stem; a name
/// whose safe form is taken gets the first free "_1", "_2", ... suffix, in the order given, so
/// outputs `a/b` and `a_b` become `a_b_1` and `a_b`. Deterministic, and stems never differ only by
/// case, so they are distinct on case-insensitive file systems too.
std::vector<std::string> distinct_file_stems(const std::vector<std::string>& names);

}  // namespace tensortune::cli

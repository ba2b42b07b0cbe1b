// SPDX-License-Identifier: Apache-2.0
// Private to src/driver: the output folder and text files the exports write (export.cpp).
#pragma once

#include <string>

namespace tensortune::driver::detail {

/// Creates `dir` (and its parents) when missing; UserError naming it when that fails or it is
/// not a directory.
void make_directory(const std::string& dir);

/// Writes `text` to `path`, replacing it; UserError naming it when that fails.
void write_text(const std::string& path, const std::string& text);

/// Makes `path` a symbolic link to `target` (a name in the same folder), replacing a file or link
/// there: the library's former name (NAME.so, now libNAME.so) keeps working for one release.
/// UserError when `path` is something else or the link cannot be made.
void link_old_name(const std::string& path, const std::string& target);

}  // namespace tensortune::driver::detail

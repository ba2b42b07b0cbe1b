// SPDX-License-Identifier: Apache-2.0
// A side-by-side line diff for the report: two schedules' steps or loop nests aligned on their
// longest common subsequence of lines, with the lines that differ marked.
#pragma once

#include <string>
#include <vector>

namespace tensortune::cli {

struct DiffRow {
  std::string left, right;  ///< "" where one side has no line
  bool differs = false;
};

/// The rows of a side-by-side diff of `a` and `b` (lines): common lines side by side, and each
/// run of differing lines paired up in order.
std::vector<DiffRow> diff_lines(const std::vector<std::string>& a,
                                const std::vector<std::string>& b);

/// Splits text into lines (no trailing empty line).
std::vector<std::string> split_lines(const std::string& text);

/// An HTML table of the diff: two columns titled `left_title` and `right_title`, the differing
/// rows with class "d". Text is escaped.
std::string diff_table(const std::string& left_title,
                       const std::string& right_title,
                       const std::vector<DiffRow>& rows);

}  // namespace tensortune::cli

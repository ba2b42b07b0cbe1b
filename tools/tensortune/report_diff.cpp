// SPDX-License-Identifier: Apache-2.0
// The report's side-by-side diff (see report_diff.h).
#include "report_diff.h"

#include "svg_chart.h"

#include <sstream>

namespace tensortune::cli {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    out.push_back(line);
  return out;
}

std::vector<DiffRow> diff_lines(const std::vector<std::string>& a,
                                const std::vector<std::string>& b) {
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  std::vector<DiffRow> rows;
  std::vector<std::string> left, right;  // the current run of differing lines
  auto flush = [&] {
    for (size_t k = 0; k < std::max(left.size(), right.size()); ++k) {
      rows.push_back({k < left.size() ? left[k] : "", k < right.size() ? right[k] : "", true});
    }
    left.clear();
    right.clear();
  };
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      flush();
      rows.push_back({a[i], b[j], false});
      ++i;
      ++j;
    } else if (j >= m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1])) {
      left.push_back(a[i++]);
    } else {
      right.push_back(b[j++]);
    }
  }
  flush();
  return rows;
}

std::string diff_table(const std::string& left_title,
                       const std::string& right_title,
                       const std::vector<DiffRow>& rows) {
  std::string html = "<table class=diff><tr><th></th><th>" + html_escape(left_title) + "</th><th>" +
                     html_escape(right_title) + "</th></tr>";
  for (const DiffRow& r : rows) {
    html += std::string(r.differs ? "<tr class=d><td>&ne;</td>" : "<tr><td></td>") + "<td>" +
            html_escape(r.left) + "</td><td>" + html_escape(r.right) + "</td></tr>";
  }
  return html + "</table>";
}

}  // namespace tensortune::cli

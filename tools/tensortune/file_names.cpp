// SPDX-License-Identifier: Apache-2.0
// Safe, distinct file stems for user-chosen names (see file_names.h).
#include "file_names.h"

#include <cctype>
#include <set>

namespace tensortune::cli {

std::string safe_file_name(const std::string& name) {
  std::string r;
  for (char c : name)
    r += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ? c : '_';
  if (r.empty())
    return "output";
  return r == "." || r == ".." ? "_" + r : r;
}

namespace {

std::string lower(const std::string& s) {
  std::string r;
  for (char c : s)
    r += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

}  // namespace

std::vector<std::string> distinct_file_stems(const std::vector<std::string>& names) {
  std::vector<std::string> stems(names.size());
  std::set<std::string> taken;  // lower case
  // Names that need no change claim their stems first, so a renamed name never displaces them.
  for (size_t i = 0; i < names.size(); ++i) {
    if (safe_file_name(names[i]) == names[i] && taken.insert(lower(names[i])).second)
      stems[i] = names[i];
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (!stems[i].empty())
      continue;
    std::string base = safe_file_name(names[i]);
    std::string stem = base;
    for (int n = 1; !taken.insert(lower(stem)).second; ++n)
      stem = base + "_" + std::to_string(n);
    stems[i] = stem;
  }
  return stems;
}

}  // namespace tensortune::cli

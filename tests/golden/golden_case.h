// SPDX-License-Identifier: Apache-2.0
// Shared by the golden tests: a golden file is a header of comment lines (workload, target and
// schedule steps, plus prose), optionally a blank line, then the expected text.
#pragma once

#include "tensortune/schedule/schedule.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/json.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tensortune::golden {

struct GoldenCase {
  std::string header;  // the leading comment lines, kept verbatim on update
  bool blank_after_header = false;
  std::string workload, target, steps = "[]";
  std::string expected;
};

/// The files with extension `ext` (".txt") in TT_GOLDEN_DIR/`dir`, sorted.
inline std::vector<std::string> golden_files(const std::string& dir, const std::string& ext) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(TT_GOLDEN_DIR) / dir)) {
    if (entry.path().extension() == ext) {
      files.push_back(entry.path().filename().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// Reads a golden file whose header lines start with `comment` ("#", "//").
inline GoldenCase read_golden(const std::filesystem::path& path,
                              const std::string& comment,
                              const std::string& default_target) {
  std::ifstream in(path);
  GoldenCase c;
  c.target = default_target;
  std::string line;
  std::ostringstream body;
  bool in_header = true;
  while (std::getline(in, line)) {
    if (in_header && line.rfind(comment, 0) == 0) {
      c.header += line + "\n";
      for (const char* key : {"workload", "target", "steps"}) {
        const std::string prefix = comment + " " + key + ": ";
        if (line.rfind(prefix, 0) == 0) {
          const std::string k = key;
          (k == "workload" ? c.workload : k == "target" ? c.target : c.steps) =
              line.substr(prefix.size());
        }
      }
      continue;
    }
    if (in_header && line.empty()) {
      c.blank_after_header = true;
      in_header = false;
      continue;
    }
    in_header = false;
    body << line << "\n";
  }
  c.expected = body.str();
  return c;
}

/// Rewrites the golden file with `actual` under the same header.
inline void write_golden(const std::filesystem::path& path,
                         const GoldenCase& c,
                         const std::string& actual) {
  std::ofstream(path) << c.header << (c.blank_after_header ? "\n" : "") << actual;
}

/// With TT_UPDATE_GOLDEN=1 in the environment: rewrites the file with `actual` and returns true
/// (the caller skips). Otherwise expects the file's text to equal `actual` and returns false.
inline bool update_or_compare(const std::filesystem::path& path,
                              const GoldenCase& c,
                              const std::string& actual) {
  const char* update = std::getenv("TT_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    write_golden(path, c, actual);
    return true;
  }
  EXPECT_EQ(c.expected, actual) << "golden file " << path
                                << " differs; run scripts/update_golden.sh and review the diff";
  return false;
}

/// The workload of `c` with its steps applied.
inline schedule::LoopState golden_state(const GoldenCase& c) {
  te::Workload workload = te::make_workload(c.workload);
  std::vector<schedule::Step> steps;
  const support::Json json = support::Json::parse(c.steps);
  for (const support::Json& step : json.as_array("steps")) {
    steps.push_back(schedule::step_from_json(step));
  }
  return schedule::apply_steps(workload, steps);
}

/// A test name from a file name: the extension dropped, other characters made '_'.
inline std::string golden_case_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = std::filesystem::path(info.param).stem().string();
  std::replace_if(
      name.begin(), name.end(),
      [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) == 0; }, '_');
  return name;
}

}  // namespace tensortune::golden

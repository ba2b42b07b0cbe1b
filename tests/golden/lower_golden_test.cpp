// SPDX-License-Identifier: Apache-2.0
// Golden lowering tests: every tests/golden/lower/*.txt names a workload, a target and schedule
// steps in '#' header lines; the rest of the file is the expected lowered IR, compared as whole
// text. With TT_UPDATE_GOLDEN=1 in the environment the files are rewritten instead.
#include "tensortune/ir/ir_printer.h"
#include "tensortune/lower/lower.h"
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

namespace tensortune::lower {
namespace {

namespace fs = std::filesystem;

struct GoldenCase {
  std::string header;  // the '#' lines, kept verbatim on update
  std::string workload, target = "llvm -mcpu=znver4", steps = "[]";
  std::string expected;
};

std::vector<std::string> golden_files() {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(fs::path(TT_GOLDEN_DIR) / "lower")) {
    if (entry.path().extension() == ".txt") {
      files.push_back(entry.path().filename().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

GoldenCase read_case(const fs::path& path) {
  std::ifstream in(path);
  GoldenCase c;
  std::string line;
  std::ostringstream body;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) != 0) {
      body << line << "\n";
      continue;
    }
    c.header += line + "\n";
    auto value = [&](const std::string& key) -> const std::string* {
      return line.rfind("# " + key + ": ", 0) == 0 ? &line : nullptr;
    };
    for (const char* key : {"workload", "target", "steps"}) {
      if (value(key) != nullptr) {
        std::string v = line.substr(std::string("# ").size() + std::string(key).size() + 2);
        (std::string(key) == "workload" ? c.workload
         : std::string(key) == "target" ? c.target
                                        : c.steps) = v;
      }
    }
  }
  c.expected = body.str();
  return c;
}

std::string lower_case(const GoldenCase& c) {
  te::Workload workload = te::make_workload(c.workload);
  std::vector<schedule::Step> steps;
  const support::Json json = support::Json::parse(c.steps);
  for (const support::Json& step : json.as_array("steps")) {
    steps.push_back(schedule::step_from_json(step));
  }
  schedule::LoopState state = schedule::apply_steps(workload, steps);
  return ir::to_string(lower(state, target::Target::parse(c.target), function_name(workload)));
}

class LowerGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(LowerGolden, MatchesTheCommittedIR) {
  const fs::path path = fs::path(TT_GOLDEN_DIR) / "lower" / GetParam();
  GoldenCase c = read_case(path);
  ASSERT_FALSE(c.workload.empty()) << path << " has no '# workload: ' line";
  std::string actual = lower_case(c);
  if (actual.empty() || actual.back() != '\n') {
    actual += "\n";
  }
  const char* update = std::getenv("TT_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << c.header << actual;
    GTEST_SKIP() << "rewrote " << path;
  }
  EXPECT_EQ(c.expected, actual) << "golden file " << path
                                << " differs; run scripts/update_golden.sh and review the diff";
}

std::string case_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.size() - 4);
  std::replace_if(
      name.begin(), name.end(),
      [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) == 0; }, '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Files, LowerGolden, ::testing::ValuesIn(golden_files()), case_name);

}  // namespace
}  // namespace tensortune::lower

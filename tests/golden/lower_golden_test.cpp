// SPDX-License-Identifier: Apache-2.0
// Golden lowering tests: every tests/golden/lower/*.txt names a workload, a target and schedule
// steps in '#' header lines; the rest of the file is the expected lowered IR, compared as whole
// text. With TT_UPDATE_GOLDEN=1 in the environment the files are rewritten instead.
#include "golden/golden_case.h"

#include "tensortune/ir/ir_printer.h"
#include "tensortune/lower/lower.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace tensortune::lower {
namespace {

namespace fs = std::filesystem;

class LowerGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(LowerGolden, MatchesTheCommittedIR) {
  const fs::path path = fs::path(TT_GOLDEN_DIR) / "lower" / GetParam();
  const golden::GoldenCase c = golden::read_golden(path, "#", "llvm -mcpu=znver4");
  ASSERT_FALSE(c.workload.empty()) << path << " has no '# workload: ' line";
  const te::Workload workload = te::make_workload(c.workload);
  std::string actual = ir::to_string(
      lower(golden::golden_state(c), target::Target::parse(c.target), function_name(workload)));
  if (actual.empty() || actual.back() != '\n') {
    actual += "\n";
  }
  if (golden::update_or_compare(path, c, actual)) {
    GTEST_SKIP() << "rewrote " << path;
  }
}

INSTANTIATE_TEST_SUITE_P(Files,
                         LowerGolden,
                         ::testing::ValuesIn(golden::golden_files("lower", ".txt")),
                         golden::golden_case_name);

}  // namespace
}  // namespace tensortune::lower

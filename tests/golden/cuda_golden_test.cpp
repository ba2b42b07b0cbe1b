// SPDX-License-Identifier: Apache-2.0
// Golden CUDA C: every tests/golden/codegen/*.cu starts with '//' header lines naming a workload,
// a target and schedule steps, then a blank line, then the expected launch summary and source,
// compared as whole text. TT_UPDATE_GOLDEN=1 rewrites the files. Where NVRTC loads, the source
// must also compile to PTX.
#include "golden/golden_case.h"

#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/lower/lower.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace tensortune::codegen {
namespace {

namespace fs = std::filesystem;

CudaModule generate_case(const golden::GoldenCase& c) {
  const te::Workload workload = te::make_workload(c.workload);
  const target::Target target = target::Target::parse(c.target);
  return generate_cuda(lower::lower(golden::golden_state(c), target, lower::function_name(workload)),
                       target);
}

class CudaGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaGolden, MatchesTheCommittedSource) {
  const fs::path path = fs::path(TT_GOLDEN_DIR) / "codegen" / GetParam();
  const golden::GoldenCase c = golden::read_golden(path, "//", "cuda -arch=sm_90");
  ASSERT_FALSE(c.workload.empty()) << path << " has no '// workload: ' line";
  CudaModule module = generate_case(c);
  std::string actual = launch_summary(module) + module.source;
  if (golden::update_or_compare(path, c, actual)) {
    GTEST_SKIP() << "rewrote " << path;
  }
  std::string why;
  if (!nvrtc_available(&why)) {
    GTEST_SKIP() << "NVRTC not available, the source was not compiled: " << why;
  }
  NvrtcOutput out = compile_cuda(module.source, target::Target::parse(c.target), false);
  for (const CudaKernel& kernel : module.kernels) {
    EXPECT_NE(out.ptx.find(".entry " + kernel.name), std::string::npos) << kernel.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Files,
                         CudaGolden,
                         ::testing::ValuesIn(golden::golden_files("codegen", ".cu")),
                         golden::golden_case_name);

}  // namespace
}  // namespace tensortune::codegen

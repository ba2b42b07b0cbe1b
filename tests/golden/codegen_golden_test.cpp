// SPDX-License-Identifier: Apache-2.0
// Golden code generation: a vectorized multiply-add through the whole pipeline (te, schedule,
// lower, LLVM) for "llvm -mcpu=znver4 -vector-bits=512" must use 512-bit registers and FMA. The
// golden file holds every assembly line that touches a zmm register, whitespace-normalised;
// TT_UPDATE_GOLDEN=1 rewrites it (scripts/update_golden.sh).
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/ir/ops.h"
#include "tensortune/lower/lower.h"
#include "tensortune/te/compute.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace tensortune {
namespace {

std::string zmm_lines(const std::string& assembly) {
  std::istringstream in(assembly);
  std::ostringstream out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("zmm") == std::string::npos) {
      continue;
    }
    std::istringstream words(line.substr(0, line.find('#')));
    std::string word;
    std::string normalised;
    while (words >> word) {
      normalised += (normalised.empty() ? "" : " ") + word;
    }
    out << normalised << "\n";
  }
  return out.str();
}

TEST(CodegenGolden, VectorizedMultiplyAddUsesZmmFma) {
  ir::DataType f32 = ir::DataType::float32();
  te::Tensor a = te::placeholder({1024}, f32, "a");
  te::Tensor b = te::placeholder({1024}, f32, "b");
  te::Tensor c = te::placeholder({1024}, f32, "c");
  te::Tensor out = te::compute(
      {1024}, [&](const std::vector<ir::Var>& i) { return a(i[0]) * b(i[0]) + c(i[0]); }, "out");
  te::Workload w("fma_1024", {a, b, c}, {out});
  schedule::Schedule s{w.key(), {schedule::Split{"out", "i", 16},
                                 schedule::Annotate{"out", "i.i", ir::ForKind::Vectorized}}};
  target::Target t = target::Target::parse("llvm -mcpu=znver4 -vector-bits=512");
  std::string actual = zmm_lines(codegen::emit_assembly(lower::lower(w, s, t), t));
  EXPECT_NE(actual.find("vfmadd"), std::string::npos) << actual;

  std::string path = std::string(TT_GOLDEN_DIR) + "/codegen/fma_zmm_znver4.s";
  const char* update = std::getenv("TT_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << actual;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing golden file " << path;
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str());
}

}  // namespace
}  // namespace tensortune

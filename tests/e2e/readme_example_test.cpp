// SPDX-License-Identifier: Apache-2.0
// The README's C++ example, kept here verbatim (inside a test body) so it cannot rot.
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/lower/lower.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

TEST(ReadmeExample, BuildsAndRunsAScheduledMatmul) {
  using namespace tensortune;  // NOLINT(google-build-using-namespace): as in the README
  // --- README example begins ---
  te::Tensor A = te::placeholder({512, 512}, ir::DataType::float32(), "A");
  te::Tensor B = te::placeholder({512, 512}, ir::DataType::float32(), "B");
  te::Tensor C = te::matmul(A, B);  // C[i, j] = sum(A[i, k] * B[k, j], k)
  te::Workload w("matmul_512", {A, B}, {C});
  schedule::Schedule s{w.key(), {schedule::Tile{"C", "i", "j", 8, 64},
                                 schedule::Reorder{"C", {"k", "i.i", "j.i"}},
                                 schedule::Annotate{"C", "j.i", ir::ForKind::Vectorized},
                                 schedule::Annotate{"C", "i.o", ir::ForKind::Parallel}}};
  auto target = codegen::resolve_host(target::Target::parse("native"));
  codegen::Artifact kernel = codegen::build_cpu(lower::lower(w, s, target), target);
  std::vector<float> a(512 * 512, 1.f), b(512 * 512, 1.f), c(512 * 512);
  void* buffers[] = {a.data(), b.data(), c.data()};
  kernel(buffers);  // c[i] == 512
  // --- README example ends ---
  for (float v : c) {
    ASSERT_EQ(v, 512.0f);
  }
}

}  // namespace

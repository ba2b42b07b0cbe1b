// SPDX-License-Identifier: Apache-2.0
// For every operator of the library: at least 50 random valid schedules (splits with
// non-divisors, reorders, fuses, vectorize, unroll, parallel, compute_at, cache_write,
// cache_read, inline) each give the naive reference's result, through ir::eval and through the
// LLVM kernel. Inputs are random and never zero; outputs are poisoned with NaN first.
#include "common/reference.h"
#include "property/random_schedule.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/ir/eval.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/hash.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>

namespace tensortune::testing {
namespace {

constexpr int kSchedulesPerOperator = 50;

void poison_outputs(HostBuffers& buffers) {
  for (size_t i = buffers.num_inputs(); i < buffers.size(); ++i) {
    ir::DataType t = buffers.dtype(i);
    size_t n = buffers.num_elements(i);
    if (t == ir::DataType::float32()) {
      auto* p = static_cast<float*>(buffers.data(i));
      std::fill(p, p + n, std::numeric_limits<float>::quiet_NaN());
    } else {
      std::memset(buffers.data(i), 0x5A, n * t.bytes());
    }
  }
}

std::string describe(const std::vector<schedule::Step>& steps) {
  return schedule::to_string(schedule::Schedule{"", steps});
}

class OperatorProperty : public ::testing::TestWithParam<const char*> {};

TEST_P(OperatorProperty, RandomSchedulesMatchTheReference) {
  te::Workload workload = te::make_workload(GetParam());
  target::Target cpu = codegen::resolve_host(target::Target::parse("llvm -cores=2"));
  support::Rng rng(support::fnv1a64(GetParam()));
  for (int trial = 0; trial < kSchedulesPerOperator; ++trial) {
    std::vector<schedule::Step> steps = random_schedule(workload, rng);
    SCOPED_TRACE("schedule #" + std::to_string(trial) + ":\n" + describe(steps));
    ir::LoweredFunc func = lower::lower(workload, schedule::Schedule{workload.key(), steps}, cpu);

    HostBuffers interpreted(workload);
    interpreted.fill_inputs(1000 + trial);
    poison_outputs(interpreted);
    ir::eval(func, interpreted.args());
    ASSERT_TRUE(outputs_match_reference(workload, interpreted)) << "through ir::eval";

    HostBuffers compiled(workload);
    compiled.fill_inputs(1000 + trial);
    poison_outputs(compiled);
    codegen::Artifact kernel = codegen::build_cpu(func, cpu);
    std::vector<void*> args = compiled.args();
    std::vector<std::vector<uint64_t>> prepacked;  // constants in the kernel's layouts
    for (const ir::Buffer& b : func.prepacked) {
      prepacked.emplace_back(static_cast<size_t>(b.num_elements() * b.dtype().bytes() + 7) / 8);
      args.push_back(prepacked.back().data());
    }
    ASSERT_EQ(kernel.has_prepare(), !func.prepacked.empty());
    ASSERT_EQ(kernel.prepare(args.data()), 0);
    ASSERT_EQ(kernel(args.data()), 0);
    ASSERT_TRUE(outputs_match_reference(workload, compiled)) << "through the LLVM kernel";
  }
}

// Small shapes whose extents are not multiples of the usual factors, so tails are exercised.
INSTANTIATE_TEST_SUITE_P(
    Library,
    OperatorProperty,
    ::testing::Values("matmul:M=13,N=17,K=19",
                      "matmul:M=12,N=9,K=10,transpose_b=1",
                      "batch_matmul:B=2,M=9,N=11,K=7",
                      "dense:M=9,N=10,K=11,bias=1,epilogue=relu",
                      "dense:M=6,N=12,K=5,bias=1,epilogue=gelu",
                      "conv2d:N=1,C=4,H=9,W=9,K=5,R=3,S=3,stride=2,pad=1",
                      "conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3,pad=2,dilation=2,groups=2",
                      "conv2d:N=1,C=3,H=7,W=7,K=5,R=3,S=3,pad=1,layout=NHWC",
                      "depthwise_conv2d:N=1,C=5,H=9,W=9,R=3,S=3,stride=1,pad=1",
                      "pool2d:kind=max,N=1,C=3,H=9,W=9,R=3,S=3,stride=2,pad=1",
                      "pool2d:kind=avg,N=1,C=3,H=9,W=9,R=3,S=3,stride=2,pad=1",
                      "softmax:M=5,N=13",
                      "layer_norm:M=5,N=13",
                      "add:M=7,N=19",
                      "mul:M=7,N=19",
                      "relu:M=7,N=19",
                      "gelu:M=7,N=19",
                      "transpose:M=7,N=19",
                      "pad:N=1,C=3,H=7,W=9,pad=2",
                      "matmul:M=8,N=8,K=8,dtype=int32"),
    [](const ::testing::TestParamInfo<const char*>& param_info) {
      std::string name;
      for (const char* c = param_info.param; *c != 0; ++c) {
        name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
      }
      return name;
    });

}  // namespace
}  // namespace tensortune::testing

// SPDX-License-Identifier: Apache-2.0
// Differential fuzz target (Halide's fuzz_schedule idea): byte 0 picks a tiny workload, the rest
// is schedule JSON. Every schedule that applies and lowers is interpreted by ir::eval and must
// match the naive reference; a mismatch aborts. The number of schedules checked is printed at exit.
#include "small_workload.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/te/operators.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const char* const kSpecs[] = {
    "matmul:M=8,N=8,K=8",
    "matmul:M=6,N=10,K=7",
    "batch_matmul:B=2,M=4,N=6,K=5",
    "dense:M=4,N=8,K=6,bias=1,epilogue=relu",
    "conv2d:N=1,C=2,H=6,W=5,K=3,R=3,S=3,stride=1,pad=1",
    "conv2d:N=1,C=3,H=7,W=6,K=4,R=3,S=3,stride=2,pad=1",
    "depthwise_conv2d:N=1,C=4,H=6,W=6,R=3,S=3,pad=1",
    "pool2d:N=1,C=2,H=4,W=4,R=2,S=2",
    "softmax:M=4,N=6",
    "layer_norm:M=4,N=8",
    "add:M=6,N=10",
    "transpose:M=6,N=5",
    "pad:N=1,C=1,H=2,W=3,pad=1",
    "matmul:M=5,N=4,K=3,dtype=int32",
};
constexpr size_t kNumSpecs = sizeof(kSpecs) / sizeof(kSpecs[0]);

size_t g_checked = 0;

void print_checked() {
  std::fprintf(stderr, "schedule_replay: %zu schedules checked\n", g_checked);
}

const tensortune::te::Workload& workload_at(size_t i) {
  static std::vector<tensortune::te::Workload> workloads = [] {
    std::vector<tensortune::te::Workload> all;
    for (const char* spec : kSpecs) {
      all.push_back(tensortune::te::make_workload(spec));
    }
    std::atexit(print_checked);
    return all;
  }();
  return workloads[i];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensortune;
  if (size == 0) {
    return 0;
  }
  const te::Workload& workload = workload_at(data[0] % kNumSpecs);
  std::string text = fuzz::as_string(data + 1, size - 1);
  return fuzz::guarded([&] {
    schedule::Schedule sched = schedule::parse_schedule(text);
    schedule::LoopState state = schedule::apply_steps(workload, sched.steps);
    fuzz::check_against_reference(workload, state);
    ++g_checked;
  });
}

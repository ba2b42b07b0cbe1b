// SPDX-License-Identifier: Apache-2.0
// Workload keys are identical across processes: te_print_key runs twice and must print the key
// computed in this process.
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace tensortune::te {
namespace {

/// Runs te_print_key on `spec` in a child process and returns what it printed.
std::string key_from_child(const std::string& spec) {
  std::string command = std::string("'") + TT_PRINT_KEY_PATH + "' '" + spec + "' 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return "<popen failed>";
  }
  std::string out;
  char chunk[256];
  while (std::fgets(chunk, sizeof chunk, pipe) != nullptr) {
    out += chunk;
  }
  int status = pclose(pipe);
  if (status != 0) {
    return "<exit status " + std::to_string(status) + ">";
  }
  if (!out.empty() && out.back() == '\n') {
    out.pop_back();
  }
  return out;
}

TEST(WorkloadKey, IsTheSameInOtherProcesses) {
  for (const std::string spec :
       {"matmul:M=64,N=32,K=16", "conv2d:N=1,C=8,H=14,W=14,K=16,R=3,S=3,pad=1,stride=2",
        "layer_norm:M=8,N=32", "softmax:M=4,N=10,dtype=float32"}) {
    std::string here = make_workload(spec).key();
    EXPECT_EQ(key_from_child(spec), here) << spec;
    EXPECT_EQ(key_from_child(spec), here) << spec;
  }
}

TEST(WorkloadKey, ChildReportsBadSpecs) {
  EXPECT_EQ(key_from_child("matmul:M=1"), "<exit status 256>");
}

}  // namespace
}  // namespace tensortune::te

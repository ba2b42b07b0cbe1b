// SPDX-License-Identifier: Apache-2.0
// te_print_key SPEC: prints the workload key of SPEC on stdout (used by key_test to check that
// keys are identical across processes).
#include "tensortune/support/error.h"
#include "tensortune/te/operators.h"

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: te_print_key SPEC\n";
    return 2;
  }
  try {
    std::cout << tensortune::te::make_workload(argv[1]).key() << "\n";
  } catch (const tensortune::Error& e) {
    std::cerr << "te_print_key: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

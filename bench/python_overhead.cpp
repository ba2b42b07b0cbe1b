// SPDX-License-Identifier: Apache-2.0
// The C++ side of bench/python_overhead.py: each --workload built as tensortune.build builds it
// with no_zero_shot and no_shipped (the driver's default schedule, JIT-compiled), then called
// through its function pointer on preallocated buffers. Prints "SPEC NS" per workload: the
// fastest of --repeat batches of --calls calls, in nanoseconds per call.
#include "args.h"
#include "tensortune/driver/compile.h"
#include "tensortune/te/operators.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fmt/format.h>
#include <iostream>
#include <optional>
#include <vector>

namespace {

using namespace tensortune;  // NOLINT(google-build-using-namespace): a small program

double ns_per_call(const driver::Compiled& c, int64_t calls, int64_t repeat) {
  std::vector<std::vector<unsigned char>> storage;
  std::vector<void*> buffers;
  for (const ir::Buffer& b : c.func.params) {
    int64_t bytes = b.dtype().bytes();
    for (int64_t d : b.shape())
      bytes *= d;
    storage.emplace_back(static_cast<size_t>(bytes), 0);
    buffers.push_back(storage.back().data());
  }
  const codegen::KernelFn fn = c.artifact.function();
  for (int64_t i = 0; i < calls; ++i)
    fn(buffers.data());
  double best = 1e300;
  for (int64_t r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < calls; ++i)
      fn(buffers.data());
    const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count() / static_cast<double>(calls));
  }
  return best;
}

int run(const std::vector<std::string>& args) {
  cli::ArgParser parser("python_overhead",
                        "python_overhead --workload SPEC [--workload SPEC ...] [--calls N] "
                        "[--repeat R]",
                        "Nanoseconds per call of each workload's default-schedule kernel, called "
                        "from C++.");
  parser.option("workload", "SPEC", "a workload spec", {}, true, true)
      .option("calls", "N", "calls per timed batch (default 20000)")
      .option("repeat", "R", "timed batches; the fastest counts (default 7)");
  std::optional<cli::ArgParser::Parsed> p = cli::parse_command_line(parser, args);
  if (!p)
    return 0;
  const int64_t calls = p->get_int("calls", 20000, 1, 1 << 30);
  const int64_t repeat = p->get_int("repeat", 7, 1, 1000);
  driver::Compiler compiler(nullptr, target::Target::parse("native"));
  for (const std::string& spec : p->get_all("workload")) {
    const driver::Compiled c = compiler.compile(te::make_workload(spec), spec);
    std::cout << fmt::format("{} {:.1f}\n", spec, ns_per_call(c, calls, repeat));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tensortune::cli::run_program("python_overhead", argc, argv, run);
}

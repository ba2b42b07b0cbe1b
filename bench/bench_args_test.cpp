// SPDX-License-Identifier: Apache-2.0
// The benchmarks' argument handling (bench_args.h): a typo or a bad value is an error (exit 2)
// before the benchmark starts, a failure while it runs exits 1.
#include "bench_args.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace bench = tensortune::bench;

namespace {

/// Runs run_with_options over `args` (after a program name) with the options "trials" and
/// "keep"; `ran` tells whether the body ran.
int run(
    std::vector<std::string> args, bool& ran, const std::function<int()>& body = [] { return 0; }) {
  args.insert(args.begin(), "bench");
  std::vector<char*> argv;
  for (std::string& a : args)
    argv.push_back(a.data());
  ran = false;
  return bench::run_with_options("bench", static_cast<int>(argv.size()), argv.data(),
                                 {"trials", "keep"}, [&] {
                                   ran = true;
                                   return body();
                                 });
}

}  // namespace

TEST(BenchArgs, ReadsAnOptionsValueOrTheFallback) {
  std::string a0 = "bench", a1 = "--trials=200", a2 = "--keep=/tmp/x";
  char* argv[] = {a0.data(), a1.data(), a2.data()};
  EXPECT_EQ(bench::option(3, argv, "trials", "1000"), "200");
  EXPECT_EQ(bench::option(3, argv, "keep", ""), "/tmp/x");
  EXPECT_EQ(bench::option(3, argv, "seeds", "0,1,2"), "0,1,2");
}

TEST(BenchArgs, ANumberIsTheWholeOfItsText) {
  EXPECT_EQ(bench::number("ms", "2.5"), 2.5);
  EXPECT_EQ(bench::integer("trials", "1000"), 1000);
  EXPECT_EQ(bench::integer("trials", "-3"), -3);
  for (const char* bad : {"", "abc", "12x", "1 2", "nan", "inf"})
    EXPECT_THROW(bench::number("ms", bad), std::invalid_argument) << bad;
  EXPECT_THROW(bench::integer("trials", "1.5"), std::invalid_argument);
  try {
    bench::integer("trials", "abc");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "--trials expects a number, not 'abc'");
  }
}

TEST(BenchArgs, AnUnknownOrEmptyArgumentExitsTwoWithoutRunning) {
  bool ran = true;
  EXPECT_EQ(run({"--trials=10", "--keep=d"}, ran), 0);
  EXPECT_TRUE(ran);
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--help"},
                                              {"--seedz=1"},
                                              {"trials=10"},
                                              {"--trials"},
                                              {"--trials="},
                                              {"--trials=10", "extra"}}) {
    EXPECT_EQ(run(bad, ran), 2) << bad.back();
    EXPECT_FALSE(ran) << bad.back();
  }
}

TEST(BenchArgs, ABadValueExitsTwoAndAFailureOne) {
  bool ran = false;
  EXPECT_EQ(
      run({"--trials=x"}, ran, [] { return static_cast<int>(bench::integer("trials", "x")); }), 2);
  EXPECT_TRUE(ran);
  EXPECT_EQ(run({}, ran, []() -> int { throw std::runtime_error("the worker died"); }), 1);
  EXPECT_EQ(run({}, ran, [] { return 3; }), 3);
}

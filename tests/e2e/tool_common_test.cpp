// SPDX-License-Identifier: Apache-2.0
// The helpers the tensortune binary and the benchmarks share: the argument parser.
#include "args.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tensortune::cli {
namespace {

ArgParser test_parser() {
  ArgParser parser("demo", "demo --name N [--tag T]...", "A parser for tests.");
  parser.option("name", "N", "a name", {}, true)
      .option("tag", "T", "a tag", {}, false, true)
      .option("mode", "M", "a mode", {"fast", "slow"})
      .option("count", "C", "a count")
      .flag("json", "json output");
  return parser;
}

TEST(ArgParser, AcceptsSpaceAndEqualsFormsFlagsAndRepeats) {
  ArgParser::Parsed p = test_parser().parse(
      {"--name", "x", "--tag=a", "--tag", "b=c", "--json", "--mode=slow", "-vv", "--count", "-3"});
  EXPECT_EQ(p.get("name"), "x");
  EXPECT_EQ(p.get_all("tag"), (std::vector<std::string>{"a", "b=c"}));
  EXPECT_TRUE(p.has("json"));
  EXPECT_EQ(p.get("mode"), "slow");
  EXPECT_EQ(p.get_int("count", 0, -10, 10), -3);
  EXPECT_EQ(p.verbosity, 2);
  EXPECT_FALSE(p.help);
  EXPECT_EQ(p.get("missing", "fallback"), "fallback");
}

TEST(ArgParser, HelpWinsOverOtherMistakes) {
  ArgParser::Parsed p = test_parser().parse({"--bogus", "-h"});
  EXPECT_TRUE(p.help);
  std::string help = test_parser().help_text();
  EXPECT_NE(help.find("usage: tensortune demo"), std::string::npos);
  EXPECT_NE(help.find("--mode M"), std::string::npos);
  EXPECT_NE(help.find("fast|slow"), std::string::npos);
}

TEST(ArgParser, RejectsMalformedCommandLinesWithUsageErrors) {
  std::vector<std::vector<std::string>> bad = {
      {"--name", "x", "--bogus"},         // unknown option
      {"--name"},                         // missing value
      {"--name", "--json"},               // value looks like an option
      {"--tag", "a"},                     // missing required option
      {"--name", "x", "--json=1"},        // a flag with a value
      {"--name", "x", "--mode", "warp"},  // not a choice
      {"--name", "x", "--name", "y"},     // not repeatable
      {"--name", "x", "stray"},           // positional
  };
  for (const auto& args : bad) {
    EXPECT_THROW(test_parser().parse(args), UsageError) << args.back();
  }
  ArgParser::Parsed p = test_parser().parse({"--name", "x", "--count", "7x"});
  EXPECT_THROW(p.get_int("count", 0, 0, 100), UsageError);
  try {
    test_parser().parse({"--name", "x", "--bogus"});
  } catch (const UsageError& e) {
    EXPECT_EQ(e.command(), "demo");
    EXPECT_NE(std::string(e.what()).find("unknown option '--bogus'"), std::string::npos);
  }
}

}  // namespace
}  // namespace tensortune::cli

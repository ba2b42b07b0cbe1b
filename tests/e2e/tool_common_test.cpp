// SPDX-License-Identifier: Apache-2.0
// The helpers the tensortune binary and the benchmarks share: the argument parser.
#include "args.h"
#include "file_names.h"
#include "tensortune/support/error.h"
#include "tensortune/support/log.h"

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
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

TEST(ArgParser, ReadsIntegerListsWholeItemsInRange) {
  ArgParser::Parsed p = test_parser().parse({"--name", "x", "--count", "64,,200,1000"});
  EXPECT_EQ(p.get_int_list("count", {}, 1, 1000), (std::vector<int64_t>{64, 200, 1000}));
  EXPECT_EQ(p.get_int_list("mode", {7}, 0, 10), (std::vector<int64_t>{7}));  // absent
  EXPECT_THROW(p.get_int_list("count", {}, 1, 999), UsageError);             // 1000 too large
  for (const char* bad : {"64,2x", "1.5", ",", ""}) {
    ArgParser::Parsed q = test_parser().parse({"--name", "x", "--count", bad});
    EXPECT_THROW(q.get_int_list("count", {}, 0, 100), UsageError) << bad;
  }
  try {
    test_parser().parse({"--name", "x", "--count=3,abc"}).get_int_list("count", {}, 0, 9);
    ADD_FAILURE() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "demo: each item of '--count' expects an integer in 0..9 (got 'abc')");
  }
}

TEST(ArgParser, AProgramOfItsOwnNamesItselfInTheUsage) {
  ArgParser bench("tune_convergence", "tune_convergence [--trials N]", "A benchmark.", "");
  bench.option("trials", "N", "trials");
  EXPECT_EQ(bench.help_text().rfind("usage: tune_convergence [--trials N]\n", 0), 0U);
}

TEST(ArgParser, TakesPositionalArgumentsOnlyWhenDeclared) {
  ArgParser files("files", "files DB [DB...] [--splits N]", "Reads databases.", "");
  files.positional("DB...", "databases", 1, 2).option("splits", "N", "splits");
  ArgParser::Parsed p = files.parse({"a.db", "--splits=3", "b.db"});
  EXPECT_EQ(p.positionals(), (std::vector<std::string>{"a.db", "b.db"}));
  EXPECT_EQ(p.get_int("splits", 0, 0, 9), 3);
  EXPECT_EQ(files.parse({"--", "-odd.db"}).positionals(), (std::vector<std::string>{"-odd.db"}));
  EXPECT_NE(files.help_text().find("DB..."), std::string::npos);
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"--splits=3"},            // none: at least one needed
           {"a.db", "b.db", "c.db"},  // three: at most two
           {"a.db", "-x"},            // an unknown short option is not a file
       }) {
    EXPECT_THROW(files.parse(bad), UsageError) << bad.back();
  }
}

TEST(RunProgram, MapsUsageErrorsToTwoAndFailuresToOne) {
  std::string arg0 = "prog";
  std::string arg1 = "--trials=abc";
  char* argv[] = {arg0.data(), arg1.data()};
  std::vector<std::string> seen;
  EXPECT_EQ(run_program("prog", 2, argv,
                        [&](const std::vector<std::string>& args) {
                          seen = args;
                          return 0;
                        }),
            0);
  EXPECT_EQ(seen, (std::vector<std::string>{"--trials=abc"}));
  ArgParser bench("prog", "prog [--trials N]", "A benchmark.", "");
  bench.option("trials", "N", "trials");
  bool ran = false;
  const auto body = [&](const std::vector<std::string>& args) {
    const ArgParser::Parsed p = bench.parse(args);
    p.get_int("trials", 1, 1, 100);
    ran = true;
    return 0;
  };
  EXPECT_EQ(run_program("prog", 2, argv, body), 2);  // not a number
  std::string typo = "--trails=5";
  argv[1] = typo.data();
  EXPECT_EQ(run_program("prog", 2, argv, body), 2);  // unknown option
  EXPECT_FALSE(ran);
  EXPECT_EQ(run_program("prog", 1, argv,
                        [](const std::vector<std::string>&) -> int {
                          throw std::runtime_error("disk full");
                        }),
            1);
}

TEST(ParseCommandLine, PrintsTheHelpOrAppliesTheVerbosity) {
  ArgParser bench("prog", "prog [--trials N]", "A benchmark.", "");
  bench.option("trials", "N", "trials");
  testing::internal::CaptureStdout();
  EXPECT_FALSE(parse_command_line(bench, {"--trials=3", "--help"}).has_value());
  EXPECT_NE(testing::internal::GetCapturedStdout().find("usage: prog [--trials N]"),
            std::string::npos);
  support::set_log_spec("0");
  // A source file of tools/ belongs to the module "tensortune" (the folder after "tools/").
  const char* file = "tools/tensortune/args.cpp";
  ASSERT_FALSE(support::log_enabled(file, 2));
  std::optional<ArgParser::Parsed> p = parse_command_line(bench, {"--trials=3", "-vv"});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->get_int("trials", 1, 1, 100), 3);
  EXPECT_TRUE(support::log_enabled(file, 2));
  EXPECT_FALSE(support::log_enabled(file, 3));
  support::set_log_spec("0");
}

TEST(FileNames, CollidingOutputNamesGetDistinctStems) {
  // `a/b` sanitizes to `a_b`, which another output already is: that one keeps its name.
  EXPECT_EQ(distinct_file_stems({"a/b", "a_b"}), (std::vector<std::string>{"a_b_1", "a_b"}));
  EXPECT_EQ(distinct_file_stems({"a_b", "a/b", "a:b", "a_b_1"}),
            (std::vector<std::string>{"a_b", "a_b_2", "a_b_3", "a_b_1"}));
  EXPECT_EQ(distinct_file_stems({"y", "Y"}), (std::vector<std::string>{"y", "Y_1"}));
  EXPECT_EQ(distinct_file_stems({"", "..", "logits"}),
            (std::vector<std::string>{"output", "_..", "logits"}));
  EXPECT_EQ(safe_file_name("../x"), ".._x");
}

}  // namespace
}  // namespace tensortune::cli

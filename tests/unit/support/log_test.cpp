// SPDX-License-Identifier: Apache-2.0
// Log specs: global and per-module levels, module detection from source paths, lazy arguments,
// and whole lines under concurrent writers.
#include "tensortune/support/log.h"

#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace tensortune::support {
namespace {

TEST(LogSpec, GlobalLevelEnablesEveryModuleUpToIt) {
  set_log_spec("2");
  EXPECT_TRUE(log_enabled("/repo/src/search/tuner.cpp", 2));
  EXPECT_TRUE(log_enabled("/repo/src/lower/lower.cpp", 1));
  EXPECT_FALSE(log_enabled("/repo/src/lower/lower.cpp", 3));
}

TEST(LogSpec, PerModuleLevelsOverrideTheDefault) {
  set_log_spec("search=2,lower=3");
  EXPECT_TRUE(log_enabled("/repo/src/search/tuner.cpp", 2));
  EXPECT_FALSE(log_enabled("/repo/src/search/tuner.cpp", 3));
  EXPECT_TRUE(log_enabled("/repo/src/lower/passes/unroll.cpp", 3));
  EXPECT_FALSE(log_enabled("/repo/src/ir/expr.cpp", 1));
  EXPECT_TRUE(log_enabled("/repo/src/ir/expr.cpp", 0));  // errors stay on
}

TEST(LogSpec, MixesADefaultWithModuleOverrides) {
  set_log_spec("1, codegen=3");
  EXPECT_TRUE(log_enabled("/repo/src/measure/runner.cpp", 1));
  EXPECT_FALSE(log_enabled("/repo/src/measure/runner.cpp", 2));
  EXPECT_TRUE(log_enabled("/repo/src/codegen/llvm_codegen.cpp", 3));
}

TEST(LogSpec, ModuleIsTheFolderAfterTheLastSrcOrTools) {
  set_log_spec("tensortune=2,lower=1");
  EXPECT_TRUE(log_enabled("tools/tensortune/main.cpp", 2));
  // A checkout that itself lives under a "src" folder: the innermost src/ decides.
  EXPECT_TRUE(log_enabled("/home/me/src/tt/src/lower/lower.cpp", 1));
  EXPECT_FALSE(log_enabled("/home/me/src/tt/src/lower/lower.cpp", 2));
  // "mysrc/" is not "src/".
  EXPECT_FALSE(log_enabled("/repo/mysrc/lower/x.cpp", 1));
}

TEST(LogModule, ComesFromThePathInsideTheProjectRoot) {
  // A checkout at /src: its tests/ folder is not a module named "tests", its src/ is not "src".
  EXPECT_EQ(log_module_of("/src/tests/unit/support/log_test.cpp", "/src"), "");
  EXPECT_EQ(log_module_of("/src/src/lower/lower.cpp", "/src"), "lower");
  EXPECT_EQ(log_module_of("/src/tools/tensortune/main.cpp", "/src/"), "tensortune");
  EXPECT_EQ(log_module_of("/src/include/tensortune/ir/expr.h", "/src"), "ir");
  EXPECT_EQ(log_module_of("/home/me/src/tt/tests/x.cpp", "/home/me/src/tt"), "");
  // Relative to the build folder (ccache's base_dir), and outside the root: searched as before.
  EXPECT_EQ(log_module_of("../src/search/tuner.cpp", "/src"), "search");
  EXPECT_EQ(log_module_of("../../tests/x.cpp", "/src"), "");
  EXPECT_EQ(log_module_of("/repo/src/search/tuner.cpp", "/src"), "search");
  EXPECT_EQ(log_module_of("/srcx/src/ir/a.cpp", "/src"), "ir");
}

TEST(LogSpec, RejectsMalformedSpecs) {
  EXPECT_THROW(set_log_spec("search=high"), UserError);
  EXPECT_THROW(set_log_spec("=2"), UserError);
  EXPECT_THROW(set_log_spec("-1"), UserError);
  try {
    set_log_spec("lower=x");
    FAIL() << "no exception";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
}

TEST(LogLine, WritesPrefixedLineToStderrOnlyWhenEnabled) {
  set_log_spec("0");
  int evaluated = 0;
  auto count = [&evaluated] {
    return ++evaluated;
  };
  testing::internal::CaptureStderr();
  TT_LOG(1) << "hidden " << count();
  TT_LOG(0) << "shown " << count();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(evaluated, 1);  // the disabled line's arguments never ran
  EXPECT_EQ(err, "[tensortune] shown 1\n");
}

TEST(LogLine, PrefixesTheModuleName) {
  set_log_spec("1");
  testing::internal::CaptureStderr();
  {
    LogLine line("/repo/src/search/tuner.cpp");
    line.stream() << "round " << 3;
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "[search] round 3\n");
}

TEST(LogLine, ConcurrentWritersProduceWholeLines) {
  set_log_spec("1");
  testing::internal::CaptureStderr();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 50; ++i) {
        TT_LOG(1) << "thread " << t << " line " << i << " end";
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  std::istringstream lines(testing::internal::GetCapturedStderr());
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    EXPECT_EQ(line.rfind("[tensortune] thread ", 0), 0U) << line;
    EXPECT_EQ(line.substr(line.size() - 4), " end") << line;
  }
  EXPECT_EQ(count, 200);
}

}  // namespace
}  // namespace tensortune::support

// SPDX-License-Identifier: Apache-2.0
// bench/cost_model_quality's --dump on a small tuned database: a header of column names, one row
// per record with that many columns, each group's best scored 1; an unwritable path is an input
// error. (cli_runner's TT_TENSORTUNE_PATH is the bench's executable here; TT_TUNE_PATH is
// tensortune, which tunes the database.)
#include "cli_runner.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace tensortune {
namespace {

using e2e::run_cli;
using e2e::temp_path;

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream in(line);
  for (std::string cell; std::getline(in, cell, '\t');) {
    cells.push_back(cell);
  }
  return cells;
}

/// A new database at temp_path(name) with `trials` records of a 32x32x32 matmul, tuned by
/// tensortune.
std::string tuned_database(const std::string& name, int trials) {
  const std::string db = temp_path(name);
  std::remove(db.c_str());
  const std::string tune = std::string("'") + TT_TUNE_PATH +
                           "' tune --workload matmul:M=32,N=32,K=32 --target 'llvm -cores=1' "
                           "--db '" +
                           db + "' --trials " + std::to_string(trials) +
                           " --batch 8 --seed 0 > /dev/null 2>&1";
  EXPECT_EQ(std::system(tune.c_str()), 0) << tune;
  return db;
}

TEST(CostModelQuality, DumpWritesOneRowPerRecordUnderAHeader) {
  const std::string db = tuned_database("cost_model_quality_dump.db", 24);
  const std::string dump = temp_path("cost_model_quality_dump.tsv");
  e2e::CliResult r = run_cli("'" + db + "' --splits=1 --dump '" + dump + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cost_model_quality: 24 samples"), std::string::npos) << r.out;

  std::istringstream text(e2e::read_text(dump));
  std::string line;
  ASSERT_TRUE(std::getline(text, line));
  const std::vector<std::string> header = split_tabs(line);
  ASSERT_GT(header.size(), 5U);
  EXPECT_EQ(std::vector<std::string>(header.begin(), header.begin() + 5),
            (std::vector<std::string>{"group", "record", "sketch", "score", "knobs"}));
  EXPECT_EQ(header[5], "mean.float_add_sub");
  std::set<long> records;
  double best = 0;
  int rows = 0;
  while (std::getline(text, line)) {
    const std::vector<std::string> cells = split_tabs(line);
    ASSERT_EQ(cells.size(), header.size()) << line;
    EXPECT_NE(cells[0].find(db), std::string::npos) << cells[0];
    EXPECT_TRUE(records.insert(std::stol(cells[1])).second) << "record " << cells[1] << " twice";
    best = std::max(best, std::stod(cells[3]));
    EXPECT_EQ(cells[4].rfind("{", 0), 0U) << cells[4];
    ++rows;
  }
  EXPECT_EQ(rows, 24);
  EXPECT_EQ(best, 1.0);
}

TEST(CostModelQuality, AnUnwritableDumpPathIsAnInputError) {
  const std::string db = tuned_database("cost_model_quality_unwritable.db", 4);
  e2e::CliResult r = run_cli("'" + db + "' --dump /nonexistent/folder/x.tsv");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot write --dump file '/nonexistent/folder/x.tsv'"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace tensortune

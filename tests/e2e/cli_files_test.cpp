// SPDX-License-Identifier: Apache-2.0
// The files the command line writes and reads, as a careless or hostile user gives them: links,
// device nodes, FIFOs and directories as outputs; endless or oversized files as inputs.
#include "cli_runner.h"
#include "tensortune/database/database.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <vector>

namespace tensortune {
namespace {

using e2e::CliResult;
using e2e::read_text;
using e2e::run_cli;
using e2e::temp_path;
using e2e::write_text;

/// A database with one workload and one Ok record.
std::string small_database() {
  std::string path = temp_path("files.db");
  database::Database db = database::Database::open(path);
  database::WorkloadInfo w;
  w.key = "matmul_8x8x8_float32_0123456789abcdef";
  w.name = "matmul_8x8x8_float32";
  w.op = "matmul";
  w.canonical_text = "compute";
  w.flop_count = 1024;
  db.put_workload(w);
  database::Record r;
  r.workload_key = w.key;
  r.target = {"llvm -cores=2", "fp"};
  r.schedule = "{\"steps\":[]}";
  r.knobs = "{}";
  r.median_seconds = 1e-6;
  r.repeats = {1e-6};
  r.timestamp = 1700000000;
  db.add_records({r});
  return path;
}

TEST(CliFiles, ExportRefusesLinksNodesAndFoldersAndLeavesThemAsTheyWere) {
  const std::string db = small_database();
  const std::string victim = temp_path("victim.txt");
  write_text(victim, "precious");
  const std::string link = temp_path("link.jsonl");
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  const std::string fifo = temp_path("fifo.jsonl");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string folder = temp_path("folder.jsonl");
  std::filesystem::create_directory(folder);
  std::vector<std::string> outs = {link, fifo, folder};
  // A device node like /dev/null (made here, when allowed): before the fix, it was replaced.
  const std::string device = temp_path("null");
  const bool have_device = ::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
  if (have_device)
    outs.push_back(device);
  for (const std::string& out : outs) {
    for (const std::string& command : {std::string("db export"), std::string("report")}) {
      CliResult r = run_cli(command + " --db '" + db + "' --out '" + out + "'");
      EXPECT_EQ(r.exit_code, 1) << command << " " << out << ": " << r.err;
      EXPECT_NE(r.err.find("only a regular file is replaced"), std::string::npos) << r.err;
    }
  }
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(read_text(victim), "precious");
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  EXPECT_TRUE(std::filesystem::is_directory(folder));
  if (have_device) {
    EXPECT_TRUE(std::filesystem::is_character_file(device));
  }
  // No temporary file of theirs is left beside them (other tests share the folder and may be
  // writing their own at this moment).
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(victim).parent_path())) {
    const std::string name = entry.path().filename().string();
    for (const std::string& out : outs) {
      const std::string temp = "." + std::filesystem::path(out).filename().string() + ".tmp-";
      EXPECT_NE(name.rfind(temp, 0), 0U) << entry.path();
    }
  }
}

TEST(CliFiles, ExportToDashWritesStandardOutput) {
  const std::string db = small_database();
  const std::string file = temp_path("export.jsonl");
  ASSERT_EQ(run_cli("db export --db '" + db + "' --out '" + file + "'").exit_code, 0);
  CliResult r = run_cli("db export --db '" + db + "' --out -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, read_text(file));
  EXPECT_FALSE(std::filesystem::exists("-"));
  EXPECT_EQ(run_cli("db export --db '" + db + "' --out - --json").exit_code, 2);
}

TEST(CliFiles, ExportRescuesTheReadableRecordsAndNamesTheOthers) {
  const std::string db = small_database();
  {
    database::Database d = database::Database::open(db);
    database::Record r = d.all_records().at(0);
    r.timestamp += 1;
    d.add_records({r});
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE records SET repeats = 'not json' WHERE id = 1", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  // Before: a bare JSON error naming no record, and nothing exported.
  const std::string out = temp_path("rescued.jsonl");
  CliResult r = run_cli("db export --db '" + db + "' --out '" + out + "'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("warning: db export: skipped record #1: column 'repeats'"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("1 record could not be read and was not exported"), std::string::npos)
      << r.err;
  const std::string text = read_text(out);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;  // the workload, record #2
  // A folder given as the database: said so, not "disk I/O error".
  const std::string folder = temp_path("folder.db");
  std::filesystem::create_directory(folder);
  CliResult f = run_cli("db stats --db '" + folder + "'");
  EXPECT_EQ(f.exit_code, 1);
  EXPECT_NE(f.err.find("is a directory, not a database file"), std::string::npos) << f.err;
}

TEST(CliFiles, EndlessOrOversizedInputsAreRefusedBeforeTheyAreRead) {
  const std::string fifo = temp_path("fifo.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string big = temp_path("big.json");
  std::ofstream(big) << std::string((size_t{16} << 20) + 1, ' ');
  struct Case {
    std::string file, words;
  };
  for (const Case& c : std::vector<Case>{{"/dev/zero", "is a device, not a regular file"},
                                         {fifo, "is a FIFO, not a regular file"},
                                         {big, "more than the limit of 16777216"}}) {
    // Before: /dev/zero was read until std::bad_alloc (exit 70), a FIFO hung.
    CliResult show =
        run_cli("show --emit steps --workload matmul:M=8,N=8,K=8 --target native --schedule '" +
                c.file + "'");
    EXPECT_EQ(show.exit_code, 1) << c.file << ": " << show.err;
    EXPECT_NE(show.err.find("schedule file '" + c.file + "'"), std::string::npos) << show.err;
    EXPECT_NE(show.err.find(c.words), std::string::npos) << show.err;
  }
  const std::string db = temp_path("import.db");
  for (const std::string& file : {std::string("/dev/zero"), fifo}) {
    CliResult r = run_cli("db import --db '" + db + "' '" + file + "'");
    EXPECT_EQ(r.exit_code, 1) << file << ": " << r.err;
    EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(db));
}

}  // namespace
}  // namespace tensortune

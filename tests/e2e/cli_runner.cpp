// SPDX-License-Identifier: Apache-2.0
// Running the tensortune binary from end-to-end tests.
#include "cli_runner.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace tensortune::e2e {

namespace {

/// Every path temp_path handed out, removed when the test process ends, with the -wal, -shm and
/// -journal files SQLite leaves beside a database: a test that fails half-way, or removes only
/// the database itself, would otherwise leave them in the temp folder run after run.
struct TempPaths {
  std::vector<std::string> paths;
  ~TempPaths() {
    std::error_code ec;
    for (const std::string& p : paths) {
      for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        std::filesystem::remove_all(p + suffix, ec);
    }
  }
};

TempPaths& temp_paths() {
  static TempPaths paths;
  return paths;
}

}  // namespace

std::string temp_path(const std::string& name) {
  static int counter = 0;
  std::string path = testing::TempDir() + "tt_cli_" + std::to_string(getpid()) + "_" +
                     std::to_string(counter++) + "_" + name;
  temp_paths().paths.push_back(path);
  return path;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

CliResult run_cli(const std::string& args) {
  std::string err_path = temp_path("stderr.txt");
  std::string command =
      std::string("'") + TT_TENSORTUNE_PATH + "' " + args + " 2>'" + err_path + "'";
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "popen failed for " << command;
    return result;
  }
  std::array<char, 4096> chunk{};
  for (size_t n; (n = fread(chunk.data(), 1, chunk.size(), pipe)) > 0;) {
    result.out.append(chunk.data(), n);
  }
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_text(err_path);
  std::remove(err_path.c_str());
  return result;
}

Background start_cli(const std::vector<std::string>& argv) {
  Background b;
  b.out_path = temp_path("bg_stdout.txt");
  b.err_path = temp_path("bg_stderr.txt");
  std::vector<std::string> words{TT_TENSORTUNE_PATH};
  words.insert(words.end(), argv.begin(), argv.end());
  std::vector<char*> args;
  for (std::string& w : words)
    args.push_back(w.data());
  args.push_back(nullptr);
  b.pid = fork();
  if (b.pid == 0) {
    setpgid(0, 0);  // its own process group, as a shell starts a job: kill(-pid) reaches it all
    const int out = open(b.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(b.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  EXPECT_GT(b.pid, 0) << "fork failed";
  return b;
}

int wait_cli(const Background& process) {
  int status = 0;
  if (waitpid(process.pid, &status, 0) != process.pid)
    return -1;
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace tensortune::e2e

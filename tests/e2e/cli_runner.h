// SPDX-License-Identifier: Apache-2.0
// Running the built tensortune binary from end-to-end tests: in the foreground through the shell
// (stdout and stderr kept apart), or in the background as a real child process to signal or kill.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace tensortune::e2e {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

/// A unique path under the test temp folder ending in `name`; removed (with SQLite's files beside
/// it) when the test process exits.
std::string temp_path(const std::string& name);
std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);

/// Runs `tensortune ARGS` (ARGS is shell text) and waits for it.
CliResult run_cli(const std::string& args);

/// A tensortune process started in the background with stdout and stderr sent to files.
struct Background {
  pid_t pid = -1;
  std::string out_path, err_path;
};
/// Starts `tensortune ARGV...` without a shell.
Background start_cli(const std::vector<std::string>& argv);
/// Waits for it; returns the exit code, or 128 + signal when killed by a signal.
int wait_cli(const Background& process);

}  // namespace tensortune::e2e

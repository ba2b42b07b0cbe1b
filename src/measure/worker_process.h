// SPDX-License-Identifier: Apache-2.0
// Private to src/measure: one tensortune-worker child process behind a socket pair. It is started
// on the first request and again after it dies or is killed; its stderr goes to an unlinked file
// whose tail explains a crash.
#pragma once

#include "measure/protocol.h"

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace tensortune::measure {

/// The worker command line after `--fd N`: `--memory-limit-mb M --threads T`, with M = 0
/// replaced by half of the machine's memory (at least 2 GiB) and T = 0 by the hardware thread
/// count.
std::vector<std::string> worker_args(int64_t memory_limit_mb, int threads);

/// "signal 11 (Segmentation fault)" or "exit status 3", followed by the worker's stderr tail.
std::string death_text(int signal, int exit_status, const std::string& stderr_tail);

class WorkerProcess {
 public:
  enum class Outcome { Reply, Timeout, Died };

  struct Exchange {
    Outcome outcome = Outcome::Reply;
    detail::Message reply;
    /// Died: the signal that killed the worker (0 when it exited), or its exit status.
    int signal = 0;
    int exit_status = 0;
    /// Died or Timeout: the last lines the worker wrote to stderr during this request.
    std::string stderr_tail;
  };

  /// `args` follow the executable and `--fd N` on the worker's command line.
  WorkerProcess(std::string path, std::vector<std::string> args);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  /// Sends `request` and waits up to `timeout_s` for the reply. On timeout the worker is killed;
  /// either way a dead worker is started again by the next request. Throws UserError only when a
  /// fresh worker fails to start.
  Exchange request(const detail::Message& request, double timeout_s);

  /// How many times the worker process was started.
  int generation() const { return generation_; }
  bool running() const { return pid_ > 0; }
  /// Closes the socket and reaps the worker (killing it after a short grace period).
  void stop();

 private:
  void start();
  /// Kills (when `kill_first`) and reaps the worker; fills signal and exit status.
  void reap(bool kill_first, Exchange* exchange);
  std::string stderr_since(long offset) const;
  long stderr_size() const;

  std::string path_;
  std::vector<std::string> args_;
  pid_t pid_ = -1;
  int socket_ = -1;
  int stderr_fd_ = -1;
  int generation_ = 0;
};

}  // namespace tensortune::measure

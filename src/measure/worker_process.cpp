// SPDX-License-Identifier: Apache-2.0
// Spawning, talking to, killing and reaping a measurement worker (see worker_process.h).
#include "measure/worker_process.h"

#include "tensortune/measure/timing.h"
#include "tensortune/support/error.h"
#include "tensortune/support/log.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <thread>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace tensortune::measure {
namespace {

constexpr double kStartTimeoutS = 120;
constexpr int kChildFd = 3;

/// A CLOEXEC duplicate of `fd` numbered above the child's fixed descriptors (0-3), so the
/// spawn's dup2 always changes the number and clears CLOEXEC only in the child.
int high_fd(int fd) {
  int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  TT_CHECK(dup >= 0) << "measure: fcntl(F_DUPFD_CLOEXEC): " << std::strerror(errno);
  ::close(fd);
  return dup;
}

/// An unlinked temporary file for the worker's stderr.
int stderr_file() {
  const char* dir = std::getenv("TMPDIR");
  std::string pattern = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") +
                        "/tensortune-worker-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  TT_USER_CHECK(fd >= 0) << "measure: cannot create a temporary file in '" << pattern
                         << "': " << std::strerror(errno);
  ::unlink(name.data());
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  return high_fd(fd);
}

}  // namespace

std::vector<std::string> worker_args(int64_t memory_limit_mb, int threads) {
  if (memory_limit_mb <= 0) {
    int64_t pages = ::sysconf(_SC_PHYS_PAGES);
    int64_t page = ::sysconf(_SC_PAGE_SIZE);
    memory_limit_mb = std::max<int64_t>(2048, pages > 0 && page > 0 ? pages * page / 2 >> 20 : 0);
  }
  if (threads <= 0) {
    threads = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  }
  return {"--memory-limit-mb", std::to_string(memory_limit_mb), "--threads",
          std::to_string(threads)};
}

std::string death_text(int signal, int exit_status, const std::string& stderr_tail) {
  std::string text = signal != 0 ? "signal " + std::to_string(signal) + " (" +
                                       std::string(::strsignal(signal)) + ")"
                                 : "exit status " + std::to_string(exit_status);
  if (!stderr_tail.empty()) {
    text += "; its stderr: " + stderr_tail;
  }
  return text;
}

WorkerProcess::WorkerProcess(std::string path, std::vector<std::string> args)
    : path_(std::move(path)), args_(std::move(args)) {}

WorkerProcess::~WorkerProcess() {
  stop();
}

void WorkerProcess::start() {
  int fds[2];
  TT_CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0)
      << "measure: socketpair: " << std::strerror(errno);
  int parent = high_fd(fds[0]);
  int child = high_fd(fds[1]);
  if (stderr_fd_ < 0) {
    stderr_fd_ = stderr_file();
  }
  std::vector<std::string> argv_text = {path_, "--fd", std::to_string(kChildFd)};
  argv_text.insert(argv_text.end(), args_.begin(), args_.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child, kChildFd);
  posix_spawn_file_actions_adddup2(&actions, stderr_fd_, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, path_.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(child);
  if (rc != 0) {
    ::close(parent);
    throw UserError("measure: cannot start the worker '" + path_ + "': " + std::strerror(rc));
  }
  pid_ = pid;
  socket_ = parent;
  ++generation_;
  long offset = stderr_size();
  detail::Message hello;
  detail::ReadStatus st = detail::read_message(socket_, now_seconds() + kStartTimeoutS, &hello);
  if (st != detail::ReadStatus::Ok || !hello.header.contains("ready")) {
    Exchange dead;
    reap(true, &dead);
    throw UserError("measure: the worker '" + path_ + "' did not start (" +
                    (dead.signal != 0 ? "signal " + std::to_string(dead.signal)
                                      : "exit status " + std::to_string(dead.exit_status)) +
                    ")" + (offset >= 0 ? ": " + stderr_since(offset) : std::string()));
  }
  TT_LOG(2) << "measure: worker " << pid_ << " started (" << path_ << ")";
}

WorkerProcess::Exchange WorkerProcess::request(const detail::Message& request, double timeout_s) {
  if (pid_ <= 0) {
    start();
  }
  Exchange exchange;
  long offset = stderr_size();
  double deadline = now_seconds() + timeout_s;
  detail::ReadStatus st = detail::ReadStatus::Closed;
  if (detail::write_message(socket_, request)) {
    st = detail::read_message(socket_, deadline, &exchange.reply);
  }
  if (st == detail::ReadStatus::Ok) {
    return exchange;
  }
  exchange.outcome = st == detail::ReadStatus::Timeout ? Outcome::Timeout : Outcome::Died;
  reap(st == detail::ReadStatus::Timeout, &exchange);
  exchange.stderr_tail = stderr_since(offset);
  return exchange;
}

void WorkerProcess::reap(bool kill_first, Exchange* exchange) {
  if (socket_ >= 0) {
    ::close(socket_);
    socket_ = -1;
  }
  if (pid_ <= 0) {
    return;
  }
  if (kill_first) {
    ::kill(pid_, SIGKILL);
  }
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    exchange->signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    exchange->exit_status = WEXITSTATUS(status);
  }
  pid_ = -1;
}

void WorkerProcess::stop() {
  if (socket_ >= 0) {
    ::close(socket_);  // the worker sees EOF and exits
    socket_ = -1;
  }
  if (pid_ > 0) {
    int status = 0;
    for (int i = 0; i < 200; ++i) {  // up to 2 s for a clean exit
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_ || (r < 0 && errno != EINTR)) {
        pid_ = -1;
        break;
      }
      ::usleep(10000);
    }
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      pid_ = -1;
    }
  }
  if (stderr_fd_ >= 0) {
    ::close(stderr_fd_);
    stderr_fd_ = -1;
  }
}

long WorkerProcess::stderr_size() const {
  struct stat st {};
  if (stderr_fd_ < 0 || ::fstat(stderr_fd_, &st) != 0) {
    return -1;
  }
  return static_cast<long>(st.st_size);
}

std::string WorkerProcess::stderr_since(long offset) const {
  long end = stderr_size();
  if (offset < 0 || end <= offset) {
    return {};
  }
  constexpr long kTail = 2000;
  long begin = std::max(offset, end - kTail);
  std::string text(static_cast<size_t>(end - begin), '\0');
  ssize_t got = ::pread(stderr_fd_, text.data(), text.size(), begin);
  text.resize(got > 0 ? static_cast<size_t>(got) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.pop_back();
  }
  return text;
}

}  // namespace tensortune::measure

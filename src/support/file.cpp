// SPDX-License-Identifier: Apache-2.0
// See file.h.
#include "tensortune/support/file.h"

#include "tensortune/support/error.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <link.h>
#include <streambuf>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace tensortune::support {
namespace {

/// What kind of thing a stat describes, for messages.
std::string kind_of(mode_t mode) {
  if (S_ISLNK(mode)) {
    return "a symbolic link";
  }
  if (S_ISDIR(mode)) {
    return "a directory";
  }
  if (S_ISFIFO(mode)) {
    return "a FIFO";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  if (S_ISCHR(mode) || S_ISBLK(mode)) {
    return "a device";
  }
  return "not a regular file";
}

}  // namespace

// Named, not anonymous: AtomicOutput::Impl, a class with linkage, holds one.
namespace detail {

/// An output buffer over a file descriptor that remembers whether any write failed.
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  bool failed() const { return failed_; }
  int error() const { return errno_; }

 protected:
  int overflow(int c) override {
    if (!flush_buffer()) {
      return traits_type::eof();
    }
    if (c != traits_type::eof()) {
      *pptr() = static_cast<char>(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return flush_buffer() ? 0 : -1; }

 private:
  bool flush_buffer() {
    const char* p = pbase();
    while (p < pptr() && !failed_) {
      const ssize_t n = ::write(fd_, p, static_cast<size_t>(pptr() - p));
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        failed_ = true;
        errno_ = errno;
        break;
      }
      p += n;
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return !failed_;
  }

  int fd_;
  bool failed_ = false;
  int errno_ = 0;
  std::array<char, 1 << 16> buffer_{};
};

}  // namespace detail

namespace {

/// The process's umask, read without changing it (umask() sets it, for every thread at once).
mode_t process_umask() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Umask:", 0) == 0)
      return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  }
  return 022;
}

}  // namespace

void check_output_path(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    return;  // absent (or unreachable: creating the temporary file names the reason)
  }
  TT_USER_CHECK(S_ISREG(st.st_mode))
      << what << ": '" << path << "' is " << kind_of(st.st_mode)
      << "; only a regular file is replaced (give a new path"
      << (S_ISLNK(st.st_mode) ? ", or the file the link points to" : "") << ")";
}

struct AtomicOutput::Impl {
  int fd = -1;
  detail::FdBuf buf;
  std::ostream os;
  explicit Impl(int descriptor) : fd(descriptor), buf(descriptor), os(&buf) {}
};

AtomicOutput::AtomicOutput(std::string path, std::string what)
    : path_(std::move(path)), what_(std::move(what)) {
  check_output_path(path_, what_);
  const std::filesystem::path p(path_);
  std::string pattern = (p.parent_path() / ("." + p.filename().string() + ".tmp-XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  TT_USER_CHECK(fd >= 0) << what_ << ": cannot write '" << path_ << "': " << std::strerror(errno);
  temp_ = name.data();
  // mkstemp creates the file 0600; an output file gets the usual permissions.
  ::fchmod(fd, 0666 & ~process_umask());
  impl_ = std::make_unique<Impl>(fd);
}

AtomicOutput::~AtomicOutput() {
  if (impl_ && impl_->fd >= 0) {
    ::close(impl_->fd);
  }
  if (!done_ && !temp_.empty()) {
    ::unlink(temp_.c_str());
  }
}

std::ostream& AtomicOutput::stream() {
  return impl_->os;
}

void AtomicOutput::commit() {
  impl_->os.flush();
  const bool wrote = !impl_->buf.failed() && impl_->os.good();
  const int write_errno = impl_->buf.error();
  const bool closed = ::close(impl_->fd) == 0;
  impl_->fd = -1;
  TT_USER_CHECK(wrote && closed) << what_ << ": failed while writing '" << path_ << "'"
                                 << (write_errno != 0
                                         ? std::string(": ") + std::strerror(write_errno)
                                         : std::string());
  check_output_path(path_, what_);  // it may have appeared while the file was written
  TT_USER_CHECK(std::rename(temp_.c_str(), path_.c_str()) == 0)
      << what_ << ": cannot write '" << path_ << "': " << std::strerror(errno);
  done_ = true;
}

void write_file_atomically(const std::string& path,
                           std::string_view bytes,
                           const std::string& what) {
  AtomicOutput out(path, what);
  out.stream().write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.commit();
}

int64_t check_regular_file(const std::string& path, int64_t max_bytes, const std::string& what) {
  // O_NONBLOCK: opening a FIFO with no writer must not hang before it can be refused.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  TT_USER_CHECK(fd >= 0) << what << " '" << path << "': cannot open (" << std::strerror(errno)
                         << ")";
  struct stat st {};
  const int rc = ::fstat(fd, &st);
  ::close(fd);
  TT_USER_CHECK(rc == 0) << what << " '" << path << "': cannot read (" << std::strerror(errno)
                         << ")";
  TT_USER_CHECK(S_ISREG(st.st_mode))
      << what << " '" << path << "' is " << kind_of(st.st_mode) << ", not a regular file";
  TT_USER_CHECK(st.st_size <= max_bytes) << what << " '" << path << "' has " << st.st_size
                                         << " bytes, more than the limit of " << max_bytes;
  return static_cast<int64_t>(st.st_size);
}

std::string read_regular_file(const std::string& path, int64_t max_bytes, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  TT_USER_CHECK(fd >= 0) << what << " '" << path << "': cannot open (" << std::strerror(errno)
                         << ")";
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > max_bytes) {
    ::close(fd);
    check_regular_file(path, max_bytes, what);  // names the reason
    throw UserError(what + " '" + path + "': cannot read");
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  // Read to the end, but never past the cap: a file that grows while read is cut off and refused.
  while (true) {
    if (got == bytes.size()) {
      if (static_cast<int64_t>(got) >= max_bytes) {
        char probe = 0;
        const ssize_t more = ::read(fd, &probe, 1);
        ::close(fd);
        TT_USER_CHECK(more <= 0) << what << " '" << path << "' has more than the limit of "
                                 << max_bytes << " bytes";
        return bytes;
      }
      bytes.resize(std::min<size_t>(got + (size_t{1} << 16), static_cast<size_t>(max_bytes)));
    }
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw UserError(what + " '" + path + "': cannot read (" + std::strerror(e) + ")");
    }
    if (n == 0) {
      break;
    }
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(got);
  return bytes;
}

std::string loaded_binary_dir() {
  Dl_info info{};
  void* extra = nullptr;
  std::error_code ec;
  std::filesystem::path path;
  if (::dladdr1(reinterpret_cast<void*>(&loaded_binary_dir), &info, &extra, RTLD_DL_LINKMAP) != 0 &&
      extra != nullptr && static_cast<link_map*>(extra)->l_name != nullptr &&
      *static_cast<link_map*>(extra)->l_name != '\0') {
    path = std::filesystem::canonical(static_cast<link_map*>(extra)->l_name, ec);
  } else {
    // The main program (its link map has no name): the executable itself.
    path = std::filesystem::read_symlink("/proc/self/exe", ec);
  }
  return ec ? std::string() : path.parent_path().string();
}

}  // namespace tensortune::support

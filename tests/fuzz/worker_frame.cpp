// SPDX-License-Identifier: Apache-2.0
// Fuzz target: bytes as the stream from a worker -> measure::detail::read_message, reading from an
// in-memory file. A frame that reads must encode back to a frame that reads the same.
// read_message's contract makes a corrupt frame an InternalError (frames come from our own
// worker), so that is an expected outcome here; crashes, hangs and huge allocations are not.
#include "fuzz_common.h"
#include "measure/protocol.h"

#include <sys/mman.h>
#include <unistd.h>

namespace {

using tensortune::measure::detail::Message;
using tensortune::measure::detail::ReadStatus;

/// A file descriptor holding `bytes`, positioned at their start.
int memory_fd(const std::string& bytes) {
  int fd = ::memfd_create("fuzz_frame", 0);
  if (fd < 0 || ::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
    tensortune::fuzz::finding("cannot create an in-memory file");
  }
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

ReadStatus read_all(const std::string& bytes, Message* out) {
  int fd = memory_fd(bytes);
  ReadStatus status = ReadStatus::Closed;
  try {
    status = tensortune::measure::detail::read_message(fd, -1, out);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return status;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensortune;
  std::string bytes = fuzz::as_string(data, size);
  return fuzz::guarded([&] {
    Message message;
    try {
      if (read_all(bytes, &message) != ReadStatus::Ok) {
        return;
      }
    } catch (const InternalError&) {
      return;
    }
    Message again;
    if (read_all(measure::detail::encode(message), &again) != ReadStatus::Ok ||
        again.header.dump() != message.header.dump() || again.blobs != message.blobs) {
      fuzz::finding("a frame does not survive encode and read_message");
    }
  });
}

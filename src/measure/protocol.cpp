// SPDX-License-Identifier: Apache-2.0
// Frame encoding and socket I/O with deadlines for the worker protocol (see protocol.h).
#include "measure/protocol.h"

#include "tensortune/measure/timing.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace tensortune::measure::detail {
namespace {

constexpr char kMagic[4] = {'T', 'T', 'M', '1'};
constexpr uint64_t kMaxHeader = uint64_t{64} << 20;
constexpr uint64_t kMaxBlob = uint64_t{64} << 30;
constexpr uint32_t kMaxBlobs = 4096;

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
}

uint64_t get_u64(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= static_cast<uint64_t>(p[i]) << (8 * i);
  }
  return v;
}

/// Waits until `fd` is readable or the deadline passes.
ReadStatus wait_readable(int fd, double deadline) {
  for (;;) {
    int timeout_ms = -1;
    if (deadline >= 0) {
      double left = deadline - now_seconds();
      if (left <= 0) {
        return ReadStatus::Timeout;
      }
      timeout_ms = static_cast<int>(std::ceil(left * 1000));
    }
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, timeout_ms);
    if (rc > 0) {
      return ReadStatus::Ok;
    }
    if (rc < 0 && errno != EINTR) {
      return ReadStatus::Closed;
    }
  }
}

/// Reads exactly `n` bytes into `dst`.
ReadStatus read_exact(int fd, char* dst, uint64_t n, double deadline) {
  uint64_t done = 0;
  while (done < n) {
    ReadStatus ready = wait_readable(fd, deadline);
    if (ready != ReadStatus::Ok) {
      return ready;
    }
    ssize_t got = ::read(fd, dst + done, static_cast<size_t>(n - done));
    if (got == 0) {
      return ReadStatus::Closed;
    }
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) {
        continue;
      }
      return ReadStatus::Closed;
    }
    done += static_cast<uint64_t>(got);
  }
  return ReadStatus::Ok;
}

/// Reads exactly `n` bytes into `dst`, growing it as they arrive: a corrupt frame that announces
/// gigabytes it never sends costs no more memory than it sent.
ReadStatus read_growing(int fd, std::string* dst, uint64_t n, double deadline) {
  constexpr uint64_t kChunk = uint64_t{1} << 20;
  dst->clear();
  while (dst->size() < n) {
    size_t done = dst->size();
    auto step = static_cast<size_t>(std::min(kChunk, n - done));
    dst->resize(done + step);
    ReadStatus st = read_exact(fd, dst->data() + done, step, deadline);
    if (st != ReadStatus::Ok) {
      return st;
    }
  }
  return ReadStatus::Ok;
}

}  // namespace

std::string encode(const Message& message) {
  std::string header = message.header.dump();
  std::string out(kMagic, sizeof(kMagic));
  auto count = static_cast<uint32_t>(message.blobs.size());
  for (int i = 0; i < 4; ++i) {
    out.push_back(static_cast<char>((count >> (8 * i)) & 0xFF));
  }
  put_u64(out, header.size());
  for (const std::string& blob : message.blobs) {
    put_u64(out, blob.size());
  }
  out += header;
  for (const std::string& blob : message.blobs) {
    out += blob;
  }
  return out;
}

bool write_message(int fd, const Message& message) {
  std::string frame = encode(message);
  size_t done = 0;
  while (done < frame.size()) {
    ssize_t sent = ::send(fd, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    done += static_cast<size_t>(sent);
  }
  return true;
}

ReadStatus read_message(int fd, double deadline, Message* out) {
  unsigned char fixed[16];
  ReadStatus st = read_exact(fd, reinterpret_cast<char*>(fixed), sizeof(fixed), deadline);
  if (st != ReadStatus::Ok) {
    return st;
  }
  TT_CHECK(std::memcmp(fixed, kMagic, sizeof(kMagic)) == 0) << "measure: a corrupt worker frame";
  auto count = static_cast<uint32_t>(get_u64(fixed + 4, 4));
  uint64_t header_size = get_u64(fixed + 8, 8);
  TT_CHECK(count <= kMaxBlobs && header_size <= kMaxHeader)
      << "measure: a worker frame with " << count << " blobs and a " << header_size
      << "-byte header";
  std::vector<uint64_t> sizes(count);
  for (uint32_t i = 0; i < count; ++i) {
    unsigned char size[8];
    st = read_exact(fd, reinterpret_cast<char*>(size), sizeof(size), deadline);
    if (st != ReadStatus::Ok) {
      return st;
    }
    sizes[i] = get_u64(size, 8);
    TT_CHECK(sizes[i] <= kMaxBlob)
        << "measure: a worker frame with a blob of " << sizes[i] << " bytes";
  }
  std::string header;
  st = read_growing(fd, &header, header_size, deadline);
  if (st != ReadStatus::Ok) {
    return st;
  }
  out->header = support::Json::parse(header);
  out->blobs.assign(count, std::string());
  for (uint32_t i = 0; i < count; ++i) {
    st = read_growing(fd, &out->blobs[i], sizes[i], deadline);
    if (st != ReadStatus::Ok) {
      return st;
    }
  }
  return ReadStatus::Ok;
}

}  // namespace tensortune::measure::detail

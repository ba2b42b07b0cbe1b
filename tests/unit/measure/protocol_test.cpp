// SPDX-License-Identifier: Apache-2.0
// The worker protocol's frames: exact round trips of headers and binary blobs over a socket pair,
// deadlines, and a peer that goes away.
#include "measure/protocol.h"

#include "tensortune/measure/timing.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace tensortune::measure::detail {
namespace {

struct SocketPair {
  int fd[2] = {-1, -1};
  SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~SocketPair() {
    for (int f : fd) {
      if (f >= 0) {
        ::close(f);
      }
    }
  }
};

TEST(Protocol, FramesRoundTripHeadersAndBinaryBlobs) {
  SocketPair s;
  Message m;
  m.header = support::Json::object();
  m.header["op"] = "run";
  m.header["seed"] = 42;
  std::string binary("\0\1\2\xff", 4);
  std::string large(3 << 20, 'x');  // larger than a socket buffer: needs the reader running
  m.blobs = {binary, "", large};
  std::thread writer([&] { EXPECT_TRUE(write_message(s.fd[0], m)); });
  Message got;
  ASSERT_EQ(read_message(s.fd[1], now_seconds() + 30, &got), ReadStatus::Ok);
  writer.join();
  EXPECT_EQ(got.header.dump(), m.header.dump());
  ASSERT_EQ(got.blobs.size(), 3U);
  EXPECT_EQ(got.blobs[0], binary);
  EXPECT_EQ(got.blobs[1], "");
  EXPECT_EQ(got.blobs[2], large);
}

TEST(Protocol, ReadTimesOutWhenNothingArrives) {
  SocketPair s;
  Message got;
  EXPECT_EQ(read_message(s.fd[1], now_seconds() + 0.05, &got), ReadStatus::Timeout);
}

TEST(Protocol, AClosedPeerIsReportedBeforeOrInsideAFrame) {
  SocketPair s;
  Message m;
  m.header = support::Json::object();
  m.header["op"] = "x";
  std::string frame = encode(m);
  ASSERT_EQ(::write(s.fd[0], frame.data(), frame.size() / 2),
            static_cast<ssize_t>(frame.size() / 2));
  ::close(s.fd[0]);
  s.fd[0] = -1;
  Message got;
  EXPECT_EQ(read_message(s.fd[1], now_seconds() + 5, &got), ReadStatus::Closed);
  EXPECT_FALSE(write_message(s.fd[1], m));  // no SIGPIPE: the test process survives
}

TEST(Protocol, AFrameWithoutTheMagicIsAnInternalError) {
  SocketPair s;
  std::string junk(32, 'j');
  ASSERT_EQ(::write(s.fd[0], junk.data(), junk.size()), 32);
  Message got;
  EXPECT_THROW(read_message(s.fd[1], now_seconds() + 5, &got), InternalError);
}

// Found by the worker_frame fuzz target: the reader allocated each announced size up front.
TEST(Protocol, AFrameAnnouncingMoreThanItSendsAllocatesOnlyWhatArrived) {
  SocketPair s;
  std::string frame("TTM1\x01\0\0\0", 8);
  for (uint64_t v : {uint64_t{2}, uint64_t{60} << 30}) {  // header size, blob size
    for (int i = 0; i < 8; ++i) {
      frame.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    }
  }
  frame += "{}short";
  ASSERT_EQ(::write(s.fd[0], frame.data(), frame.size()), static_cast<ssize_t>(frame.size()));
  ::close(s.fd[0]);
  s.fd[0] = -1;
  Message got;
  EXPECT_EQ(read_message(s.fd[1], now_seconds() + 5, &got), ReadStatus::Closed);
}

}  // namespace
}  // namespace tensortune::measure::detail

// SPDX-License-Identifier: Apache-2.0
// Private to src/measure: the framed messages between the measurer and its worker processes.
// A frame is "TTM1", u32 blob count, u64 header length, u64 length of each blob (little-endian),
// then the header (compact JSON) and the blobs (object code, buffer bytes) back to back.
#pragma once

#include "tensortune/support/json.h"

#include <string>
#include <vector>

namespace tensortune::measure::detail {

struct Message {
  support::Json header;
  std::vector<std::string> blobs;
};

/// The frame of `message`.
std::string encode(const Message& message);

/// Writes a whole frame to a socket; false when the peer has gone (never raises SIGPIPE).
bool write_message(int fd, const Message& message);

enum class ReadStatus { Ok, Closed, Timeout };

/// Reads one frame. `deadline` is a now_seconds() value, or negative for no deadline. Closed when
/// the peer shut the connection (before or inside a frame); InternalError on a malformed frame.
ReadStatus read_message(int fd, double deadline, Message* out);

}  // namespace tensortune::measure::detail

// SPDX-License-Identifier: Apache-2.0
// Files written for the user (headers, plans, weights, exports): written whole or not at all,
// never through a link or over a device; and files read from the user: regular and bounded.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace tensortune::support {

/// UserError "WHAT: 'PATH' is a symbolic link|a directory|a device, FIFO or socket; ..." unless
/// `path` is absent or a regular file (the final component is not followed). Replacing a link or
/// a node would destroy it (as root, `--out /dev/full` replaced the device), and a link may point
/// where the user never meant to write.
void check_output_path(const std::string& path, const std::string& what);

/// A file written under a temporary name beside `path` and renamed over `path` by commit(). The
/// temporary file is created by mkstemp (O_EXCL, an unpredictable name, never a link followed);
/// a failed or abandoned write removes it and leaves `path` as it was.
class AtomicOutput {
 public:
  /// check_output_path, then creates the temporary file; UserError "WHAT: cannot write 'PATH':
  /// ..." when the folder cannot be written.
  AtomicOutput(std::string path, std::string what);
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  std::ostream& stream();
  /// The temporary file's path, for a program that writes it by name (the linker).
  const std::string& temp_path() const { return temp_; }
  /// Flushes, checks every write, checks `path` again and renames the file into place.
  void commit();

 private:
  struct Impl;
  std::string path_, what_, temp_;
  std::unique_ptr<Impl> impl_;
  bool done_ = false;
};

/// Writes `bytes` to `path` through an AtomicOutput: a reader (or a process that has the file
/// mapped) sees the old file or the new one, never half of one, and a failed write leaves the old
/// file as it was. UserError "WHAT: ..." on failure or a path check_output_path refuses.
void write_file_atomically(const std::string& path,
                           std::string_view bytes,
                           const std::string& what);

/// Size caps of files read from the user: large enough for any honest input, small enough that
/// /dev/zero or a runaway file is refused before it exhausts memory.
constexpr int64_t kMaxTextFileBytes = int64_t{16} << 20;   // schedules, workloads, model.json
constexpr int64_t kMaxImportFileBytes = int64_t{4} << 30;  // JSON-lines imports
constexpr int64_t kMaxModelFileBytes = int64_t{2} << 30;   // ONNX (protobuf's own limit)

/// The whole of the regular file `path`. UserError "WHAT 'PATH': ..." when it cannot be opened,
/// is not a regular file (a directory, device, FIFO or socket: /dev/zero never ends), or holds
/// more than `max_bytes` bytes. The check is made on the opened file, so it cannot change
/// between the check and the read.
std::string read_regular_file(const std::string& path, int64_t max_bytes, const std::string& what);

/// Opens `path` for reading as read_regular_file would and returns its size; UserError as there.
/// For readers that stream the file (JSON lines): the same checks without holding it whole.
int64_t check_regular_file(const std::string& path, int64_t max_bytes, const std::string& what);

/// The folder of the binary tensortune's code was loaded from: libtensortune.so's when the code is
/// linked into it, else the executable's (dladdr); "" when unknown. Installed files are found
/// from it (LIBDIR/tensortune/libtt_runtime.a, BINDIR/tensortune-worker, share/tensortune/).
std::string loaded_binary_dir();

}  // namespace tensortune::support

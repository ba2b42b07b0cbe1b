// SPDX-License-Identifier: Apache-2.0
// NumPy .npy files (format versions 1.0-3.0, C order, little-endian): the exchange format of
// model inputs and outputs (`run-model --input NAME=FILE.npy`, `--output-dir`).
#pragma once

#include "tensortune/ir/type.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::graph {

/// An array read from or written to a .npy file. Element bytes are kept as stored (row-major,
/// little-endian), `dtype` says how to read them.
struct NpyArray {
  ir::DataType dtype = ir::DataType::float32();
  std::vector<int64_t> shape;  ///< empty = a scalar (one element)
  std::vector<uint8_t> bytes;

  int64_t numel() const;
  /// The elements converted to float (any float/int dtype).
  std::vector<float> to_floats() const;
  static NpyArray from_floats(const std::vector<int64_t>& shape, const std::vector<float>& data);
};

/// The size cap of read_npy when the caller knows no tighter one.
constexpr int64_t kMaxNpyBytes = int64_t{16} << 30;
/// Room for a .npy header and the bytes np.load ignores after the data, beyond a tensor's size.
constexpr int64_t kNpyHeaderRoom = int64_t{1} << 20;

/// Reads `path`. Supported dtypes: '<f4' '<f8' '<i4' '<i8' '|b1' '|u1' '|i1' ('=' is taken as
/// '<'; bytes after the data are ignored, as np.load ignores them). UserError naming
/// the file for an unreadable file, a bad magic string, a malformed header, Fortran order, a
/// big-endian or unsupported dtype, or a data section shorter than the shape needs; also when
/// `path` is not a regular file or holds more than `max_bytes` (support::read_regular_file).
NpyArray read_npy(const std::string& path, int64_t max_bytes = kMaxNpyBytes);
/// Parses the bytes of a .npy file; `what` names it in messages.
NpyArray parse_npy(const std::string& bytes, const std::string& what);

/// Writes `array` as a version 1.0 .npy file (header padded to a multiple of 64 bytes); UserError
/// when the file cannot be written. `float32` -> '<f4', `float64` -> '<f8', int32 -> '<i4',
/// int64 -> '<i8', bool -> '|b1', uint8 -> '|u1', int8 -> '|i1'; UserError for any other dtype.
/// The bytes equal those np.save writes for the same array.
void write_npy(const std::string& path, const NpyArray& array);
/// The bytes write_npy would write.
std::string format_npy(const NpyArray& array);

}  // namespace tensortune::graph

// SPDX-License-Identifier: Apache-2.0
// Reading and writing NumPy .npy files. The format is specified in numpy/lib/format.py (NEP 1);
// the header dict is parsed in npy_header.cpp.
#include "tensortune/graph/npy.h"

#include "graph/npy_header.h"
#include "tensortune/support/error.h"
#include "tensortune/support/file.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string_view>
#include <type_traits>

namespace tensortune::graph {
namespace {

constexpr std::string_view kMagic("\x93NUMPY", 6);
constexpr size_t kMagicLen = kMagic.size();
/// numpy aligns the data section to this many bytes (format.py ARRAY_ALIGN).
constexpr size_t kArrayAlign = 64;
/// numpy leaves room for the first axis to grow to this many digits (GROWTH_AXIS_MAX_DIGITS).
constexpr size_t kGrowthAxisMaxDigits = 21;

/// A supported dtype: its type code without the byte-order character, and the IR type.
struct DtypeEntry {
  const char* code = nullptr;
  ir::DataType dtype;
};

constexpr std::array<DtypeEntry, 7> kDtypes = {{
    {"f4", ir::DataType::float32()},
    {"f8", ir::DataType::float64()},
    {"i4", ir::DataType::int32()},
    {"i8", ir::DataType::int64()},
    {"b1", ir::DataType::boolean()},
    {"u1", ir::DataType(ir::DataType::Code::UInt, 8)},
    {"i1", ir::DataType(ir::DataType::Code::Int, 8)},
}};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += (i > 0 ? "," : "") + std::to_string(shape[i]);
  }
  return s + "]";
}

/// The dtype for a descr string such as "<f4"; throws UserError naming `what`.
ir::DataType dtype_of_descr(const std::string& descr, const std::string& what) {
  const std::string supported = "supported: <f4, <f8, <i4, <i8, |b1, |u1, |i1";
  TT_USER_CHECK(descr.size() == 3)
      << "'" << what << "': unsupported dtype '" << descr << "' (" << supported << ")";
  const char order = descr[0];
  const std::string code = descr.substr(1);
  for (const DtypeEntry& entry : kDtypes) {
    if (code != entry.code) {
      continue;
    }
    // Byte order is meaningless for one-byte types; numpy writes '|' but accepts any.
    if (entry.dtype.bytes() == 1 &&
        (order == '|' || order == '<' || order == '=' || order == '>')) {
      return entry.dtype;
    }
    // '=' is the native order; every target tensortune runs on is little-endian.
    TT_USER_CHECK(order != '>') << "'" << what << "': big-endian dtype '" << descr
                                << "' is not supported (save it as '<" << code << "')";
    TT_USER_CHECK(order == '<' || order == '=')
        << "'" << what << "': unsupported dtype '" << descr << "' (" << supported << ")";
    return entry.dtype;
  }
  TT_USER_CHECK(false) << "'" << what << "': unsupported dtype '" << descr << "' (" << supported
                       << ")";
  return {};
}

/// The descr numpy writes for `dtype`; UserError for a type .npy files of ours cannot hold.
std::string descr_of_dtype(const ir::DataType& dtype) {
  for (const DtypeEntry& entry : kDtypes) {
    if (entry.dtype == dtype) {
      return std::string(dtype.bytes() == 1 ? "|" : "<") + entry.code;
    }
  }
  TT_USER_CHECK(false) << "write_npy: unsupported dtype " << dtype.to_string()
                       << " (supported: float32, float64, int32, int64, bool, uint8, int8)";
  return {};
}

uint32_t load_le(const std::string& bytes, size_t pos, size_t width) {
  uint32_t value = 0;
  for (size_t i = 0; i < width; ++i) {
    value |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[pos + i])) << (8 * i);
  }
  return value;
}

/// Element `i` of the little-endian `bytes`, whatever the host's byte order.
template <class T>
T element(const std::vector<uint8_t>& bytes, size_t i) {
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t,
                                  std::conditional_t<sizeof(T) == 4, uint32_t, uint8_t>>;
  static_assert(sizeof(Bits) == sizeof(T), "element: unsupported width");
  Bits bits = 0;
  for (size_t b = 0; b < sizeof(T); ++b) {
    bits = static_cast<Bits>(
        bits | static_cast<Bits>(static_cast<Bits>(bytes[i * sizeof(T) + b]) << (8 * b)));
  }
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}

template <class T>
void convert(const std::vector<uint8_t>& bytes, std::vector<float>& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<float>(element<T>(bytes, i));
  }
}

}  // namespace

int64_t NpyArray::numel() const {
  int64_t n = 1;
  for (int64_t extent : shape) {
    TT_CHECK(extent >= 0) << "npy array shape " << shape_text(shape) << " has a negative extent";
    n *= extent;
  }
  return n;
}

std::vector<float> NpyArray::to_floats() const {
  const auto n = static_cast<size_t>(numel());
  TT_CHECK(bytes.size() == n * static_cast<size_t>(dtype.bytes()))
      << "npy array of shape " << shape_text(shape) << " and dtype " << dtype.to_string()
      << " holds " << bytes.size() << " bytes";
  std::vector<float> out(n);
  if (dtype == ir::DataType::float32()) {
    convert<float>(bytes, out);
  } else if (dtype == ir::DataType::float64()) {
    convert<double>(bytes, out);
  } else if (dtype == ir::DataType::int32()) {
    convert<int32_t>(bytes, out);
  } else if (dtype == ir::DataType::int64()) {
    convert<int64_t>(bytes, out);
  } else if (dtype.is_bool()) {
    for (size_t i = 0; i < n; ++i) {
      out[i] = bytes[i] != 0 ? 1.0f : 0.0f;
    }
  } else if (dtype == ir::DataType(ir::DataType::Code::UInt, 8)) {
    convert<uint8_t>(bytes, out);
  } else {
    TT_CHECK(dtype == ir::DataType(ir::DataType::Code::Int, 8))
        << "to_floats: unsupported dtype " << dtype.to_string();
    convert<int8_t>(bytes, out);
  }
  return out;
}

NpyArray NpyArray::from_floats(const std::vector<int64_t>& shape, const std::vector<float>& data) {
  NpyArray array;
  array.shape = shape;
  TT_CHECK(static_cast<size_t>(array.numel()) == data.size())
      << "from_floats: shape " << shape_text(shape) << " needs " << array.numel()
      << " elements, got " << data.size();
  array.bytes.resize(data.size() * sizeof(float));
  for (size_t i = 0; i < data.size(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &data[i], sizeof(float));
    for (size_t b = 0; b < sizeof(float); ++b) {
      array.bytes[i * sizeof(float) + b] = static_cast<uint8_t>(bits >> (8 * b));
    }
  }
  return array;
}

NpyArray parse_npy(const std::string& bytes, const std::string& what) {
  TT_USER_CHECK(bytes.size() >= kMagicLen && bytes.compare(0, kMagicLen, kMagic) == 0)
      << "'" << what << "': not a .npy file (bad magic)";
  TT_USER_CHECK(bytes.size() >= kMagicLen + 2) << "'" << what << "': truncated header";
  const int major = static_cast<uint8_t>(bytes[kMagicLen]);
  const int minor = static_cast<uint8_t>(bytes[kMagicLen + 1]);
  TT_USER_CHECK(minor == 0 && major >= 1 && major <= 3)
      << "'" << what << "': unsupported .npy format version " << major << "." << minor
      << " (supported: 1.0, 2.0, 3.0)";
  const size_t len_width = major == 1 ? 2 : 4;
  const size_t header_start = kMagicLen + 2 + len_width;
  TT_USER_CHECK(bytes.size() >= header_start) << "'" << what << "': truncated header";
  const size_t header_len = load_le(bytes, kMagicLen + 2, len_width);
  TT_USER_CHECK(bytes.size() - header_start >= header_len)
      << "'" << what << "': truncated header (" << header_len << " bytes announced, "
      << bytes.size() - header_start << " present)";

  const std::string text = bytes.substr(header_start, header_len);
  const NpyHeader header = parse_npy_header(text, what);
  TT_USER_CHECK(!header.fortran_order)
      << "'" << what << "': fortran_order arrays are not supported";
  NpyArray array;
  array.dtype = dtype_of_descr(header.descr, what);
  array.shape = header.shape;
  // Dimensions are non-negative (the parser reads no sign); guard the byte count's overflow.
  const auto max_bytes = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  auto needed = static_cast<uint64_t>(array.dtype.bytes());
  for (int64_t extent : array.shape) {
    const auto e = static_cast<uint64_t>(extent);
    TT_USER_CHECK(e == 0 || needed <= max_bytes / e)
        << "'" << what << "': shape " << shape_text(array.shape) << " is too large";
    needed *= e;
  }
  const size_t data_start = header_start + header_len;
  const size_t present = bytes.size() - data_start;
  TT_USER_CHECK(present >= needed)
      << "'" << what << "': data has " << present << " bytes, shape " << shape_text(array.shape)
      << " of " << array.dtype.to_string() << " needs " << needed;
  // Trailing bytes are ignored, as np.load ignores them.
  array.bytes.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start),
                     bytes.begin() + static_cast<std::ptrdiff_t>(data_start + needed));
  return array;
}

NpyArray read_npy(const std::string& path, int64_t max_bytes) {
  return parse_npy(support::read_regular_file(path, max_bytes, ".npy file"), path);
}

std::string format_npy(const NpyArray& array) {
  const std::string descr = descr_of_dtype(array.dtype);
  TT_CHECK(array.bytes.size() == static_cast<size_t>(array.numel() * array.dtype.bytes()))
      << "format_npy: shape " << shape_text(array.shape) << " of " << array.dtype.to_string()
      << " needs " << array.numel() * array.dtype.bytes() << " bytes, the array holds "
      << array.bytes.size();
  // Exactly what numpy's _write_array_header writes for version 1.0: keys sorted, Python's tuple
  // repr, spare room for the first axis to grow, then spaces and '\n' up to a 64-byte boundary.
  std::string shape = "(";
  for (size_t i = 0; i < array.shape.size(); ++i) {
    shape += (i > 0 ? ", " : "") + std::to_string(array.shape[i]);
  }
  shape += array.shape.size() == 1 ? ",)" : ")";
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  if (!array.shape.empty()) {
    const size_t digits = std::to_string(array.shape[0]).size();
    header.append(digits < kGrowthAxisMaxDigits ? kGrowthAxisMaxDigits - digits : 0, ' ');
  }
  const size_t prefix_len = kMagicLen + 2 + 2;
  const size_t pad = kArrayAlign - (prefix_len + header.size() + 1) % kArrayAlign;
  header.append(pad, ' ');
  header += '\n';
  TT_USER_CHECK(header.size() <= 0xffff)
      << "format_npy: header of shape " << shape_text(array.shape) << " is too long for .npy 1.0";

  std::string out(kMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(array.bytes.begin(), array.bytes.end());
  return out;
}

void write_npy(const std::string& path, const NpyArray& array) {
  // Replaced whole, never through a link or over a device (support/file.h).
  support::write_file_atomically(path, format_npy(array), "write_npy");
}

}  // namespace tensortune::graph

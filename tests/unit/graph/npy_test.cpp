// SPDX-License-Identifier: Apache-2.0
// Tests of .npy reading and writing: round trips of every dtype and rank, the exact bytes numpy
// writes, hand-written headers of every version, and one test per malformed or unwritable file.
#include "tensortune/graph/npy.h"

#include "common/temp_dir.h"
#include "tensortune/support/error.h"
#include "tensortune/support/rng.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace tensortune::graph {
namespace {

constexpr ir::DataType kUInt8(ir::DataType::Code::UInt, 8);
constexpr ir::DataType kInt8(ir::DataType::Code::Int, 8);

/// The message of the UserError `fn` throws; fails the test for no error or another kind.
std::string npy_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InternalError& e) {
    ADD_FAILURE() << "internal error instead of a user error: " << e.what();
    return e.what();
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

/// A .npy file of `version` (1, 2 or 3) with the header text `header` followed by `data`.
std::string make_npy(int version, const std::string& header, const std::string& data) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(version);
  out += '\0';
  const size_t len = header.size();
  const size_t width = version == 1 ? 2 : 4;
  for (size_t i = 0; i < width; ++i) {
    out += static_cast<char>((len >> (8 * i)) & 0xff);
  }
  return out + header + data;
}

/// `count` random elements of `dtype` as little-endian bytes (booleans are 0 or 1).
std::vector<uint8_t> random_bytes(const ir::DataType& dtype, int64_t count, uint64_t seed) {
  support::Rng rng(seed);
  std::vector<uint8_t> bytes(static_cast<size_t>(count * dtype.bytes()));
  for (uint8_t& b : bytes) {
    b = static_cast<uint8_t>(rng.uniform_int(0, dtype.is_bool() ? 1 : 255));
  }
  return bytes;
}

TEST(Npy, RoundTripsEveryDtype) {
  test::TempDir dir("npy_dtypes");
  const std::vector<ir::DataType> dtypes = {ir::DataType::float32(),
                                            ir::DataType::float64(),
                                            ir::DataType::int32(),
                                            ir::DataType::int64(),
                                            ir::DataType::boolean(),
                                            kUInt8,
                                            kInt8};
  uint64_t seed = 1;
  for (const ir::DataType& dtype : dtypes) {
    NpyArray array;
    array.dtype = dtype;
    array.shape = {3, 5};
    array.bytes = random_bytes(dtype, 15, seed++);
    const std::string path = dir.file(dtype.to_string() + ".npy");
    write_npy(path, array);
    const NpyArray back = read_npy(path);
    EXPECT_EQ(back.dtype, dtype) << dtype.to_string();
    EXPECT_EQ(back.shape, array.shape) << dtype.to_string();
    EXPECT_EQ(back.bytes, array.bytes) << dtype.to_string();
  }
}

TEST(Npy, RoundTripsScalarsVectorsAndFourDimensionalArrays) {
  test::TempDir dir("npy_shapes");
  const std::vector<std::vector<int64_t>> shapes = {{}, {5}, {1}, {0}, {2, 3, 4, 5}, {1, 3, 1, 2}};
  int index = 0;
  for (const auto& shape : shapes) {
    NpyArray sized;
    sized.shape = shape;
    support::Rng rng(static_cast<uint64_t>(40 + index));
    std::vector<float> values(static_cast<size_t>(sized.numel()));
    for (float& v : values) {
      v = rng.uniform_float(-10.0f, 10.0f);
    }
    const NpyArray array = NpyArray::from_floats(shape, values);
    const std::string path = dir.file("a" + std::to_string(index++) + ".npy");
    write_npy(path, array);
    const NpyArray back = read_npy(path);
    EXPECT_EQ(back.dtype, ir::DataType::float32());
    EXPECT_EQ(back.shape, shape);
    EXPECT_EQ(back.to_floats(), values);
  }
  EXPECT_EQ(NpyArray::from_floats({}, {2.5f}).numel(), 1);
}

TEST(Npy, ToFloatsConvertsEveryDtype) {
  // Elements given as little-endian bytes, then the values numpy reads from them.
  const std::string f8("\x00\x00\x00\x00\x00\x00\xf8\x3f\x00\x00\x00\x00\x00\x00\x00\xc0", 16);
  const std::string i4("\xfe\xff\xff\xff\x10\x00\x00\x00", 8);
  const std::string i8("\x00\x00\x00\x00\x00\x01\x00\x00\xfb\xff\xff\xff\xff\xff\xff\xff", 16);
  struct Case {
    std::string descr, data;
    std::vector<float> expected;
  };
  const std::vector<Case> cases = {
      {"<f4", std::string("\x00\x00\xc0\x3f", 4), {1.5f}},
      {"<f8", f8, {1.5f, -2.0f}},
      {"<i4", i4, {-2.0f, 16.0f}},
      {"<i8", i8, {1099511627776.0f, -5.0f}},
      {"|b1", std::string("\x01\x00", 2), {1.0f, 0.0f}},
      {"|u1", std::string("\xff\x02", 2), {255.0f, 2.0f}},
      {"|i1", std::string("\xff\x80", 2), {-1.0f, -128.0f}},
  };
  for (const Case& c : cases) {
    const std::string shape = c.expected.size() == 1 ? "()" : "(2,)";
    const std::string header =
        "{'descr': '" + c.descr + "', 'fortran_order': False, 'shape': " + shape + ", }\n";
    const NpyArray array = parse_npy(make_npy(1, header, c.data), "t.npy");
    EXPECT_EQ(array.to_floats(), c.expected) << c.descr;
  }
}

// The expected bytes below are what numpy 1.24.2 writes: they were printed once by hand with
// /usr/bin/python3 -c "import numpy as np, io; b = io.BytesIO(); np.save(b, ARRAY);
// print(b.getvalue())" and copied here (spaces as counts).
TEST(Npy, WritesTheBytesNumpyWrites) {
  const std::string prefix("\x93NUMPY\x01\x00\x76\x00", 10);  // version 1.0, header of 118 bytes
  // np.array([[1, 2, 3], [4, 5, 6]], dtype='<f4')
  EXPECT_EQ(format_npy(NpyArray::from_floats({2, 3}, {1, 2, 3, 4, 5, 6})),
            prefix + "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
                std::string(58, ' ') + "\n" +
                std::string("\x00\x00\x80?\x00\x00\x00@\x00\x00@@\x00\x00\x80@\x00\x00\xa0@"
                            "\x00\x00\xc0@",
                            24));
  // np.array(7, dtype='<i4')
  NpyArray scalar;
  scalar.dtype = ir::DataType::int32();
  scalar.bytes = {7, 0, 0, 0};
  EXPECT_EQ(format_npy(scalar), prefix + "{'descr': '<i4', 'fortran_order': False, 'shape': (), }" +
                                    std::string(62, ' ') + "\n" +
                                    std::string("\x07\x00\x00\x00", 4));
  // np.array([True, False, True])
  NpyArray flags;
  flags.dtype = ir::DataType::boolean();
  flags.shape = {3};
  flags.bytes = {1, 0, 1};
  EXPECT_EQ(format_npy(flags), prefix +
                                   "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }" +
                                   std::string(60, ' ') + "\n" + std::string("\x01\x00\x01", 3));
  // np.zeros((1, 2, 1, 1), dtype='i1')
  NpyArray small;
  small.dtype = kInt8;
  small.shape = {1, 2, 1, 1};
  small.bytes = {0, 0};
  EXPECT_EQ(format_npy(small),
            prefix + "{'descr': '|i1', 'fortran_order': False, 'shape': (1, 2, 1, 1), }" +
                std::string(52, ' ') + "\n" + std::string(2, '\0'));
}

TEST(Npy, PadsAWholeBlockWhenTheHeaderIsAlreadyAligned) {
  // numpy.lib.format.write_array_header_1_0 with this shape (printed the same way) writes 20
  // spaces of room for the first axis, then 64 more: its padding is never zero.
  NpyArray empty;
  empty.dtype = kUInt8;
  empty.shape = {0, 1, 1, 1, 1, 1, 1, 1, 100000000000000000};
  EXPECT_EQ(format_npy(empty),
            std::string("\x93NUMPY\x01\x00\xb6\x00", 10) +
                "{'descr': '|u1', 'fortran_order': False, 'shape': (0, 1, 1, 1, 1, 1, 1, 1, "
                "100000000000000000), }" +
                std::string(84, ' ') + "\n");
}

TEST(Npy, DataStartsAtAMultipleOf64) {
  for (size_t rank = 0; rank <= 12; ++rank) {
    NpyArray array;
    array.dtype = ir::DataType::float64();
    array.shape.assign(rank, 1);
    if (rank > 0) {
      array.shape[0] = static_cast<int64_t>(rank * 1000 + 7);
    }
    array.bytes.resize(static_cast<size_t>(array.numel()) * 8, 0x11);
    const std::string bytes = format_npy(array);
    const size_t data_start = bytes.size() - array.bytes.size();
    EXPECT_EQ(data_start % 64, 0u) << "rank " << rank;
    EXPECT_EQ(bytes[data_start - 1], '\n') << "rank " << rank;
    EXPECT_EQ(parse_npy(bytes, "t.npy").shape, array.shape);
  }
}

TEST(Npy, ParsesHeadersWithUnusualSpacingAndKeyOrder) {
  const std::string header =
      "{ \"shape\" :( 2 ,3 ,) ,'fortran_order':False,\t'descr'  :  '=i4'}  \n";
  const NpyArray array = parse_npy(make_npy(1, header, std::string(24, '\x01')), "odd.npy");
  EXPECT_EQ(array.dtype, ir::DataType::int32());
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(array.to_floats(), std::vector<float>(6, 16843009.0f));  // 0x01010101
  // Python 2 era files write shapes as longs.
  const NpyArray old = parse_npy(
      make_npy(1, "{'descr': '<u1', 'fortran_order': False, 'shape': (2L,), }\n", "ab"), "old.npy");
  EXPECT_EQ(old.dtype, kUInt8);
  EXPECT_EQ(old.shape, (std::vector<int64_t>{2}));
}

TEST(Npy, ReadsVersion2And3Headers) {
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  const std::string data("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8);
  for (int version : {2, 3}) {
    const NpyArray array = parse_npy(make_npy(version, header, data), "v.npy");
    EXPECT_EQ(array.shape, (std::vector<int64_t>{2}));
    EXPECT_EQ(array.to_floats(), (std::vector<float>{1.0f, -2.0f}));
  }
}

TEST(Npy, IgnoresBytesAfterTheData) {
  const std::string header = "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }\n";
  EXPECT_EQ(parse_npy(make_npy(1, header, "abc"), "t.npy").bytes, (std::vector<uint8_t>{'a', 'b'}));
}

TEST(NpyError, RejectsBadMagic) {
  EXPECT_EQ(npy_error_of([] { parse_npy("PK\x03\x04 a zip file", "x.npy"); }),
            "'x.npy': not a .npy file (bad magic)");
  EXPECT_EQ(npy_error_of([] { parse_npy("", "x.npy"); }), "'x.npy': not a .npy file (bad magic)");
}

TEST(NpyError, RejectsTruncatedHeaders) {
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  const std::string whole = make_npy(1, header, std::string(8, '\0'));
  EXPECT_EQ(npy_error_of([&] { parse_npy(whole.substr(0, 7), "x.npy"); }),
            "'x.npy': truncated header");
  EXPECT_EQ(npy_error_of([&] { parse_npy(whole.substr(0, 9), "x.npy"); }),
            "'x.npy': truncated header");
  EXPECT_EQ(npy_error_of([&] { parse_npy(whole.substr(0, 30), "x.npy"); }),
            "'x.npy': truncated header (58 bytes announced, 20 present)");
}

TEST(NpyError, RejectsTruncatedData) {
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";
  EXPECT_EQ(npy_error_of([&] { parse_npy(make_npy(1, header, std::string(12, '\0')), "x.npy"); }),
            "'x.npy': data has 12 bytes, shape [2,3] of float32 needs 24");
}

TEST(NpyError, RejectsFortranOrder) {
  const std::string header = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n";
  EXPECT_EQ(npy_error_of([&] { parse_npy(make_npy(1, header, std::string(24, '\0')), "x.npy"); }),
            "'x.npy': fortran_order arrays are not supported");
}

TEST(NpyError, RejectsBigEndianAndUnsupportedDtypes) {
  const auto error_for = [](const std::string& descr) {
    const std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (), }";
    return npy_error_of([&] { parse_npy(make_npy(1, header, std::string(16, '\0')), "x.npy"); });
  };
  EXPECT_EQ(error_for(">f4"),
            "'x.npy': big-endian dtype '>f4' is not supported (save it as '<f4')");
  const std::string supported = "(supported: <f4, <f8, <i4, <i8, |b1, |u1, |i1)";
  EXPECT_EQ(error_for("<c8"), "'x.npy': unsupported dtype '<c8' " + supported);
  EXPECT_EQ(error_for("<f2"), "'x.npy': unsupported dtype '<f2' " + supported);
  EXPECT_EQ(error_for("|f4"), "'x.npy': unsupported dtype '|f4' " + supported);
  EXPECT_EQ(error_for("<U10"), "'x.npy': unsupported dtype '<U10' " + supported);
  // One-byte types have no byte order: numpy reads '>u1' as '|u1', and so do we.
  EXPECT_EQ(
      parse_npy(make_npy(1, "{'descr': '>u1', 'fortran_order': False, 'shape': ()}", "z"), "x.npy")
          .dtype,
      kUInt8);
}

TEST(NpyError, RejectsMalformedHeaders) {
  const auto error_for = [](const std::string& header) {
    return npy_error_of([&] { parse_npy(make_npy(1, header, std::string(64, '\0')), "x.npy"); });
  };
  const std::string prefix = "'x.npy': malformed header: ";
  const std::string no_shape = "{'descr': '<f4', 'fortran_order': False}";
  EXPECT_EQ(error_for(no_shape), prefix + "missing key 'shape' (header: " + no_shape + ")");
  EXPECT_NE(error_for("{'descr': '<f4', 'fortran_order': False, 'shape': (5)}")
                .find("'shape' is not a tuple (a one-element tuple is written '(5,)')"),
            std::string::npos);
  EXPECT_NE(error_for("{'descr': '<f4', 'fortran_order': False, 'shape': [5]}")
                .find("'shape' is not a tuple"),
            std::string::npos);
  EXPECT_NE(error_for("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}")
                .find("non-negative integers"),
            std::string::npos);
  EXPECT_NE(error_for("{'descr': '<f4', 'fortran_order': 0, 'shape': ()}")
                .find("'fortran_order' is not True or False"),
            std::string::npos);
  EXPECT_NE(error_for("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}")
                .find("structured dtypes are not supported"),
            std::string::npos);
  EXPECT_NE(error_for("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}")
                .find("duplicate key 'descr'"),
            std::string::npos);
  EXPECT_NE(error_for("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}")
                .find("unexpected key 'x'"),
            std::string::npos);
  EXPECT_NE(error_for("{'descr': '<f4', 'fortran_order': False, 'shape': ()").find("expected '}'"),
            std::string::npos);
  EXPECT_NE(error_for("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}")
                .find("too large"),
            std::string::npos);
  EXPECT_EQ(error_for("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, "
                      "4294967296)}"),
            "'x.npy': shape [4294967296,4294967296] is too large");
}

TEST(NpyError, RejectsUnknownFormatVersions) {
  std::string bytes = make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': ()}", "");
  bytes[6] = 4;
  EXPECT_EQ(npy_error_of([&] { parse_npy(bytes, "x.npy"); }),
            "'x.npy': unsupported .npy format version 4.0 (supported: 1.0, 2.0, 3.0)");
}

TEST(NpyError, NamesAnUnreadablePath) {
  test::TempDir dir("npy_unreadable");
  const std::string missing = dir.file("missing.npy");
  EXPECT_EQ(npy_error_of([&] { read_npy(missing); }),
            ".npy file '" + missing + "': cannot open (No such file or directory)");
  EXPECT_EQ(npy_error_of([&] { read_npy(dir.file("")); }),
            ".npy file '" + dir.file("") + "' is a directory, not a regular file");
}

TEST(NpyError, RefusesEndlessAndOversizedFilesBeforeReadingThem) {
  // /dev/zero used to be read until std::bad_alloc (exit 70); a FIFO with no writer hung.
  EXPECT_EQ(npy_error_of([&] { read_npy("/dev/zero"); }),
            ".npy file '/dev/zero' is a device, not a regular file");
  test::TempDir dir("npy_endless");
  const std::string fifo = dir.file("fifo.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(npy_error_of([&] { read_npy(fifo); }),
            ".npy file '" + fifo + "' is a FIFO, not a regular file");
  const std::string big = dir.file("big.npy");
  write_npy(big, NpyArray::from_floats({1000}, std::vector<float>(1000, 1.0f)));
  EXPECT_EQ(read_npy(big, 4128).numel(), 1000);
  EXPECT_EQ(npy_error_of([&] { read_npy(big, 4000); }),
            ".npy file '" + big + "' has 4128 bytes, more than the limit of 4000");
}

TEST(NpyError, NamesAnUnwritablePath) {
  test::TempDir dir("npy_unwritable");
  const std::string path = dir.file("no_such_dir/out.npy");
  EXPECT_EQ(npy_error_of([&] { write_npy(path, NpyArray::from_floats({1}, {1.0f})); }),
            "write_npy: cannot write '" + path + "': No such file or directory");
}

TEST(NpyError, RejectsWritingUnsupportedDtypes) {
  NpyArray half;
  half.dtype = ir::DataType::float16();
  half.bytes = {0, 0};
  EXPECT_EQ(npy_error_of([&] { format_npy(half); }),
            "write_npy: unsupported dtype float16 (supported: float32, float64, int32, int64, "
            "bool, uint8, int8)");
}

}  // namespace
}  // namespace tensortune::graph

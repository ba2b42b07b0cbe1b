// SPDX-License-Identifier: Apache-2.0
// Scalar and vector data types of the IR. Designed so float16/bfloat16 slot in beside float32.
#pragma once

#include <cstdint>
#include <string>

namespace tensortune::ir {

/// A data type: a code, a bit width and a lane count (lanes > 1 is a vector).
class DataType {
 public:
  enum class Code : uint8_t { Int, UInt, Float, BFloat };

  constexpr DataType() = default;
  constexpr DataType(Code code, int bits, int lanes = 1)
      : code_(code), bits_(static_cast<uint8_t>(bits)), lanes_(static_cast<uint16_t>(lanes)) {}

  static constexpr DataType int32(int lanes = 1) { return {Code::Int, 32, lanes}; }
  static constexpr DataType int64(int lanes = 1) { return {Code::Int, 64, lanes}; }
  static constexpr DataType float32(int lanes = 1) { return {Code::Float, 32, lanes}; }
  static constexpr DataType float64(int lanes = 1) { return {Code::Float, 64, lanes}; }
  static constexpr DataType float16(int lanes = 1) { return {Code::Float, 16, lanes}; }
  static constexpr DataType bfloat16(int lanes = 1) { return {Code::BFloat, 16, lanes}; }
  /// The boolean type of comparisons: UInt(1).
  static constexpr DataType boolean(int lanes = 1) { return {Code::UInt, 1, lanes}; }
  /// The type of loop variables and indices.
  static constexpr DataType index() { return int32(); }

  constexpr Code code() const { return code_; }
  constexpr int bits() const { return bits_; }
  constexpr int lanes() const { return lanes_; }
  constexpr int bytes() const { return (bits_ + 7) / 8; }
  constexpr bool is_int() const { return code_ == Code::Int; }
  constexpr bool is_uint() const { return code_ == Code::UInt; }
  constexpr bool is_float() const { return code_ == Code::Float || code_ == Code::BFloat; }
  constexpr bool is_bool() const { return code_ == Code::UInt && bits_ == 1; }
  constexpr bool is_scalar() const { return lanes_ == 1; }
  constexpr bool is_vector() const { return lanes_ > 1; }
  constexpr DataType element_of() const { return {code_, bits_, 1}; }
  constexpr DataType with_lanes(int lanes) const { return {code_, bits_, lanes}; }

  constexpr bool operator==(const DataType& o) const {
    return code_ == o.code_ && bits_ == o.bits_ && lanes_ == o.lanes_;
  }
  constexpr bool operator!=(const DataType& o) const { return !(*this == o); }

  /// "float32", "int32", "bool", "float32x16".
  std::string to_string() const;
  /// Parses the form printed by to_string(); throws UserError on anything else.
  static DataType parse(const std::string& text);

 private:
  Code code_ = Code::Int;
  uint8_t bits_ = 32;
  uint16_t lanes_ = 1;
};

}  // namespace tensortune::ir

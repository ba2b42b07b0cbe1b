// SPDX-License-Identifier: Apache-2.0
// DataType printing and parsing.
#include "tensortune/ir/type.h"

#include "tensortune/support/error.h"

#include <cctype>

namespace tensortune::ir {

std::string DataType::to_string() const {
  std::string s;
  if (is_bool()) {
    s = "bool";
  } else {
    switch (code_) {
      case Code::Int:
        s = "int";
        break;
      case Code::UInt:
        s = "uint";
        break;
      case Code::Float:
        s = "float";
        break;
      case Code::BFloat:
        s = "bfloat";
        break;
    }
    s += std::to_string(bits_);
  }
  if (lanes_ > 1) {
    s += "x" + std::to_string(lanes_);
  }
  return s;
}

namespace {

int parse_number(const std::string& text, size_t pos, size_t end, const std::string& whole) {
  TT_USER_CHECK(pos < end) << "unknown data type '" << whole << "'";
  int value = 0;
  for (size_t i = pos; i < end; ++i) {
    TT_USER_CHECK(std::isdigit(static_cast<unsigned char>(text[i])) && value < 100000)
        << "unknown data type '" << whole << "'";
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

}  // namespace

DataType DataType::parse(const std::string& text) {
  size_t x = text.find('x');
  std::string base = text.substr(0, x);
  int lanes = 1;
  if (x != std::string::npos) {
    lanes = parse_number(text, x + 1, text.size(), text);
    TT_USER_CHECK(lanes >= 1) << "unknown data type '" << text << "'";
  }
  if (base == "bool") {
    return boolean(lanes);
  }
  struct Prefix {
    const char* name;
    Code code;
  };
  for (Prefix p : {Prefix{"bfloat", Code::BFloat}, Prefix{"float", Code::Float},
                   Prefix{"uint", Code::UInt}, Prefix{"int", Code::Int}}) {
    std::string name = p.name;
    if (base.compare(0, name.size(), name) != 0) {
      continue;
    }
    int bits = parse_number(base, name.size(), base.size(), text);
    bool ok = p.code == Code::Float    ? (bits == 16 || bits == 32 || bits == 64)
              : p.code == Code::BFloat ? bits == 16
                                       : (bits == 8 || bits == 16 || bits == 32 || bits == 64);
    TT_USER_CHECK(ok) << "unknown data type '" << text << "'";
    return {p.code, bits, lanes};
  }
  throw UserError("unknown data type '" + text +
                  "' (expected e.g. float32, int32, bool, float32x16)");
}

}  // namespace tensortune::ir

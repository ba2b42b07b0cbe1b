// SPDX-License-Identifier: Apache-2.0
// A strict RFC 8259 JSON parser: no comments, trailing commas, NaN or leading zeros; strings must
// be valid UTF-8 and \u escapes must pair surrogates. Errors name the line and column.
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace tensortune::support {
namespace {

constexpr int kMaxDepth = 512;  // deeper nesting is refused instead of overflowing the stack

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  Json parse_document() {
    skip_space();
    Json value = parse_value(0);
    skip_space();
    if (pos_ < text_.size()) {
      fail("unexpected '" + printable(text_[pos_]) + "' after the value");
    }
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { fail_at(pos_, message); }

  [[noreturn]] void fail_at(size_t at, const std::string& message) const {
    int line = 1;
    int column = 1;
    for (size_t i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw UserError("json: line " + std::to_string(line) + ", column " + std::to_string(column) +
                    ": " + message);
  }

  static std::string printable(char c) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      return std::string(1, c);
    }
    static constexpr char kHex[] = "0123456789abcdef";
    return std::string("\\x") + kHex[u >> 4] + kHex[u & 0xf];
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++pos_;
    }
  }

  void expect(char c, const char* context) {
    if (peek() != c) {
      fail(std::string("expected '") + c + "' " + context +
           (at_end() ? ", found end of input" : ", found '" + printable(peek()) + "'"));
    }
    ++pos_;
  }

  Json parse_value(int depth) {
    if (at_end()) {
      fail("expected a value, found end of input");
    }
    char c = peek();
    if (c == '{' || c == '[') {
      if (depth >= kMaxDepth) {
        fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
      }
      return c == '{' ? parse_object(depth + 1) : parse_array(depth + 1);
    }
    if (c == '"') {
      return Json(parse_string());
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      return parse_number();
    }
    for (const char* word : {"true", "false", "null"}) {
      if (text_.compare(pos_, std::char_traits<char>::length(word), word) == 0) {
        pos_ += std::char_traits<char>::length(word);
        return word[0] == 'n' ? Json() : Json(word[0] == 't');
      }
    }
    fail("expected a value, found '" + printable(c) + "'");
  }

  Json parse_object(int depth) {
    ++pos_;  // '{'
    Json::Object members;
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return Json(std::move(members));
    }
    while (true) {
      skip_space();
      size_t key_pos = pos_;
      if (peek() != '"') {
        fail("expected a string key in object");
      }
      std::string key = parse_string();
      if (members.count(key) > 0) {
        fail_at(key_pos, "duplicate key '" + key + "'");
      }
      skip_space();
      expect(':', "after object key");
      skip_space();
      members[key] = parse_value(depth);
      skip_space();
      if (peek() == '}') {
        ++pos_;
        return Json(std::move(members));
      }
      expect(',', "or '}' after object member");
    }
  }

  Json parse_array(int depth) {
    ++pos_;  // '['
    Json::Array items;
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return Json(std::move(items));
    }
    while (true) {
      skip_space();
      items.push_back(parse_value(depth));
      skip_space();
      if (peek() == ']') {
        ++pos_;
        return Json(std::move(items));
      }
      expect(',', "or ']' after array element");
    }
  }

  Json parse_number() {
    size_t start = pos_;
    bool integral = true;
    if (peek() == '-') {
      ++pos_;
    }
    if (peek() == '0') {
      ++pos_;
      if (peek() >= '0' && peek() <= '9') {
        fail("leading zeros are not allowed in numbers");
      }
    } else {
      require_digits("after '-'");
    }
    if (peek() == '.') {
      integral = false;
      ++pos_;
      require_digits("after the decimal point");
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++pos_;
      if (peek() == '+' || peek() == '-') {
        ++pos_;
      }
      require_digits("in the exponent");
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    if (integral) {
      int64_t value = 0;
      auto [end, ec] = std::from_chars(first, last, value);
      if (ec == std::errc() && end == last) {
        return Json(value);
      }  // out of int64 range: fall through to a double
    }
    double value = 0;
    auto [end, ec] = std::from_chars(first, last, value);
    if (ec == std::errc::result_out_of_range) {
      std::string literal(first, last);
      value = std::strtod(literal.c_str(), nullptr);  // underflow gives 0 or a subnormal
      if (std::isinf(value)) {
        fail_at(start, "number " + literal + " is out of range for a double");
      }
    } else {
      TT_CHECK(ec == std::errc() && end == last) << "from_chars rejected a validated number";
    }
    return Json(value);
  }

  void require_digits(const char* where) {
    if (!(peek() >= '0' && peek() <= '9')) {
      fail(std::string("expected a digit ") + where);
    }
    while (peek() >= '0' && peek() <= '9') {
      ++pos_;
    }
  }

  std::string parse_string() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (at_end()) {
        fail("unterminated string");
      }
      auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) {
        fail("control character " + printable(static_cast<char>(c)) + " in string (escape it)");
      }
      if (c == '\\') {
        parse_escape(out);
      } else if (c < 0x80) {
        out += static_cast<char>(c);
        ++pos_;
      } else {
        copy_utf8(out);
      }
    }
  }

  void parse_escape(std::string& out) {
    ++pos_;  // backslash
    char c = peek();
    ++pos_;
    switch (c) {
      case '"':
      case '\\':
      case '/':
        out += c;
        return;
      case 'b':
        out += '\b';
        return;
      case 'f':
        out += '\f';
        return;
      case 'n':
        out += '\n';
        return;
      case 'r':
        out += '\r';
        return;
      case 't':
        out += '\t';
        return;
      case 'u':
        append_utf8(parse_code_point(), out);
        return;
      default:
        fail_at(pos_ - 2, "invalid escape '\\" + printable(c) + "'");
    }
  }

  /// After "\u": four hex digits, and for a high surrogate the "\uDC00".."\uDFFF" that completes
  /// it.
  uint32_t parse_code_point() {
    size_t start = pos_ - 2;
    uint32_t unit = parse_hex4();
    if (unit >= 0xDC00 && unit <= 0xDFFF) {
      fail_at(start, "lone low surrogate in \\u escape");
    }
    if (unit < 0xD800 || unit > 0xDBFF) {
      return unit;
    }
    if (text_.compare(pos_, 2, "\\u") != 0) {
      fail_at(start, "high surrogate not followed by a \\u low surrogate");
    }
    pos_ += 2;
    uint32_t low = parse_hex4();
    if (low < 0xDC00 || low > 0xDFFF) {
      fail_at(start, "high surrogate not followed by a low surrogate");
    }
    return 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
  }

  uint32_t parse_hex4() {
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      char c = peek();
      int digit = (c >= '0' && c <= '9')   ? c - '0'
                  : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                  : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                           : -1;
      if (digit < 0) {
        fail("expected 4 hex digits after \\u");
      }
      value = value * 16 + static_cast<uint32_t>(digit);
      ++pos_;
    }
    return value;
  }

  static void append_utf8(uint32_t cp, std::string& out) {
    auto byte = [&out](uint32_t b) {
      out += static_cast<char>(static_cast<unsigned char>(b));
    };
    if (cp < 0x80) {
      byte(cp);
    } else if (cp < 0x800) {
      byte(0xC0 | (cp >> 6));
      byte(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      byte(0xE0 | (cp >> 12));
      byte(0x80 | ((cp >> 6) & 0x3F));
      byte(0x80 | (cp & 0x3F));
    } else {
      byte(0xF0 | (cp >> 18));
      byte(0x80 | ((cp >> 12) & 0x3F));
      byte(0x80 | ((cp >> 6) & 0x3F));
      byte(0x80 | (cp & 0x3F));
    }
  }

  /// Copies one multi-byte UTF-8 sequence, rejecting overlong forms, surrogates and > U+10FFFF.
  void copy_utf8(std::string& out) {
    auto lead = static_cast<unsigned char>(text_[pos_]);
    int extra = lead >= 0xF0 && lead <= 0xF4 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC2 ? 1 : -1;
    if (lead >= 0xF5) {
      extra = -1;
    }
    uint32_t cp = extra == 1 ? lead & 0x1F : extra == 2 ? lead & 0x0F : lead & 0x07;
    for (int i = 1; i <= extra; ++i) {
      auto next = static_cast<unsigned char>(pos_ + static_cast<size_t>(i) < text_.size()
                                                 ? text_[pos_ + static_cast<size_t>(i)]
                                                 : '\0');
      if ((next & 0xC0) != 0x80) {
        extra = -1;
        break;
      }
      cp = (cp << 6) | (next & 0x3F);
    }
    bool overlong = (extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000);
    bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
    if (extra < 0 || overlong || surrogate || cp > 0x10FFFF) {
      fail("invalid UTF-8 in string");
    }
    out.append(text_, pos_, static_cast<size_t>(extra) + 1);
    pos_ += static_cast<size_t>(extra) + 1;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

Json Json::parse(const std::string& text) {
  return Parser(text).parse_document();
}

}  // namespace tensortune::support

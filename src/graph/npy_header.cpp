// SPDX-License-Identifier: Apache-2.0
// The .npy header dict reader: a small recursive-descent parser of the subset of Python literals
// numpy writes (numpy itself reads the header with ast.literal_eval).
#include "graph/npy_header.h"

#include "tensortune/support/error.h"

#include <cctype>
#include <cstring>
#include <limits>
#include <utility>

namespace tensortune::graph {
namespace {

/// Parses the header dict, e.g. "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
/// accepting any spacing and key order, as Python's literal_eval (which numpy uses) would.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& what) : text_(text), what_(what) {}

  NpyHeader parse() {
    NpyHeader header;
    bool seen_descr = false;
    bool seen_fortran = false;
    bool seen_shape = false;
    skip_space();
    expect('{');
    while (true) {
      skip_space();
      if (accept('}')) {
        break;
      }
      const std::string key = parse_string("a key");
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        check_new(key, seen_descr);
        if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
          fail("'descr' is not a string (structured dtypes are not supported)");
        }
        header.descr = parse_string("the 'descr' string");
      } else if (key == "fortran_order") {
        check_new(key, seen_fortran);
        header.fortran_order = parse_bool();
      } else if (key == "shape") {
        check_new(key, seen_shape);
        header.shape = parse_shape();
      } else {
        fail("unexpected key '" + key + "'");
      }
      skip_space();
      if (!accept(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (pos_ != text_.size()) {
      fail("unexpected text after the closing '}'");
    }
    for (const auto& [name, seen] : {std::pair<const char*, bool>{"descr", seen_descr},
                                     {"fortran_order", seen_fortran},
                                     {"shape", seen_shape}}) {
      if (!seen) {
        fail(std::string("missing key '") + name + "'");
      }
    }
    return header;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw UserError("'" + what_ + "': malformed header: " + message + " (header: " + text_ + ")");
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool accept(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!accept(c)) {
      fail(std::string("expected '") + c + "' at offset " + std::to_string(pos_));
    }
  }

  void check_new(const std::string& key, bool& seen) const {
    if (seen) {
      fail("duplicate key '" + key + "'");
    }
    seen = true;
  }

  /// A quoted string without escapes (numpy never writes any).
  std::string parse_string(const char* what) {
    const char quote = pos_ < text_.size() ? text_[pos_] : '\0';
    if (quote != '\'' && quote != '"') {
      fail(std::string("expected ") + what + " at offset " + std::to_string(pos_));
    }
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) {
      fail("unterminated string at offset " + std::to_string(pos_));
    }
    std::string value = text_.substr(pos_ + 1, end - pos_ - 1);
    if (value.find('\\') != std::string::npos) {
      fail("escape sequences in strings are not supported");
    }
    pos_ = end + 1;
    return value;
  }

  bool parse_bool() {
    for (const auto& [word, value] :
         {std::pair<const char*, bool>{"True", true}, {"False", false}}) {
      const size_t len = std::strlen(word);
      if (text_.compare(pos_, len, word) == 0) {
        pos_ += len;
        return value;
      }
    }
    fail("'fortran_order' is not True or False");
  }

  int64_t parse_dim() {
    if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      fail("'shape' holds something other than non-negative integers");
    }
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      const int digit = text_[pos_++] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        fail("a dimension of 'shape' is too large");
      }
      value = value * 10 + digit;
    }
    accept('L');  // Python 2 longs, as old numpy versions wrote them: "(2L, 3L)"
    return value;
  }

  /// A tuple: "()", "(5,)", "(2, 3)" or "(2, 3,)". "(5)" is the integer 5 in Python and numpy
  /// rejects it, and so do we.
  std::vector<int64_t> parse_shape() {
    if (!accept('(')) {
      fail("'shape' is not a tuple");
    }
    std::vector<int64_t> shape;
    skip_space();
    while (!accept(')')) {
      shape.push_back(parse_dim());
      skip_space();
      if (accept(')')) {
        if (shape.size() == 1) {
          fail("'shape' is not a tuple (a one-element tuple is written '(5,)')");
        }
        break;
      }
      expect(',');
      skip_space();
    }
    return shape;
  }

  const std::string& text_;
  const std::string& what_;
  size_t pos_ = 0;
};

}  // namespace

NpyHeader parse_npy_header(const std::string& text, const std::string& what) {
  return HeaderParser(text, what).parse();
}

}  // namespace tensortune::graph

// SPDX-License-Identifier: Apache-2.0
// The Json value (deep-copying, so it behaves like an int) and its deterministic printer.
// The parser is in json_parse.cpp.
#include "tensortune/support/json.h"

#include "tensortune/support/error.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace tensortune::support {
namespace {

const char* kind_name(Json::Kind kind) {
  switch (kind) {
    case Json::Kind::Null:
      return "null";
    case Json::Kind::Bool:
      return "bool";
    case Json::Kind::Int:
      return "int";
    case Json::Kind::Double:
      return "double";
    case Json::Kind::String:
      return "string";
    case Json::Kind::Array:
      return "array";
    case Json::Kind::Object:
      return "object";
  }
  return "?";
}

[[noreturn]] void throw_kind(const char* what, const char* expected, Json::Kind found) {
  throw UserError(std::string(what) + ": expected " + expected + ", found " + kind_name(found));
}

}  // namespace

Json::Json(bool b) : kind_(Kind::Bool), b_(b) {}
Json::Json(int v) : kind_(Kind::Int), i_(v) {}
Json::Json(int64_t v) : kind_(Kind::Int), i_(v) {}
Json::Json(uint64_t v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {
  TT_USER_CHECK(v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      << "json: integer " << v << " does not fit int64";
}
Json::Json(double v) : kind_(Kind::Double), d_(v) {}
Json::Json(const char* s) : kind_(Kind::String), s_(s) {}
Json::Json(std::string s) : kind_(Kind::String), s_(std::move(s)) {}
Json::Json(Array a) : kind_(Kind::Array), a_(std::make_shared<Array>(std::move(a))) {}
Json::Json(Object o) : kind_(Kind::Object), o_(std::make_shared<Object>(std::move(o))) {}

Json::Json(const Json& other)
    : kind_(other.kind_),
      b_(other.b_),
      i_(other.i_),
      d_(other.d_),
      s_(other.s_),
      a_(other.a_ ? std::make_shared<Array>(*other.a_) : nullptr),
      o_(other.o_ ? std::make_shared<Object>(*other.o_) : nullptr) {}

Json::Json(Json&& other) noexcept
    : kind_(other.kind_),
      b_(other.b_),
      i_(other.i_),
      d_(other.d_),
      s_(std::move(other.s_)),
      a_(std::move(other.a_)),
      o_(std::move(other.o_)) {
  other.kind_ = Kind::Null;
}

Json& Json::operator=(const Json& other) {
  if (this != &other) {
    *this = Json(other);
  }
  return *this;
}

Json& Json::operator=(Json&& other) noexcept {
  if (this != &other) {
    kind_ = other.kind_;
    b_ = other.b_;
    i_ = other.i_;
    d_ = other.d_;
    s_ = std::move(other.s_);
    a_ = std::move(other.a_);
    o_ = std::move(other.o_);
    other.kind_ = Kind::Null;
  }
  return *this;
}

Json::~Json() = default;

bool Json::as_bool(const char* what) const {
  if (kind_ != Kind::Bool) {
    throw_kind(what, "bool", kind_);
  }
  return b_;
}

int64_t Json::as_int(const char* what) const {
  if (kind_ != Kind::Int) {
    throw_kind(what, "int", kind_);
  }
  return i_;
}

double Json::as_double(const char* what) const {
  if (kind_ == Kind::Int) {
    return static_cast<double>(i_);
  }
  if (kind_ != Kind::Double) {
    throw_kind(what, "number", kind_);
  }
  return d_;
}

const std::string& Json::as_string(const char* what) const {
  if (kind_ != Kind::String) {
    throw_kind(what, "string", kind_);
  }
  return s_;
}

const Json::Array& Json::as_array(const char* what) const {
  if (kind_ != Kind::Array) {
    throw_kind(what, "array", kind_);
  }
  return *a_;
}

const Json::Object& Json::as_object(const char* what) const {
  if (kind_ != Kind::Object) {
    throw_kind(what, "object", kind_);
  }
  return *o_;
}

Json::Array& Json::as_array_mut() {
  if (kind_ == Kind::Null) {
    *this = array();
  }
  if (kind_ != Kind::Array) {
    throw_kind("json value", "array", kind_);
  }
  return *a_;
}

Json::Object& Json::as_object_mut() {
  if (kind_ == Kind::Null) {
    *this = object();
  }
  if (kind_ != Kind::Object) {
    throw_kind("json value", "object", kind_);
  }
  return *o_;
}

const Json& Json::at(const std::string& key) const {
  const Object& members = as_object("json value");
  auto it = members.find(key);
  if (it == members.end()) {
    std::string keys;
    for (const auto& [name, value] : members) {
      keys += (keys.empty() ? "" : ", ") + name;
    }
    throw UserError("json: missing key '" + key + "' (keys: " + (keys.empty() ? "none" : keys) +
                    ")");
  }
  return it->second;
}

bool Json::contains(const std::string& key) const {
  return kind_ == Kind::Object && o_->count(key) > 0;
}

Json& Json::operator[](const std::string& key) {
  return as_object_mut()[key];
}

void Json::push_back(Json v) {
  as_array_mut().push_back(std::move(v));
}

size_t Json::size() const {
  if (kind_ == Kind::Array) {
    return a_->size();
  }
  if (kind_ != Kind::Object) {
    throw_kind("json size", "array or object", kind_);
  }
  return o_->size();
}

bool Json::operator==(const Json& other) const {
  if (kind_ != other.kind_) {
    return false;
  }
  switch (kind_) {
    case Kind::Null:
      return true;
    case Kind::Bool:
      return b_ == other.b_;
    case Kind::Int:
      return i_ == other.i_;
    case Kind::Double:
      return d_ == other.d_;
    case Kind::String:
      return s_ == other.s_;
    case Kind::Array:
      return *a_ == *other.a_;
    case Kind::Object:
      return *o_ == *other.o_;
  }
  return false;
}

// ---- printing ----

namespace {

void dump_string(const std::string& s, std::string& out) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;  // UTF-8 bytes pass through unchanged
        }
    }
  }
  out += '"';
}

void dump_double(double d, std::string& out) {
  TT_USER_CHECK(std::isfinite(d)) << "json: cannot write " << d << " (JSON has no NaN or infinity)";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);  // shortest round-trip form
  TT_CHECK(ec == std::errc()) << "to_chars failed for " << d;
  std::string text(buf, end);
  if (text.find_first_of(".e") == std::string::npos) {
    text += ".0";  // keep it a double when parsed back
  }
  out += text;
}

void newline(int indent, int depth, std::string& out) {
  if (indent > 0) {
    out += '\n';
    out.append(static_cast<size_t>(indent) * static_cast<size_t>(depth), ' ');
  }
}

void dump_value(const Json& v, int indent, int depth, std::string& out) {
  switch (v.kind()) {
    case Json::Kind::Null:
      out += "null";
      return;
    case Json::Kind::Bool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Json::Kind::Int:
      out += std::to_string(v.as_int());
      return;
    case Json::Kind::Double:
      dump_double(v.as_double(), out);
      return;
    case Json::Kind::String:
      dump_string(v.as_string(), out);
      return;
    case Json::Kind::Array: {
      const Json::Array& items = v.as_array();
      out += '[';
      for (size_t i = 0; i < items.size(); ++i) {
        out += i == 0 ? "" : ",";
        newline(indent, depth + 1, out);
        dump_value(items[i], indent, depth + 1, out);
      }
      if (!items.empty()) {
        newline(indent, depth, out);
      }
      out += ']';
      return;
    }
    case Json::Kind::Object: {
      const Json::Object& members = v.as_object();
      out += '{';
      bool first = true;
      for (const auto& [key, value] : members) {  // std::map: sorted keys
        out += first ? "" : ",";
        first = false;
        newline(indent, depth + 1, out);
        dump_string(key, out);
        out += indent > 0 ? ": " : ":";
        dump_value(value, indent, depth + 1, out);
      }
      if (!members.empty()) {
        newline(indent, depth, out);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

std::string Json::dump(int indent) const {
  std::string out;
  dump_value(*this, indent, 0, out);
  return out;
}

}  // namespace tensortune::support

// SPDX-License-Identifier: Apache-2.0
// A small JSON value with a strict parser and a deterministic printer (object keys are kept
// sorted), used for schedules, records and --json output. No third-party types.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tensortune::support {

/// One JSON value. Integers and doubles are kept apart so int64 values round-trip exactly.
/// A Json is a plain value: copying deep-copies arrays and objects, so mutating a copy never
/// changes the original.
class Json {
 public:
  enum class Kind { Null, Bool, Int, Double, String, Array, Object };
  using Array = std::vector<Json>;
  using Object = std::map<std::string, Json>;

  Json() = default;        // null
  Json(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)
  Json(bool b);            // NOLINT(google-explicit-constructor)
  Json(int v);             // NOLINT(google-explicit-constructor)
  Json(int64_t v);         // NOLINT(google-explicit-constructor)
  Json(uint64_t v);        // NOLINT(google-explicit-constructor); UserError above INT64_MAX
  Json(double v);          // NOLINT(google-explicit-constructor)
  Json(const char* s);     // NOLINT(google-explicit-constructor)
  Json(std::string s);     // NOLINT(google-explicit-constructor)
  Json(Array a);           // NOLINT(google-explicit-constructor)
  Json(Object o);          // NOLINT(google-explicit-constructor)
  Json(const Json& other);
  Json(Json&& other) noexcept;  ///< leaves `other` null
  Json& operator=(const Json& other);
  Json& operator=(Json&& other) noexcept;
  ~Json();
  static Json array() { return Json(Array{}); }
  static Json object() { return Json(Object{}); }

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_int() const { return kind_ == Kind::Int; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Double; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_array() const { return kind_ == Kind::Array; }
  bool is_object() const { return kind_ == Kind::Object; }

  /// Typed accessors; each throws UserError naming `what` (e.g. "step 3 field 'factor'") and the
  /// kind found when the kind is wrong.
  bool as_bool(const char* what = "value") const;
  int64_t as_int(const char* what = "value") const;
  double as_double(const char* what = "value") const;  // accepts Int too
  const std::string& as_string(const char* what = "value") const;
  const Array& as_array(const char* what = "value") const;
  const Object& as_object(const char* what = "value") const;
  /// Mutable access; a null value first becomes an empty array / object.
  Array& as_array_mut();
  Object& as_object_mut();

  /// Object access. `at` throws UserError naming the missing key; `operator[]` inserts (objects
  /// only; a null value first becomes an empty object). `contains` is false for non-objects.
  const Json& at(const std::string& key) const;
  bool contains(const std::string& key) const;
  Json& operator[](const std::string& key);
  /// Appends to an array (a null value first becomes an empty array).
  void push_back(Json v);
  /// Number of elements of an array or members of an object; UserError for other kinds.
  size_t size() const;

  /// Compact single-line text (sorted keys, shortest round-trip doubles), or indented by `indent`
  /// spaces per level when indent > 0. Doubles always carry a '.' or an exponent so they parse
  /// back as doubles. Throws UserError for NaN or infinity, which JSON cannot represent.
  std::string dump(int indent = 0) const;
  /// Parses the whole of `text`; throws UserError with line and column on malformed input.
  /// Integers that fit int64 become Int; other numbers become Double.
  static Json parse(const std::string& text);

  /// Structural equality; Int and Double are different kinds (Json(1) != Json(1.0)).
  bool operator==(const Json& other) const;
  bool operator!=(const Json& other) const { return !(*this == other); }

 private:
  Kind kind_ = Kind::Null;
  bool b_ = false;
  int64_t i_ = 0;
  double d_ = 0;
  std::string s_;
  std::shared_ptr<Array> a_;
  std::shared_ptr<Object> o_;
};

}  // namespace tensortune::support

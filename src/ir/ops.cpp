// SPDX-License-Identifier: Apache-2.0
// User-facing expression operators: constant adoption, scalar-to-vector broadcast, and clear
// UserErrors for real type mismatches, before the checked node factories.
#include "tensortune/ir/ops.h"

#include "tensortune/support/error.h"

#include <cmath>
#include <limits>

namespace tensortune::ir {

Expr make_const(DataType t, int64_t value) {
  Expr scalar = t.is_float() ? FloatImm::make(t.element_of(), static_cast<double>(value))
                             : IntImm::make(t.element_of(), value);
  return t.lanes() > 1 ? Broadcast::make(scalar, t.lanes()) : scalar;
}

Expr make_const(DataType t, double value) {
  Expr scalar = t.is_float() ? FloatImm::make(t.element_of(), value)
                             : IntImm::make(t.element_of(), static_cast<int64_t>(value));
  return t.lanes() > 1 ? Broadcast::make(scalar, t.lanes()) : scalar;
}

Expr min_value(DataType t) {
  if (t.is_float()) {
    return make_const(t, -std::numeric_limits<double>::infinity());
  }
  if (t.is_uint()) {
    return make_const(t, int64_t{0});
  }
  return make_const(t, t.bits() >= 64 ? std::numeric_limits<int64_t>::min()
                                      : -(int64_t{1} << (t.bits() - 1)));
}

Expr max_value(DataType t) {
  if (t.is_float()) {
    return make_const(t, std::numeric_limits<double>::infinity());
  }
  if (t.is_bool()) {
    return make_const(t, int64_t{1});
  }
  int bits = t.is_uint() ? t.bits() : t.bits() - 1;
  return make_const(t, bits >= 63 ? std::numeric_limits<int64_t>::max()
                                  : (int64_t{1} << bits) - 1);
}

const int64_t* as_const_int(const Expr& e) {
  if (const auto* imm = e.as<IntImm>()) {
    return &imm->value;
  }
  if (const auto* b = e.as<Broadcast>()) {
    return as_const_int(b->value);
  }
  return nullptr;
}

bool is_const_int(const Expr& e, int64_t value) {
  const int64_t* v = as_const_int(e);
  return v != nullptr && *v == value;
}

namespace {

bool is_constant(const Expr& e) {
  if (const auto* b = e.as<Broadcast>()) {
    return is_constant(b->value);
  }
  return e.as<IntImm>() != nullptr || e.as<FloatImm>() != nullptr;
}

// Converts a constant to element type `t` (keeping its lanes).
Expr convert_constant(const Expr& e, DataType t) {
  if (const auto* b = e.as<Broadcast>()) {
    return Broadcast::make(convert_constant(b->value, t), b->lanes);
  }
  if (const auto* i = e.as<IntImm>()) {
    return make_const(t.element_of(), i->value);
  }
  const auto* f = e.as<FloatImm>();
  TT_USER_CHECK(!t.is_int() || std::floor(f->value) == f->value)
      << "the constant " << f->value << " cannot be used as " << t.to_string();
  return make_const(t.element_of(), f->value);
}

// Brings both operands to one type: constants adopt the other side's element type, scalars
// are broadcast to the other side's lanes.
void match_types(const char* op, Expr& a, Expr& b) {
  TT_USER_CHECK(a.defined() && b.defined()) << op << ": undefined operand";
  if (a.type().element_of() != b.type().element_of()) {
    if (is_constant(b)) {
      b = convert_constant(b, a.type().element_of());
    } else if (is_constant(a)) {
      a = convert_constant(a, b.type().element_of());
    } else {
      throw UserError(std::string(op) + ": operands have different types (" +
                      a.type().to_string() + " and " + b.type().to_string() +
                      "); insert a cast");
    }
  }
  if (a.type().lanes() != b.type().lanes()) {
    if (a.type().lanes() == 1) {
      a = Broadcast::make(a, b.type().lanes());
    } else if (b.type().lanes() == 1) {
      b = Broadcast::make(b, a.type().lanes());
    } else {
      throw UserError(std::string(op) + ": vector operands of different lanes (" +
                      a.type().to_string() + " and " + b.type().to_string() + ")");
    }
  }
}

void check_not_bool(const char* op, const Expr& a) {
  TT_USER_CHECK(!a.type().is_bool()) << op << ": arithmetic on a boolean; cast it first";
}

void check_bool(const char* op, const Expr& a) {
  TT_USER_CHECK(a.type().is_bool()) << op << ": operand of type " << a.type().to_string()
                                    << " is not a boolean";
}

void check_float(const char* op, const Expr& x) {
  TT_USER_CHECK(x.defined() && x.type().is_float())
      << op << ": needs a floating-point operand, got "
      << (x.defined() ? x.type().to_string() : "undefined") << "; cast it first";
}

}  // namespace

Expr operator+(Expr a, Expr b) {
  match_types("+", a, b);
  check_not_bool("+", a);
  return Add::make(a, b);
}
Expr operator-(Expr a, Expr b) {
  match_types("-", a, b);
  check_not_bool("-", a);
  return Sub::make(a, b);
}
Expr operator*(Expr a, Expr b) {
  match_types("*", a, b);
  check_not_bool("*", a);
  return Mul::make(a, b);
}
Expr operator/(Expr a, Expr b) {
  match_types("/", a, b);
  check_not_bool("/", a);
  return Div::make(a, b);
}
Expr operator%(Expr a, Expr b) {
  match_types("%", a, b);
  check_not_bool("%", a);
  return Mod::make(a, b);
}
Expr operator-(Expr a) {
  TT_USER_CHECK(a.defined()) << "-: undefined operand";
  check_not_bool("-", a);
  return Sub::make(make_const(a.type(), int64_t{0}), a);
}
Expr operator<(Expr a, Expr b) {
  match_types("<", a, b);
  return Lt::make(a, b);
}
Expr operator<=(Expr a, Expr b) {
  match_types("<=", a, b);
  return Le::make(a, b);
}
Expr operator>(Expr a, Expr b) {
  match_types(">", a, b);
  return Gt::make(a, b);
}
Expr operator>=(Expr a, Expr b) {
  match_types(">=", a, b);
  return Ge::make(a, b);
}
Expr operator==(Expr a, Expr b) {
  match_types("==", a, b);
  return Eq::make(a, b);
}
Expr operator!=(Expr a, Expr b) {
  match_types("!=", a, b);
  return Ne::make(a, b);
}
Expr operator&&(Expr a, Expr b) {
  match_types("&&", a, b);
  check_bool("&&", a);
  return And::make(a, b);
}
Expr operator||(Expr a, Expr b) {
  match_types("||", a, b);
  check_bool("||", a);
  return Or::make(a, b);
}
Expr operator!(Expr a) {
  TT_USER_CHECK(a.defined()) << "!: undefined operand";
  check_bool("!", a);
  return Not::make(a);
}
Expr min(Expr a, Expr b) {
  match_types("min", a, b);
  check_not_bool("min", a);
  return Min::make(a, b);
}
Expr max(Expr a, Expr b) {
  match_types("max", a, b);
  check_not_bool("max", a);
  return Max::make(a, b);
}

Expr select(Expr condition, Expr true_value, Expr false_value) {
  match_types("select", true_value, false_value);
  TT_USER_CHECK(condition.defined()) << "select: undefined condition";
  check_bool("select", condition);
  int lanes = true_value.type().lanes();
  if (condition.type().lanes() != lanes) {
    if (condition.type().lanes() == 1) {
      condition = Broadcast::make(condition, lanes);
    } else {
      TT_USER_CHECK(lanes == 1) << "select: condition and values have different lanes";
      true_value = Broadcast::make(true_value, condition.type().lanes());
      false_value = Broadcast::make(false_value, condition.type().lanes());
    }
  }
  return Select::make(condition, true_value, false_value);
}

Expr cast(DataType t, Expr value) {
  TT_USER_CHECK(value.defined()) << "cast: undefined operand";
  if (t.lanes() == 1 && value.type().lanes() > 1) {
    t = t.with_lanes(value.type().lanes());
  }
  if (value.type() == t) {
    return value;
  }
  return Cast::make(t, value);
}

namespace {

Expr unary(Intrinsic op, Expr x) {
  if (op != Intrinsic::Abs) {
    check_float(intrinsic_name(op), x);
  }
  TT_USER_CHECK(x.defined() && !x.type().is_bool()) << intrinsic_name(op) << ": bad operand";
  return Call::make(op, {std::move(x)});
}

}  // namespace

Expr exp(Expr x) { return unary(Intrinsic::Exp, std::move(x)); }
Expr log(Expr x) { return unary(Intrinsic::Log, std::move(x)); }
Expr sqrt(Expr x) { return unary(Intrinsic::Sqrt, std::move(x)); }
Expr tanh(Expr x) { return unary(Intrinsic::Tanh, std::move(x)); }
Expr erf(Expr x) { return unary(Intrinsic::Erf, std::move(x)); }
Expr abs(Expr x) { return unary(Intrinsic::Abs, std::move(x)); }
Expr floor(Expr x) { return unary(Intrinsic::Floor, std::move(x)); }
Expr ceil(Expr x) { return unary(Intrinsic::Ceil, std::move(x)); }
Expr pow(Expr x, Expr y) {
  match_types("pow", x, y);
  check_float("pow", x);
  return Call::make(Intrinsic::Pow, {std::move(x), std::move(y)});
}

}  // namespace tensortune::ir

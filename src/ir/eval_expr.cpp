// SPDX-License-Identifier: Apache-2.0
// The interpreter's expression half: one lane of one expression at a time. Integer Div/Mod are
// floor division/modulo; float32 results are rounded to float after every operation, so they
// match compiled float code bit for bit (a double holds the exact sum, product or quotient of two
// floats, and rounding that to float is the correctly rounded float result).
#include "eval_internal.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace tensortune::ir::eval_detail {
namespace {

int64_t floor_div(int64_t x, int64_t y) {
  if (y == -1) {
    return static_cast<int64_t>(0 - static_cast<uint64_t>(x));
  }
  int64_t q = x / y;
  if ((x % y != 0) && ((x < 0) != (y < 0))) {
    --q;
  }
  return q;
}

int64_t floor_mod(int64_t x, int64_t y) {
  if (y == -1) {
    return 0;
  }
  int64_t r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) {
    r += y;
  }
  return r;
}

template <class T>
T float_floor_mod(T x, T y) {
  T r = std::fmod(x, y);
  if (r != 0 && ((r < 0) != (y < 0))) {
    r += y;
  }
  return r;
}

template <ExprKind K>
int64_t int_op(const BinaryNode<K>* op, int64_t x, int64_t y) {
  auto ux = static_cast<uint64_t>(x);
  auto uy = static_cast<uint64_t>(y);
  if constexpr (K == ExprKind::Add) {
    return wrap_int(op->type, static_cast<int64_t>(ux + uy));
  } else if constexpr (K == ExprKind::Sub) {
    return wrap_int(op->type, static_cast<int64_t>(ux - uy));
  } else if constexpr (K == ExprKind::Mul) {
    return wrap_int(op->type, static_cast<int64_t>(ux * uy));
  } else if constexpr (K == ExprKind::Div || K == ExprKind::Mod) {
    TT_CHECK(y != 0) << "eval: integer division by zero in " << to_string(op->a) << " "
                     << (K == ExprKind::Div ? "/" : "%") << " " << to_string(op->b);
    return wrap_int(op->type, K == ExprKind::Div ? floor_div(x, y) : floor_mod(x, y));
  } else if constexpr (K == ExprKind::Min) {
    return std::min(x, y);
  } else {
    return std::max(x, y);
  }
}

template <ExprKind K>
double float_op(DataType t, double x, double y) {
  if constexpr (K == ExprKind::Add) {
    return round_float(t, x + y);
  } else if constexpr (K == ExprKind::Sub) {
    return round_float(t, x - y);
  } else if constexpr (K == ExprKind::Mul) {
    return round_float(t, x * y);
  } else if constexpr (K == ExprKind::Div) {
    return round_float(t, x / y);
  } else if constexpr (K == ExprKind::Mod) {
    if (t.bits() == 32) {
      return float_floor_mod(static_cast<float>(x), static_cast<float>(y));
    }
    return round_float(t, float_floor_mod(x, y));
  } else if constexpr (K == ExprKind::Min || K == ExprKind::Max) {
    // NaN propagates, so a poisoned value can never be hidden by a min or max.
    if (std::isnan(x) || std::isnan(y)) {
      return std::numeric_limits<double>::quiet_NaN();
    }
    return K == ExprKind::Min ? std::min(x, y) : std::max(x, y);
  }
}

template <ExprKind K>
Scalar arith(Interpreter& in, const BinaryNode<K>* op, int lane) {
  Scalar x = in.eval(op->a, lane);
  Scalar y = in.eval(op->b, lane);
  if (op->type.is_float()) {
    return make_float(float_op<K>(op->type, x.f, y.f));
  }
  return make_int(int_op<K>(op, x.i, y.i));
}

template <ExprKind K, class T>
bool compare_values(T x, T y) {
  if constexpr (K == ExprKind::Eq) {
    return x == y;
  } else if constexpr (K == ExprKind::Ne) {
    return x != y;
  } else if constexpr (K == ExprKind::Lt) {
    return x < y;
  } else if constexpr (K == ExprKind::Le) {
    return x <= y;
  } else if constexpr (K == ExprKind::Gt) {
    return x > y;
  } else if constexpr (K == ExprKind::Ge) {
    return x >= y;
  } else if constexpr (K == ExprKind::And) {
    return x != 0 && y != 0;
  } else {
    return x != 0 || y != 0;
  }
}

/// Both operands are always evaluated (no short circuit), as compiled code does.
template <ExprKind K>
Scalar compare(Interpreter& in, const CmpNode<K>* op, int lane) {
  Scalar x = in.eval(op->a, lane);
  Scalar y = in.eval(op->b, lane);
  if (op->a.type().is_float()) {
    return make_int(compare_values<K>(x.f, y.f) ? 1 : 0);
  }
  return make_int(compare_values<K>(x.i, y.i) ? 1 : 0);
}

Scalar poison(DataType t) {
  if (t.is_float()) {
    return make_float(std::numeric_limits<double>::quiet_NaN());
  }
  return make_int(wrap_int(t, static_cast<int64_t>(0xDEDEDEDEDEDEDEDEULL)));
}

}  // namespace

void unsupported_float(DataType t) {
  TT_CHECK(false) << "eval: " << t.element_of().to_string() << " arithmetic is not supported";
  std::abort();
}

Scalar Interpreter::eval_cast(const Cast* op, int lane) {
  Scalar x = eval(op->value, lane);
  DataType from = op->value.type();
  DataType to = op->type;
  if (to.is_float()) {
    return make_float(round_float(to, from.is_float() ? x.f : static_cast<double>(x.i)));
  }
  if (!from.is_float()) {
    return make_int(to.is_bool() ? (x.i != 0 ? 1 : 0) : wrap_int(to, x.i));
  }
  if (to.is_bool()) {
    return make_int(x.f != 0 ? 1 : 0);
  }
  double t = std::trunc(x.f);
  double lo = to.is_uint() ? 0.0 : -std::ldexp(1.0, to.bits() - 1);
  double hi = std::ldexp(1.0, to.is_uint() && to.bits() < 64 ? to.bits() : to.bits() - 1);
  TT_CHECK(!std::isnan(t) && t >= lo && t < hi)
      << "eval: cast of " << x.f << " to " << to.element_of().to_string() << " is out of range in "
      << to_string(op->value);
  return make_int(static_cast<int64_t>(t));
}

Scalar Interpreter::eval_call(const Call* op, int lane) {
  Scalar x = eval(op->args[0], lane);
  DataType t = op->type;
  if (!t.is_float()) {
    TT_CHECK(op->op == Intrinsic::Abs) << "eval: " << intrinsic_name(op->op) << " of an integer";
    return make_int(
        wrap_int(t, x.i < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(x.i)) : x.i));
  }
  double y = op->args.size() > 1 ? eval(op->args[1], lane).f : 0.0;
  if (t.bits() == 32) {
    auto a = static_cast<float>(x.f);
    auto b = static_cast<float>(y);
    switch (op->op) {
      case Intrinsic::Exp:
        return make_float(std::exp(a));
      case Intrinsic::Log:
        return make_float(std::log(a));
      case Intrinsic::Sqrt:
        return make_float(std::sqrt(a));
      case Intrinsic::Tanh:
        return make_float(std::tanh(a));
      case Intrinsic::Erf:
        return make_float(std::erf(a));
      case Intrinsic::Abs:
        return make_float(std::fabs(a));
      case Intrinsic::Pow:
        return make_float(std::pow(a, b));
      case Intrinsic::Floor:
        return make_float(std::floor(a));
      case Intrinsic::Ceil:
        return make_float(std::ceil(a));
    }
  }
  double a = x.f;
  switch (op->op) {
    case Intrinsic::Exp:
      return make_float(round_float(t, std::exp(a)));
    case Intrinsic::Log:
      return make_float(round_float(t, std::log(a)));
    case Intrinsic::Sqrt:
      return make_float(round_float(t, std::sqrt(a)));
    case Intrinsic::Tanh:
      return make_float(round_float(t, std::tanh(a)));
    case Intrinsic::Erf:
      return make_float(round_float(t, std::erf(a)));
    case Intrinsic::Abs:
      return make_float(round_float(t, std::fabs(a)));
    case Intrinsic::Pow:
      return make_float(round_float(t, std::pow(a, y)));
    case Intrinsic::Floor:
      return make_float(round_float(t, std::floor(a)));
    case Intrinsic::Ceil:
      return make_float(round_float(t, std::ceil(a)));
  }
  return x;
}

Scalar Interpreter::eval_load(const Load* op, int lane) {
  const BufferSlot& b = find_buffer(op->buffer.get());
  if (op->predicate.defined() && eval(op->predicate, lane).i == 0) {
    return poison(op->type);  // a masked-off lane is not read
  }
  return read(b, flat_index(b, op->indices, lane, "load from"));
}

Scalar Interpreter::eval(const Expr& e, int lane) {
  switch (e.kind()) {
    case ExprKind::IntImm:
      return make_int(static_cast<const IntImm*>(e.get())->value);
    case ExprKind::FloatImm:
      return make_float(round_float(e.type(), static_cast<const FloatImm*>(e.get())->value));
    case ExprKind::Var:
      return lookup(static_cast<const VarNode*>(e.get()), lane);
    case ExprKind::Add:
      return arith(*this, e.as<Add>(), lane);
    case ExprKind::Sub:
      return arith(*this, e.as<Sub>(), lane);
    case ExprKind::Mul:
      return arith(*this, e.as<Mul>(), lane);
    case ExprKind::Div:
      return arith(*this, e.as<Div>(), lane);
    case ExprKind::Mod:
      return arith(*this, e.as<Mod>(), lane);
    case ExprKind::Min:
      return arith(*this, e.as<Min>(), lane);
    case ExprKind::Max:
      return arith(*this, e.as<Max>(), lane);
    case ExprKind::Eq:
      return compare(*this, e.as<Eq>(), lane);
    case ExprKind::Ne:
      return compare(*this, e.as<Ne>(), lane);
    case ExprKind::Lt:
      return compare(*this, e.as<Lt>(), lane);
    case ExprKind::Le:
      return compare(*this, e.as<Le>(), lane);
    case ExprKind::Gt:
      return compare(*this, e.as<Gt>(), lane);
    case ExprKind::Ge:
      return compare(*this, e.as<Ge>(), lane);
    case ExprKind::And:
      return compare(*this, e.as<And>(), lane);
    case ExprKind::Or:
      return compare(*this, e.as<Or>(), lane);
    case ExprKind::Not:
      return make_int(eval(e.as<Not>()->a, lane).i == 0 ? 1 : 0);
    case ExprKind::Select: {
      // Only the chosen arm is evaluated: a select may guard an out-of-bounds load.
      const auto* op = e.as<Select>();
      return eval(eval(op->condition, lane).i != 0 ? op->true_value : op->false_value, lane);
    }
    case ExprKind::Cast:
      return eval_cast(e.as<Cast>(), lane);
    case ExprKind::Load:
      return eval_load(e.as<Load>(), lane);
    case ExprKind::Ramp: {
      const auto* op = e.as<Ramp>();
      Scalar base = eval(op->base, 0);
      Scalar stride = eval(op->stride, 0);
      if (e.type().is_float()) {
        return make_float(round_float(e.type(), base.f + round_float(e.type(), lane * stride.f)));
      }
      return make_int(wrap_int(e.type(), base.i + lane * stride.i));
    }
    case ExprKind::Broadcast:
      return eval(e.as<Broadcast>()->value, 0);
    case ExprKind::Call:
      return eval_call(e.as<Call>(), lane);
    case ExprKind::Reduce:
      TT_CHECK(false) << "eval: Reduce must be lowered before evaluation: " << to_string(e);
  }
  return make_int(0);
}

Scalar Interpreter::read(const BufferSlot& b, int64_t idx) {
  auto load = [&](auto v) {
    std::memcpy(&v, b.data + idx * static_cast<int64_t>(sizeof(v)), sizeof(v));
    return v;
  };
  switch (b.elem) {
    case ElemKind::F32:
      return make_float(load(float{}));
    case ElemKind::F64:
      return make_float(load(double{}));
    case ElemKind::I8:
      return make_int(load(int8_t{}));
    case ElemKind::I16:
      return make_int(load(int16_t{}));
    case ElemKind::I32:
      return make_int(load(int32_t{}));
    case ElemKind::I64:
      return make_int(load(int64_t{}));
    case ElemKind::U8:
      return make_int(load(uint8_t{}));
    case ElemKind::U16:
      return make_int(load(uint16_t{}));
    case ElemKind::U32:
      return make_int(load(uint32_t{}));
    case ElemKind::U64:
      return make_int(static_cast<int64_t>(load(uint64_t{})));
    case ElemKind::Bool:
      return make_int(load(uint8_t{}) != 0 ? 1 : 0);
  }
  return make_int(0);
}

}  // namespace tensortune::ir::eval_detail

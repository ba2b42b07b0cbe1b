// SPDX-License-Identifier: Apache-2.0
// Expressions -> CUDA C text, fully parenthesised. Vector expressions are printed one lane at a
// time (the lane is a C expression, the counter of a scalarised store); integer Div/Mod are
// plain / and % only where both operands are provably non-negative, floor helpers elsewhere.
#include "codegen/cuda/internal.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>

namespace tensortune::codegen::cuda {
namespace {

std::string parenthesise_negative(std::string text) {
  return !text.empty() && text[0] == '-' ? "(" + text + ")" : text;
}

std::string int_literal(ir::DataType t, int64_t v) {
  if (t.is_bool()) {
    return v != 0 ? "true" : "false";
  }
  if (t.is_uint()) {
    auto u = static_cast<uint64_t>(v);
    return std::to_string(u) + (t.bits() == 64 ? "ull" : t.bits() == 32 ? "u" : "");
  }
  if (t.bits() == 64) {
    if (v == std::numeric_limits<int64_t>::min()) {
      return "(-9223372036854775807LL - 1)";
    }
    return parenthesise_negative(std::to_string(v) + "LL");
  }
  if (v == std::numeric_limits<int32_t>::min()) {
    return "(-2147483647 - 1)";
  }
  return parenthesise_negative(std::to_string(v));
}

/// Exact text of a float32/float64 constant: %.9g / %.17g round-trip; inf and NaN by bits.
std::string float_literal(ir::DataType t, double v) {
  bool f32 = t.bits() == 32;
  if (std::isnan(v)) {
    return f32 ? "__int_as_float(0x7fc00000)" : "__longlong_as_double(0x7ff8000000000000LL)";
  }
  if (std::isinf(v)) {
    if (f32) {
      return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
    }
    return v > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                 : "__longlong_as_double(-4503599627370496LL)";
  }
  char buf[64];
  if (f32) {
    std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(static_cast<float>(v)));
  } else {
    std::snprintf(buf, sizeof(buf), "%.17g", v);
  }
  std::string text = buf;
  if (text.find_first_of(".e") == std::string::npos) {
    text += ".0";
  }
  return parenthesise_negative(text + (f32 ? "f" : ""));
}

const char* binary_operator(ir::ExprKind kind) {
  switch (kind) {
    case ir::ExprKind::Add:
      return " + ";
    case ir::ExprKind::Sub:
      return " - ";
    case ir::ExprKind::Mul:
      return " * ";
    case ir::ExprKind::Div:
      return " / ";
    case ir::ExprKind::Mod:
      return " % ";
    case ir::ExprKind::Eq:
      return " == ";
    case ir::ExprKind::Ne:
      return " != ";
    case ir::ExprKind::Lt:
      return " < ";
    case ir::ExprKind::Le:
      return " <= ";
    case ir::ExprKind::Gt:
      return " > ";
    case ir::ExprKind::Ge:
      return " >= ";
    case ir::ExprKind::And:
      return " && ";
    case ir::ExprKind::Or:
      return " || ";
    default:
      break;
  }
  TT_CHECK(false) << "cuda codegen: not a binary operator";
  return "";
}

/// The two operands of a binary or comparison node.
std::pair<ir::Expr, ir::Expr> operands(const ir::Expr& e) {
  switch (e.kind()) {
    case ir::ExprKind::Add:
      return {e.as<ir::Add>()->a, e.as<ir::Add>()->b};
    case ir::ExprKind::Sub:
      return {e.as<ir::Sub>()->a, e.as<ir::Sub>()->b};
    case ir::ExprKind::Mul:
      return {e.as<ir::Mul>()->a, e.as<ir::Mul>()->b};
    case ir::ExprKind::Div:
      return {e.as<ir::Div>()->a, e.as<ir::Div>()->b};
    case ir::ExprKind::Mod:
      return {e.as<ir::Mod>()->a, e.as<ir::Mod>()->b};
    case ir::ExprKind::Min:
      return {e.as<ir::Min>()->a, e.as<ir::Min>()->b};
    case ir::ExprKind::Max:
      return {e.as<ir::Max>()->a, e.as<ir::Max>()->b};
    case ir::ExprKind::Eq:
      return {e.as<ir::Eq>()->a, e.as<ir::Eq>()->b};
    case ir::ExprKind::Ne:
      return {e.as<ir::Ne>()->a, e.as<ir::Ne>()->b};
    case ir::ExprKind::Lt:
      return {e.as<ir::Lt>()->a, e.as<ir::Lt>()->b};
    case ir::ExprKind::Le:
      return {e.as<ir::Le>()->a, e.as<ir::Le>()->b};
    case ir::ExprKind::Gt:
      return {e.as<ir::Gt>()->a, e.as<ir::Gt>()->b};
    case ir::ExprKind::Ge:
      return {e.as<ir::Ge>()->a, e.as<ir::Ge>()->b};
    case ir::ExprKind::And:
      return {e.as<ir::And>()->a, e.as<ir::And>()->b};
    case ir::ExprKind::Or:
      return {e.as<ir::Or>()->a, e.as<ir::Or>()->b};
    default:
      break;
  }
  TT_CHECK(false) << "cuda codegen: not a binary node";
  return {};
}

}  // namespace

std::string KernelPrinter::expr(const ir::Expr& e, const std::string& lane) {
  TT_CHECK(e.defined()) << "cuda codegen: undefined expression in '" << ctx_.kernel_name << "'";
  switch (e.kind()) {
    case ir::ExprKind::IntImm:
    case ir::ExprKind::FloatImm:
      return constant(e);
    case ir::ExprKind::Var:
      return var_name(e.as<ir::VarNode>());
    case ir::ExprKind::Add:
    case ir::ExprKind::Sub:
    case ir::ExprKind::Mul:
    case ir::ExprKind::Min:
    case ir::ExprKind::Max:
      return arith(e, lane);
    case ir::ExprKind::Div:
    case ir::ExprKind::Mod:
      return div_mod(e, lane);
    case ir::ExprKind::Eq:
    case ir::ExprKind::Ne:
    case ir::ExprKind::Lt:
    case ir::ExprKind::Le:
    case ir::ExprKind::Gt:
    case ir::ExprKind::Ge:
    case ir::ExprKind::And:
    case ir::ExprKind::Or:
      return compare(e, lane);
    case ir::ExprKind::Not:
      return "(!" + expr(e.as<ir::Not>()->a, lane) + ")";
    case ir::ExprKind::Select: {
      const auto* op = e.as<ir::Select>();
      // C's ?: evaluates only the chosen arm, as the IR's Select does.
      return "(" + expr(op->condition, lane) + " ? " + expr(op->true_value, lane) + " : " +
             expr(op->false_value, lane) + ")";
    }
    case ir::ExprKind::Cast:
      return cast(e.as<ir::Cast>(), lane);
    case ir::ExprKind::Load:
      return load(e.as<ir::Load>(), lane);
    case ir::ExprKind::Ramp: {
      const auto* op = e.as<ir::Ramp>();
      TT_CHECK(!lane.empty()) << "cuda codegen: a vector outside a vector store in '"
                              << ctx_.kernel_name << "'";
      if (lane == "0") {
        return expr(op->base, lane);
      }
      std::string step = ir::is_const_int(op->stride, 1)
                             ? lane
                             : "(" + expr(op->stride, lane) + " * " + lane + ")";
      return "(" + expr(op->base, lane) + " + " + step + ")";
    }
    case ir::ExprKind::Broadcast:
      TT_CHECK(!lane.empty()) << "cuda codegen: a vector outside a vector store in '"
                              << ctx_.kernel_name << "'";
      return expr(e.as<ir::Broadcast>()->value, lane);
    case ir::ExprKind::Call:
      return call(e.as<ir::Call>(), lane);
    case ir::ExprKind::Reduce:
      TT_CHECK(false) << "cuda codegen: a Reduce node survived lowering in '" << ctx_.kernel_name
                      << "'";
      return "";
  }
  return "";
}

std::string KernelPrinter::var_name(const ir::VarNode* v) {
  const std::string* name = names_.find(v);
  TT_CHECK(name != nullptr) << "cuda codegen: variable '" << v->name
                            << "' is used outside its scope in '" << ctx_.kernel_name << "'";
  return *name;
}

std::string KernelPrinter::buffer_name(const ir::Buffer& b) {
  auto it = ctx_.module_buffers->find(b.get());
  if (it != ctx_.module_buffers->end()) {
    used_.insert(it->second);
  }
  const std::string* name = names_.find(b.get());
  TT_CHECK(name != nullptr) << "cuda codegen: buffer '" << b.name()
                            << "' is neither a parameter, a scratch buffer nor allocated in '"
                            << ctx_.kernel_name << "'";
  return *name;
}

std::string KernelPrinter::constant(const ir::Expr& e) {
  if (const auto* i = e.as<ir::IntImm>()) {
    return int_literal(e.type(), i->value);
  }
  c_type(e.type(), "a constant");
  return float_literal(e.type(), e.as<ir::FloatImm>()->value);
}

std::string KernelPrinter::arith(const ir::Expr& e, const std::string& lane) {
  auto [a, b] = operands(e);
  std::string ta = expr(a, lane);
  std::string tb = expr(b, lane);
  if (e.kind() == ir::ExprKind::Min || e.kind() == ir::ExprKind::Max) {
    bool is_min = e.kind() == ir::ExprKind::Min;
    (is_min ? ctx_.helpers->min : ctx_.helpers->max) = true;
    std::string type = c_type(e.type().element_of(), "min/max");
    return std::string(is_min ? "tt_min<" : "tt_max<") + type + ">(" + ta + ", " + tb + ")";
  }
  return "(" + ta + binary_operator(e.kind()) + tb + ")";
}

bool KernelPrinter::non_negative(const ir::Expr& e) const {
  std::optional<ir::ConstBound> bound = ir::const_bound(e, ranges_);
  return bound.has_value() && bound->min >= 0;
}

std::string KernelPrinter::div_mod(const ir::Expr& e, const std::string& lane) {
  auto [a, b] = operands(e);
  bool is_div = e.kind() == ir::ExprKind::Div;
  std::string ta = expr(a, lane);
  std::string tb = expr(b, lane);
  ir::DataType t = e.type().element_of();
  if (t.is_float()) {
    if (is_div) {
      return "(" + ta + " / " + tb + ")";
    }
    ctx_.helpers->float_floormod = true;
    return "tt_floormod_fp(" + ta + ", " + tb + ")";
  }
  // Floor and truncation agree when both operands are non-negative (and on unsigned types).
  std::optional<ir::ConstBound> divisor = ir::const_bound(b, ranges_);
  bool plain = t.is_uint() || (non_negative(a) && divisor.has_value() && divisor->min > 0);
  if (plain) {
    return "(" + ta + binary_operator(e.kind()) + tb + ")";
  }
  (is_div ? ctx_.helpers->floordiv : ctx_.helpers->floormod) = true;
  return std::string(is_div ? "tt_floordiv<" : "tt_floormod<") + c_type(t, "div/mod") + ">(" + ta +
         ", " + tb + ")";
}

std::string KernelPrinter::compare(const ir::Expr& e, const std::string& lane) {
  auto [a, b] = operands(e);
  return "(" + expr(a, lane) + binary_operator(e.kind()) + expr(b, lane) + ")";
}

std::string KernelPrinter::load(const ir::Load* op, const std::string& lane) {
  TT_CHECK(op->indices.size() == 1) << "cuda codegen: load of '" << op->buffer.name()
                                    << "' is not flattened (lower the function fully first)";
  if (std::string lane_of_vector = vector_load_lane(op, lane); !lane_of_vector.empty()) {
    return lane_of_vector;  // read as float2/float4 before the store
  }
  std::string access = buffer_name(op->buffer) + "[" + expr(op->indices[0], lane) + "]";
  if (!op->predicate.defined()) {
    return access;
  }
  std::string type = c_type(op->type.element_of(), "buffer '" + op->buffer.name() + "'");
  return "(" + expr(op->predicate, lane) + " ? " + access + " : ((" + type + ")0))";
}

std::string KernelPrinter::cast(const ir::Cast* op, const std::string& lane) {
  ir::DataType to = op->type.element_of();
  std::string value = expr(op->value, lane);
  if (to == op->value.type().element_of()) {
    return value;
  }
  if (to.is_bool()) {
    return "(" + value + " != 0)";
  }
  return "((" + c_type(to, "a cast") + ")" + value + ")";
}

std::string KernelPrinter::call(const ir::Call* op, const std::string& lane) {
  ir::DataType t = op->type.element_of();
  std::string x = expr(op->args.at(0), lane);
  if (op->op == ir::Intrinsic::Abs && !t.is_float()) {
    if (t.is_uint()) {
      return x;
    }
    ctx_.helpers->abs = true;
    return "tt_abs<" + c_type(t, "abs") + ">(" + x + ")";
  }
  TT_USER_CHECK(t.is_float()) << "cuda codegen: " << ir::intrinsic_name(op->op)
                              << " of a non-float type " << t.to_string() << " in '"
                              << ctx_.kernel_name << "'";
  c_type(t, ir::intrinsic_name(op->op));
  const char* suffix = t.bits() == 32 ? "f" : "";
  std::string name;
  switch (op->op) {
    case ir::Intrinsic::Exp:
    case ir::Intrinsic::Log:
    case ir::Intrinsic::Sqrt:
    case ir::Intrinsic::Tanh:
    case ir::Intrinsic::Erf:
    case ir::Intrinsic::Floor:
    case ir::Intrinsic::Ceil:
      name = ir::intrinsic_name(op->op);
      break;
    case ir::Intrinsic::Abs:
      name = "fabs";
      break;
    case ir::Intrinsic::Pow:
      return std::string("pow") + suffix + "(" + x + ", " + expr(op->args.at(1), lane) + ")";
  }
  return name + suffix + "(" + x + ")";
}

}  // namespace tensortune::codegen::cuda

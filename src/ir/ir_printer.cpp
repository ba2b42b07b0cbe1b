// SPDX-License-Identifier: Apache-2.0
// The canonical text printer. The grammar is documented in ir_printer.h; names come from a
// per-root table so that the text never depends on pointers.
#include "tensortune/ir/ir_printer.h"

#include "ir_printer_internal.h"

#include <array>
#include <charconv>
#include <cmath>
#include <ostream>

namespace tensortune::ir {
namespace printer_detail {
namespace {

std::string format_int(DataType t, int64_t v) {
  if (t.is_bool()) {
    return v != 0 ? "true" : "false";
  }
  if (t == DataType::int32()) {
    return std::to_string(v);
  }
  return t.to_string() + "(" + std::to_string(v) + ")";
}

std::string format_float(DataType t, double v) {
  std::array<char, 64> buf{};
  char* end = buf.data() + buf.size();
  if (t == DataType::float32() && std::isfinite(v)) {
    auto r = std::to_chars(buf.data(), end, static_cast<float>(v));
    return std::string(buf.data(), r.ptr) + "f";
  }
  std::string body;
  if (std::isnan(v)) {
    body = "nan";
  } else if (std::isinf(v)) {
    body = v < 0 ? "-inf" : "inf";
  } else {
    auto r = std::to_chars(buf.data(), end, v);
    body = std::string(buf.data(), r.ptr);
  }
  return t.to_string() + "(" + body + ")";
}

/// Kinds whose printed form is wrapped in one pair of parentheses: arithmetic (Min and Max
/// aside), comparisons and logic, and predicated loads.
bool self_parenthesised(const Expr& e) {
  ExprKind k = e.kind();
  if ((k >= ExprKind::Add && k <= ExprKind::Mod) || (k >= ExprKind::Eq && k <= ExprKind::Or)) {
    return true;
  }
  return k == ExprKind::Load && e.as<Load>()->predicate.defined();
}

}  // namespace

const std::string& Printer::unique_name(const void* key,
                                        const std::string& hint,
                                        const char* fallback) {
  auto it = names_.find(key);
  if (it != names_.end()) {
    return it->second;
  }
  std::string base = hint.empty() ? std::string(fallback) : hint;
  std::string candidate = base;
  for (int suffix = 1; used_.count(candidate) != 0; ++suffix) {
    candidate = base + "." + std::to_string(suffix);
  }
  used_.insert(candidate);
  return names_.emplace(key, candidate).first->second;
}

void Printer::binary(const Expr& a, const char* op, const Expr& b) {
  os_ << "(";
  print(a);
  os_ << op;
  print(b);
  os_ << ")";
}

void Printer::wrapped(const std::string& fn,
                      const std::vector<Expr>& args,
                      const std::string& close) {
  os_ << fn << "(";
  for (size_t i = 0; i < args.size(); ++i) {
    os_ << (i == 0 ? "" : ", ");
    print(args[i]);
  }
  os_ << close;
}

void Printer::indices(const std::vector<Expr>& idx) {
  os_ << "[";
  for (size_t i = 0; i < idx.size(); ++i) {
    os_ << (i == 0 ? "" : ", ");
    print(idx[i]);
  }
  os_ << "]";
}

void Printer::parenthesised(const Expr& e) {
  if (self_parenthesised(e)) {
    print(e);
    return;
  }
  os_ << "(";
  print(e);
  os_ << ")";
}

void Printer::shape(const std::vector<int64_t>& dims) {
  os_ << "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    os_ << (i == 0 ? "" : ", ") << dims[i];
  }
  os_ << "]";
}

void Printer::print_load(const Load* op) {
  if (op->predicate.defined()) {
    os_ << "(";
  }
  os_ << name(op->buffer);
  indices(op->indices);
  if (op->predicate.defined()) {
    os_ << " if ";
    parenthesised(op->predicate);
    os_ << ")";
  }
}

void Printer::print_reduce(const Reduce* op) {
  // Axes are named before the source so that they claim their names at the binding site.
  std::vector<const std::string*> axis_names;
  for (const IterVar& iv : op->axes) {
    axis_names.push_back(&name(iv.var));
  }
  os_ << reduce_kind_name(op->reducer) << "(";
  print(op->source);
  os_ << ", axes=[";
  for (size_t i = 0; i < op->axes.size(); ++i) {
    os_ << (i == 0 ? "" : ", ") << *axis_names[i] << ":" << op->axes[i].extent;
  }
  os_ << "])";
}

void Printer::print(const Expr& e) {
  if (!e.defined()) {
    os_ << "<undefined>";
    return;
  }
  switch (e.kind()) {
    case ExprKind::IntImm:
      os_ << format_int(e.type(), e.as<IntImm>()->value);
      return;
    case ExprKind::FloatImm:
      os_ << format_float(e.type(), e.as<FloatImm>()->value);
      return;
    case ExprKind::Var:
      os_ << name(e.as<VarNode>());
      return;
    case ExprKind::Add:
      return infix<Add>(e, " + ");
    case ExprKind::Sub:
      return infix<Sub>(e, " - ");
    case ExprKind::Mul:
      return infix<Mul>(e, "*");
    case ExprKind::Div:
      return infix<Div>(e, "/");
    case ExprKind::Mod:
      return infix<Mod>(e, " % ");
    case ExprKind::Min:
      return wrapped("min", {e.as<Min>()->a, e.as<Min>()->b});
    case ExprKind::Max:
      return wrapped("max", {e.as<Max>()->a, e.as<Max>()->b});
    case ExprKind::Eq:
      return infix<Eq>(e, " == ");
    case ExprKind::Ne:
      return infix<Ne>(e, " != ");
    case ExprKind::Lt:
      return infix<Lt>(e, " < ");
    case ExprKind::Le:
      return infix<Le>(e, " <= ");
    case ExprKind::Gt:
      return infix<Gt>(e, " > ");
    case ExprKind::Ge:
      return infix<Ge>(e, " >= ");
    case ExprKind::And:
      return infix<And>(e, " && ");
    case ExprKind::Or:
      return infix<Or>(e, " || ");
    case ExprKind::Not:
      os_ << "!";
      return print(e.as<Not>()->a);
    case ExprKind::Select: {
      const auto* op = e.as<Select>();
      return wrapped("select", {op->condition, op->true_value, op->false_value});
    }
    case ExprKind::Cast:
      return wrapped(e.type().to_string(), {e.as<Cast>()->value});
    case ExprKind::Load:
      return print_load(e.as<Load>());
    case ExprKind::Ramp: {
      const auto* op = e.as<Ramp>();
      return wrapped("ramp", {op->base, op->stride}, ", " + std::to_string(op->lanes) + ")");
    }
    case ExprKind::Broadcast: {
      const auto* op = e.as<Broadcast>();
      return wrapped("x" + std::to_string(op->lanes), {op->value});
    }
    case ExprKind::Call:
      return wrapped(intrinsic_name(e.as<Call>()->op), e.as<Call>()->args);
    case ExprKind::Reduce:
      return print_reduce(e.as<Reduce>());
  }
}

}  // namespace printer_detail

using printer_detail::Printer;

std::string to_string(const Expr& e) {
  Printer p;
  p.print(e);
  return p.str();
}

std::string to_string(const Stmt& s) {
  Printer p;
  p.print(s);
  return p.str();
}

std::string to_string(const LoweredFunc& f) {
  Printer p;
  p.print_func(f);
  return p.str();
}

std::ostream& operator<<(std::ostream& os, const Expr& e) {
  return os << to_string(e);
}

std::ostream& operator<<(std::ostream& os, const Stmt& s) {
  return os << to_string(s);
}

}  // namespace tensortune::ir

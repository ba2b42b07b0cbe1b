// SPDX-License-Identifier: Apache-2.0
// The interpreter's statement half and its entry points. Loops of every kind run serially; a vector
// store evaluates all its lanes before writing any (the IR's vectors read before they write);
// Allocate gives fresh memory poisoned with NaN (floats) or 0xDE bytes (integers).
#include "tensortune/ir/eval.h"

#include "eval_internal.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/support/error.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace tensortune::ir {
namespace eval_detail {
namespace {

ElemKind elem_kind(const Buffer& b) {
  DataType t = b.dtype();
  TT_CHECK(t.is_scalar()) << "eval: buffer '" << b.name() << "' has vector element type "
                          << t.to_string();
  if (t.is_bool()) {
    return ElemKind::Bool;
  }
  if (t.code() == DataType::Code::Float && (t.bits() == 32 || t.bits() == 64)) {
    return t.bits() == 32 ? ElemKind::F32 : ElemKind::F64;
  }
  bool is_signed = t.is_int();
  TT_CHECK((is_signed || t.is_uint()) &&
           (t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64))
      << "eval: buffer '" << b.name() << "' has unsupported element type " << t.to_string();
  switch (t.bits()) {
    case 8:
      return is_signed ? ElemKind::I8 : ElemKind::U8;
    case 16:
      return is_signed ? ElemKind::I16 : ElemKind::U16;
    case 32:
      return is_signed ? ElemKind::I32 : ElemKind::U32;
    default:
      return is_signed ? ElemKind::I64 : ElemKind::U64;
  }
}

}  // namespace

void Interpreter::bind_buffer(const Buffer& b, void* data) {
  TT_CHECK(data != nullptr) << "eval: no storage for buffer '" << b.name() << "'";
  buffers_.push_back(
      BufferSlot{b.get(), static_cast<unsigned char*>(data), b.num_elements(), elem_kind(b)});
}

Scalar Interpreter::lookup(const VarNode* v, int lane) const {
  for (size_t i = vars_.size(); i-- > 0;) {
    if (vars_[i].var == v) {
      return values_[vars_[i].offset + (vars_[i].lanes == 1 ? 0 : static_cast<size_t>(lane))];
    }
  }
  if (free_vars_ != nullptr) {
    auto it = free_vars_->find(v);
    if (it != free_vars_->end()) {
      return v->type.is_float() ? make_float(static_cast<double>(it->second))
                                : make_int(wrap_int(v->type, it->second));
    }
  }
  TT_CHECK(false) << "eval: variable '" << v->name << "' is used outside its scope";
  return make_int(0);
}

const BufferSlot& Interpreter::find_buffer(const BufferNode* b) const {
  for (size_t i = buffers_.size(); i-- > 0;) {
    if (buffers_[i].node == b) {
      return buffers_[i];
    }
  }
  TT_CHECK(false) << "eval: buffer '" << b->name << "' is neither a parameter nor allocated";
  return buffers_.front();
}

int64_t Interpreter::flat_index(const BufferSlot& b,
                                const std::vector<Expr>& indices,
                                int lane,
                                const char* access) {
  if (indices.size() == 1) {
    int64_t i = eval(indices[0], lane).i;
    TT_CHECK(i >= 0 && i < b.size)
        << "eval: " << access << " '" << b.node->name << "' out of bounds: index " << i
        << " (valid [0, " << b.size << "))";
    return i;
  }
  const std::vector<int64_t>& shape = b.node->shape;
  TT_CHECK(indices.size() == shape.size())
      << "eval: " << access << " '" << b.node->name << "' with " << indices.size()
      << " indices, but the buffer has rank " << shape.size();
  int64_t flat = 0;
  bool in_bounds = true;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t i = eval(indices[d], lane).i;
    in_bounds = in_bounds && i >= 0 && i < shape[d];
    flat = flat * shape[d] + i;
  }
  if (!in_bounds) {
    std::ostringstream msg;
    for (size_t d = 0; d < shape.size(); ++d) {
      msg << (d == 0 ? "[" : ", ") << eval(indices[d], lane).i;
    }
    msg << "] (shape";
    for (size_t d = 0; d < shape.size(); ++d) {
      msg << (d == 0 ? " [" : ", ") << shape[d];
    }
    TT_CHECK(false) << "eval: " << access << " '" << b.node->name << "' out of bounds: index "
                    << msg.str() << "])";
  }
  return flat;
}

void Interpreter::write(const BufferSlot& b, int64_t idx, Scalar v) {
  auto store = [&](auto x) {
    std::memcpy(b.data + idx * static_cast<int64_t>(sizeof(x)), &x, sizeof(x));
  };
  switch (b.elem) {
    case ElemKind::F32:
      return store(static_cast<float>(v.f));
    case ElemKind::F64:
      return store(v.f);
    case ElemKind::I8:
      return store(static_cast<int8_t>(v.i));
    case ElemKind::I16:
      return store(static_cast<int16_t>(v.i));
    case ElemKind::I32:
      return store(static_cast<int32_t>(v.i));
    case ElemKind::I64:
      return store(v.i);
    case ElemKind::U8:
      return store(static_cast<uint8_t>(v.i));
    case ElemKind::U16:
      return store(static_cast<uint16_t>(v.i));
    case ElemKind::U32:
      return store(static_cast<uint32_t>(v.i));
    case ElemKind::U64:
      return store(static_cast<uint64_t>(v.i));
    case ElemKind::Bool:
      return store(static_cast<uint8_t>(v.i != 0 ? 1 : 0));
  }
}

void Interpreter::exec_for(const For* op) {
  int64_t min = eval(op->min, 0).i;
  int64_t end = min + eval(op->extent, 0).i;
  size_t offset = values_.size();
  values_.push_back(make_int(min));
  vars_.push_back(VarSlot{op->var.get(), offset, 1});
  for (int64_t v = min; v < end; ++v) {
    values_[offset].i = v;
    exec(op->body);
  }
  vars_.pop_back();
  values_.pop_back();
}

void Interpreter::exec_store(const Store* op) {
  const BufferSlot b = find_buffer(op->buffer.get());
  int lanes = op->value.type().lanes();
  if (lanes == 1) {
    if (op->predicate.defined() && eval(op->predicate, 0).i == 0) {
      return;
    }
    Scalar v = eval(op->value, 0);
    write(b, flat_index(b, op->indices, 0, "store to"), v);
    return;
  }
  // All lanes are read before any is written (a vector store may overwrite its own source).
  std::vector<std::pair<int64_t, Scalar>>& pending = pending_;
  pending.clear();
  for (int lane = 0; lane < lanes; ++lane) {
    if (op->predicate.defined() && eval(op->predicate, lane).i == 0) {
      continue;
    }
    Scalar v = eval(op->value, lane);
    pending.emplace_back(flat_index(b, op->indices, lane, "store to"), v);
  }
  for (const auto& [idx, v] : pending) {
    write(b, idx, v);
  }
}

void Interpreter::exec_allocate(const Allocate* op) {
  const Buffer& buf = op->buffer;
  int64_t n = buf.num_elements();
  TT_CHECK(n >= 0) << "eval: buffer '" << buf.name() << "' has a negative size";
  size_t bytes = static_cast<size_t>(n) * static_cast<size_t>(buf.dtype().bytes());
  allocations_.emplace_back(bytes == 0 ? 1 : bytes);
  BufferSlot slot{buf.get(), allocations_.back().data(), n, elem_kind(buf)};
  Scalar poison = buf.dtype().is_float() ? make_float(std::numeric_limits<double>::quiet_NaN())
                                         : make_int(static_cast<int64_t>(0xDEDEDEDEDEDEDEDEULL));
  for (int64_t i = 0; i < n; ++i) {
    write(slot, i, poison);
  }
  buffers_.push_back(slot);
  exec(op->body);
  buffers_.pop_back();
  allocations_.pop_back();
}

void Interpreter::exec_let(const LetStmt* op) {
  int lanes = op->value.type().lanes();
  std::vector<Scalar> lane_values(static_cast<size_t>(lanes));
  for (int lane = 0; lane < lanes; ++lane) {
    lane_values[static_cast<size_t>(lane)] = eval(op->value, lane);
  }
  size_t offset = values_.size();
  values_.insert(values_.end(), lane_values.begin(), lane_values.end());
  vars_.push_back(VarSlot{op->var.get(), offset, lanes});
  exec(op->body);
  vars_.pop_back();
  values_.resize(offset);
}

void Interpreter::exec(const Stmt& s) {
  switch (s.kind()) {
    case StmtKind::For:
      return exec_for(s.as<For>());
    case StmtKind::Store:
      return exec_store(s.as<Store>());
    case StmtKind::Allocate:
      return exec_allocate(s.as<Allocate>());
    case StmtKind::IfThenElse: {
      const auto* op = s.as<IfThenElse>();
      TT_CHECK(op->condition.type().is_scalar()) << "eval: vector if condition";
      if (eval(op->condition, 0).i != 0) {
        return exec(op->then_case);
      }
      if (op->else_case.defined()) {
        exec(op->else_case);
      }
      return;
    }
    case StmtKind::Seq:
      for (const Stmt& child : s.as<Seq>()->stmts) {
        exec(child);
      }
      return;
    case StmtKind::Evaluate: {
      const Expr& value = s.as<Evaluate>()->value;
      for (int lane = 0; lane < value.type().lanes(); ++lane) {
        eval(value, lane);
      }
      return;
    }
    case StmtKind::LetStmt:
      return exec_let(s.as<LetStmt>());
  }
}

}  // namespace eval_detail

void eval(const LoweredFunc& f, const std::vector<void*>& args) {
  TT_CHECK(args.size() == f.params.size()) << "eval: function '" << f.name << "' takes "
                                           << f.params.size() << " buffers, got " << args.size();
  eval_detail::Interpreter interpreter;
  for (size_t i = 0; i < args.size(); ++i) {
    interpreter.bind_buffer(f.params[i], args[i]);
  }
  // The prepacked buffers live for this call: filled by the prepare body, read by the body.
  std::vector<std::vector<uint64_t>> prepacked;
  for (const Buffer& b : f.prepacked) {
    size_t bytes = static_cast<size_t>(b.num_elements() * b.dtype().bytes());
    prepacked.emplace_back((bytes + 7) / 8, 0xDEDEDEDEDEDEDEDEULL);
    interpreter.bind_buffer(b, prepacked.back().data());
  }
  if (f.prepare.defined()) {
    interpreter.exec(f.prepare);
  }
  if (f.body.defined()) {
    interpreter.exec(f.body);
  }
}

int64_t eval_int(const Expr& e, const std::unordered_map<const VarNode*, int64_t>& vars) {
  TT_CHECK(e.defined() && e.type().is_scalar() && !e.type().is_float())
      << "eval_int: not a scalar integer expression: " << to_string(e);
  eval_detail::Interpreter interpreter(&vars);
  return interpreter.eval(e, 0).i;
}

double eval_float(const Expr& e, const std::unordered_map<const VarNode*, int64_t>& vars) {
  TT_CHECK(e.defined() && e.type().is_scalar())
      << "eval_float: not a scalar expression: " << to_string(e);
  eval_detail::Interpreter interpreter(&vars);
  eval_detail::Scalar v = interpreter.eval(e, 0);
  return e.type().is_float() ? v.f : static_cast<double>(v.i);
}

}  // namespace tensortune::ir

// SPDX-License-Identifier: Apache-2.0
// Checked factories of the statement nodes.
#include "tensortune/ir/stmt.h"

#include "tensortune/support/error.h"

namespace tensortune::ir {

StmtNode::~StmtNode() = default;

const char* for_kind_name(ForKind kind) {
  switch (kind) {
    case ForKind::Serial:
      return "serial";
    case ForKind::Parallel:
      return "parallel";
    case ForKind::Vectorized:
      return "vectorized";
    case ForKind::Unrolled:
      return "unrolled";
    case ForKind::BlockX:
      return "blockIdx.x";
    case ForKind::BlockY:
      return "blockIdx.y";
    case ForKind::BlockZ:
      return "blockIdx.z";
    case ForKind::ThreadX:
      return "threadIdx.x";
    case ForKind::ThreadY:
      return "threadIdx.y";
    case ForKind::ThreadZ:
      return "threadIdx.z";
  }
  return "?";
}

bool is_gpu_kind(ForKind kind) {
  switch (kind) {
    case ForKind::Serial:
    case ForKind::Parallel:
    case ForKind::Vectorized:
    case ForKind::Unrolled:
      return false;
    case ForKind::BlockX:
    case ForKind::BlockY:
    case ForKind::BlockZ:
    case ForKind::ThreadX:
    case ForKind::ThreadY:
    case ForKind::ThreadZ:
      return true;
  }
  return false;
}

bool is_thread_kind(ForKind kind) {
  return kind == ForKind::ThreadX || kind == ForKind::ThreadY || kind == ForKind::ThreadZ;
}

namespace {

void check_index(const Expr& e, const char* what) {
  TT_CHECK(e.defined() && e.type() == DataType::index()) << what << " must be a scalar int32";
}

}  // namespace

Stmt For::make(
    Var var, Expr min, Expr extent, ForKind for_kind, Stmt body, int64_t auto_unroll_max_step) {
  TT_CHECK(var.defined() && var.type() == DataType::index()) << "loop variable must be int32";
  check_index(min, "loop min");
  check_index(extent, "loop extent");
  TT_CHECK(body.defined()) << "loop '" << var.name() << "' without a body";
  TT_CHECK(auto_unroll_max_step >= 0) << "negative auto_unroll_max_step";
  return Stmt(std::make_shared<const For>(std::move(var), std::move(min), std::move(extent),
                                          for_kind, auto_unroll_max_step, std::move(body)));
}

Stmt Store::make(Buffer buffer, Expr value, std::vector<Expr> indices, Expr predicate) {
  TT_CHECK(buffer.defined() && value.defined()) << "store with an undefined buffer or value";
  TT_CHECK(!indices.empty()) << "store to '" << buffer.name() << "' without indices";
  int lanes = value.type().lanes();
  TT_CHECK(value.type().element_of() == buffer.dtype())
      << "store of " << value.type().to_string() << " into " << buffer.dtype().to_string()
      << " buffer '" << buffer.name() << "'";
  for (const Expr& i : indices) {
    TT_CHECK(i.defined() && i.type().is_int() && i.type().bits() == 32 &&
             (i.type().lanes() == 1 || i.type().lanes() == lanes))
        << "store to '" << buffer.name() << "' with a bad index type";
  }
  if (predicate.defined()) {
    TT_CHECK(predicate.type() == DataType::boolean(lanes))
        << "store to '" << buffer.name() << "' with a predicate of type "
        << predicate.type().to_string();
  }
  return Stmt(std::make_shared<const Store>(std::move(buffer), std::move(value), std::move(indices),
                                            std::move(predicate)));
}

Stmt Allocate::make(Buffer buffer, Stmt body) {
  TT_CHECK(buffer.defined() && body.defined()) << "allocate with an undefined buffer or body";
  return Stmt(std::make_shared<const Allocate>(std::move(buffer), std::move(body)));
}

Stmt IfThenElse::make(Expr condition, Stmt then_case, Stmt else_case) {
  TT_CHECK(condition.defined() && condition.type() == DataType::boolean())
      << "if condition must be a scalar bool";
  TT_CHECK(then_case.defined()) << "if without a then case";
  return Stmt(std::make_shared<const IfThenElse>(std::move(condition), std::move(then_case),
                                                 std::move(else_case)));
}

Stmt Seq::make(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (!s.defined()) {
      continue;
    }
    if (const auto* seq = s.as<Seq>()) {
      flat.insert(flat.end(), seq->stmts.begin(), seq->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  TT_CHECK(!flat.empty()) << "empty statement sequence";
  if (flat.size() == 1) {
    return flat[0];
  }
  return Stmt(std::make_shared<const Seq>(std::move(flat)));
}

Stmt Evaluate::make(Expr value) {
  TT_CHECK(value.defined()) << "evaluate of an undefined expression";
  return Stmt(std::make_shared<const Evaluate>(std::move(value)));
}

Stmt LetStmt::make(Var var, Expr value, Stmt body) {
  TT_CHECK(var.defined() && value.defined() && body.defined()) << "incomplete let";
  TT_CHECK(var.type() == value.type())
      << "let '" << var.name() << "' of type " << var.type().to_string() << " bound to "
      << value.type().to_string();
  return Stmt(std::make_shared<const LetStmt>(std::move(var), std::move(value), std::move(body)));
}

}  // namespace tensortune::ir

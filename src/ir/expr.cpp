// SPDX-License-Identifier: Apache-2.0
// Checked factories of the expression nodes. Every node is built here, so an ill-typed node
// cannot exist; a violation is a bug in the caller (InternalError). ops.h does the user-facing
// type promotion before reaching these.
#include "tensortune/ir/expr.h"

#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <limits>

namespace tensortune::ir {

ExprNode::~ExprNode() = default;

Expr::Expr(int value) : Expr(IntImm::make(DataType::int32(), value)) {}
Expr::Expr(float value) : Expr(FloatImm::make(DataType::float32(), value)) {}

Expr IntImm::make(DataType t, int64_t value) {
  TT_CHECK(t.is_scalar() && (t.is_int() || t.is_uint())) << "IntImm of type " << t.to_string();
  if (t.is_bool()) {
    value = value != 0 ? 1 : 0;
  }
  return Expr(std::make_shared<const IntImm>(t, value));
}

Expr FloatImm::make(DataType t, double value) {
  TT_CHECK(t.is_scalar() && t.is_float()) << "FloatImm of type " << t.to_string();
  if (t.bits() == 32 && t.code() == DataType::Code::Float) {
    value = static_cast<double>(static_cast<float>(value));
  }
  return Expr(std::make_shared<const FloatImm>(t, value));
}

Var::Var(std::string name, DataType t) : Expr(std::make_shared<const VarNode>(t, std::move(name))) {}

Var Var::from(const Expr& e) {
  TT_CHECK(e.as<VarNode>() != nullptr) << "Var::from on a non-variable expression";
  return Var(e);
}

namespace {

void check_same_type(const char* what, const Expr& a, const Expr& b) {
  TT_CHECK(a.defined() && b.defined()) << what << " with an undefined operand";
  TT_CHECK(a.type() == b.type()) << what << " of mismatched types " << a.type().to_string()
                                  << " and " << b.type().to_string();
}

const char* kind_word(ExprKind k) {
  switch (k) {
    case ExprKind::Add:
      return "add";
    case ExprKind::Sub:
      return "sub";
    case ExprKind::Mul:
      return "mul";
    case ExprKind::Div:
      return "div";
    case ExprKind::Mod:
      return "mod";
    case ExprKind::Min:
      return "min";
    case ExprKind::Max:
      return "max";
    case ExprKind::And:
      return "and";
    case ExprKind::Or:
      return "or";
    default:
      return "comparison";
  }
}

}  // namespace

template <ExprKind K>
Expr BinaryNode<K>::make(Expr a, Expr b) {
  check_same_type(kind_word(K), a, b);
  TT_CHECK(!a.type().is_bool()) << kind_word(K) << " of booleans";
  DataType t = a.type();
  return Expr(std::make_shared<const BinaryNode<K>>(t, std::move(a), std::move(b)));
}

template <ExprKind K>
Expr CmpNode<K>::make(Expr a, Expr b) {
  check_same_type(kind_word(K), a, b);
  if (K == ExprKind::And || K == ExprKind::Or) {
    TT_CHECK(a.type().is_bool()) << kind_word(K) << " of non-boolean " << a.type().to_string();
  }
  DataType t = DataType::boolean(a.type().lanes());
  return Expr(std::make_shared<const CmpNode<K>>(t, std::move(a), std::move(b)));
}

template struct BinaryNode<ExprKind::Add>;
template struct BinaryNode<ExprKind::Sub>;
template struct BinaryNode<ExprKind::Mul>;
template struct BinaryNode<ExprKind::Div>;
template struct BinaryNode<ExprKind::Mod>;
template struct BinaryNode<ExprKind::Min>;
template struct BinaryNode<ExprKind::Max>;
template struct CmpNode<ExprKind::Eq>;
template struct CmpNode<ExprKind::Ne>;
template struct CmpNode<ExprKind::Lt>;
template struct CmpNode<ExprKind::Le>;
template struct CmpNode<ExprKind::Gt>;
template struct CmpNode<ExprKind::Ge>;
template struct CmpNode<ExprKind::And>;
template struct CmpNode<ExprKind::Or>;

Expr Not::make(Expr a) {
  TT_CHECK(a.defined() && a.type().is_bool()) << "not of a non-boolean";
  DataType t = a.type();
  return Expr(std::make_shared<const Not>(t, std::move(a)));
}

Expr Select::make(Expr condition, Expr true_value, Expr false_value) {
  check_same_type("select", true_value, false_value);
  TT_CHECK(condition.defined() && condition.type().is_bool()) << "select on a non-boolean";
  TT_CHECK(condition.type().lanes() == 1 ||
           condition.type().lanes() == true_value.type().lanes())
      << "select condition lanes " << condition.type().lanes() << " vs value lanes "
      << true_value.type().lanes();
  DataType t = true_value.type();
  return Expr(std::make_shared<const Select>(t, std::move(condition), std::move(true_value),
                                             std::move(false_value)));
}

Expr Cast::make(DataType t, Expr value) {
  TT_CHECK(value.defined()) << "cast of an undefined expression";
  TT_CHECK(t.lanes() == value.type().lanes())
      << "cast from " << value.type().to_string() << " to " << t.to_string();
  return Expr(std::make_shared<const Cast>(t, std::move(value)));
}

Buffer::Buffer(std::string name, DataType dtype, std::vector<int64_t> shape, MemoryScope scope,
               int64_t pipeline_stages) {
  TT_CHECK(dtype.is_scalar()) << "buffer '" << name << "' of vector type";
  for (int64_t d : shape) {
    TT_CHECK(d > 0) << "buffer '" << name << "' with extent " << d;
  }
  auto node = std::make_shared<BufferNode>();
  node->name = std::move(name);
  node->dtype = dtype;
  node->shape = std::move(shape);
  node->scope = scope;
  node->pipeline_stages = pipeline_stages;
  node_ = std::move(node);
}

int64_t Buffer::num_elements() const {
  int64_t n = 1;
  for (int64_t d : node_->shape) {
    n *= d;
  }
  return n;
}

namespace {

int index_lanes(const char* what, const Buffer& buffer, const std::vector<Expr>& indices,
                const Expr& predicate) {
  TT_CHECK(buffer.defined()) << what << " of an undefined buffer";
  TT_CHECK(!indices.empty()) << what << " of '" << buffer.name() << "' without indices";
  int lanes = 1;
  for (const Expr& i : indices) {
    TT_CHECK(i.defined() && i.type().is_int() && i.type().bits() == 32)
        << what << " of '" << buffer.name() << "' with a non-int32 index";
    if (i.type().lanes() > 1) {
      TT_CHECK(lanes == 1 || lanes == i.type().lanes()) << what << " with mixed index lanes";
      lanes = i.type().lanes();
    }
  }
  if (predicate.defined()) {
    TT_CHECK(predicate.type().is_bool() && predicate.type().lanes() == lanes)
        << what << " of '" << buffer.name() << "' with a predicate of type "
        << predicate.type().to_string();
  }
  return lanes;
}

}  // namespace

Expr Load::make(Buffer buffer, std::vector<Expr> indices, Expr predicate) {
  int lanes = index_lanes("load", buffer, indices, predicate);
  DataType t = buffer.dtype().with_lanes(lanes);
  return Expr(std::make_shared<const Load>(t, std::move(buffer), std::move(indices),
                                           std::move(predicate)));
}

Expr Ramp::make(Expr base, Expr stride, int lanes) {
  check_same_type("ramp", base, stride);
  TT_CHECK(base.type().is_scalar() && base.type().is_int()) << "ramp of a non-integer base";
  TT_CHECK(lanes > 1) << "ramp with " << lanes << " lanes";
  DataType t = base.type().with_lanes(lanes);
  return Expr(std::make_shared<const Ramp>(t, std::move(base), std::move(stride), lanes));
}

Expr Broadcast::make(Expr value, int lanes) {
  TT_CHECK(value.defined() && value.type().is_scalar()) << "broadcast of a vector";
  TT_CHECK(lanes > 1) << "broadcast with " << lanes << " lanes";
  DataType t = value.type().with_lanes(lanes);
  return Expr(std::make_shared<const Broadcast>(t, std::move(value), lanes));
}

const char* intrinsic_name(Intrinsic op) {
  switch (op) {
    case Intrinsic::Exp:
      return "exp";
    case Intrinsic::Log:
      return "log";
    case Intrinsic::Sqrt:
      return "sqrt";
    case Intrinsic::Tanh:
      return "tanh";
    case Intrinsic::Erf:
      return "erf";
    case Intrinsic::Abs:
      return "abs";
    case Intrinsic::Pow:
      return "pow";
    case Intrinsic::Floor:
      return "floor";
    case Intrinsic::Ceil:
      return "ceil";
  }
  return "?";
}

Expr Call::make(Intrinsic op, std::vector<Expr> args) {
  size_t arity = op == Intrinsic::Pow ? 2 : 1;
  TT_CHECK(args.size() == arity) << intrinsic_name(op) << " takes " << arity << " arguments";
  for (const Expr& a : args) {
    check_same_type(intrinsic_name(op), args[0], a);
  }
  DataType t = args[0].type();
  TT_CHECK(t.is_float() || (op == Intrinsic::Abs && t.is_int()))
      << intrinsic_name(op) << " of " << t.to_string();
  return Expr(std::make_shared<const Call>(t, op, std::move(args)));
}

Expr Reduce::make(ReduceKind reducer, Expr source, std::vector<IterVar> axes) {
  TT_CHECK(source.defined() && source.type().is_scalar()) << "reduce of a non-scalar";
  TT_CHECK(!axes.empty()) << "reduce without axes";
  for (const IterVar& a : axes) {
    TT_CHECK(a.extent > 0 && a.kind == IterKind::Reduce) << "reduce axis '" << a.var.name() << "'";
  }
  DataType t = source.type();
  return Expr(std::make_shared<const Reduce>(t, reducer, std::move(source), std::move(axes)));
}

Expr reduce_identity(ReduceKind reducer, DataType t) {
  switch (reducer) {
    case ReduceKind::Sum:
      return make_const(t, int64_t{0});
    case ReduceKind::Prod:
      return make_const(t, int64_t{1});
    case ReduceKind::Maximum:
      return min_value(t);
    case ReduceKind::Minimum:
      return max_value(t);
  }
  return Expr();
}

Expr reduce_combine(ReduceKind reducer, Expr acc, Expr value) {
  switch (reducer) {
    case ReduceKind::Sum:
      return Add::make(std::move(acc), std::move(value));
    case ReduceKind::Prod:
      return Mul::make(std::move(acc), std::move(value));
    case ReduceKind::Maximum:
      return Max::make(std::move(acc), std::move(value));
    case ReduceKind::Minimum:
      return Min::make(std::move(acc), std::move(value));
  }
  return Expr();
}

const char* reduce_kind_name(ReduceKind reducer) {
  switch (reducer) {
    case ReduceKind::Sum:
      return "sum";
    case ReduceKind::Prod:
      return "prod";
    case ReduceKind::Maximum:
      return "max";
    case ReduceKind::Minimum:
      return "min";
  }
  return "?";
}

}  // namespace tensortune::ir

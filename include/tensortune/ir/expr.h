// SPDX-License-Identifier: Apache-2.0
// Scalar (and vector) expressions of the IR: immutable nodes behind a cheap handle, built only
// through checked factories. Variables and buffers are compared by identity, never by name.
#pragma once

#include "tensortune/ir/type.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tensortune::ir {

enum class ExprKind : uint8_t {
  IntImm, FloatImm, Var,
  Add, Sub, Mul, Div, Mod, Min, Max,
  Eq, Ne, Lt, Le, Gt, Ge, And, Or, Not,
  Select, Cast, Load, Ramp, Broadcast, Call, Reduce,
};

/// Base of all expression nodes: a kind tag and a type; nothing virtual but the destructor.
struct ExprNode {
  ExprKind kind;
  DataType type;
  ExprNode(ExprKind k, DataType t) : kind(k), type(t) {}
  ExprNode(const ExprNode&) = delete;
  ExprNode& operator=(const ExprNode&) = delete;
  virtual ~ExprNode();
};

/// Handle to an immutable expression node. Default-constructed handles are "undefined".
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  /// An int32 constant.
  Expr(int value);  // NOLINT(google-explicit-constructor)
  /// A float32 constant.
  Expr(float value);  // NOLINT(google-explicit-constructor)

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  ExprKind kind() const { return node_->kind; }
  DataType type() const { return node_->type; }
  /// The node as `T`, or nullptr when the kind differs (or the handle is undefined).
  template <class T>
  const T* as() const {
    if (node_ && node_->kind == T::kKind) {
      return static_cast<const T*>(node_.get());
    }
    return nullptr;
  }
  /// Pointer identity.
  bool same_as(const Expr& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

struct IntImm final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::IntImm;
  int64_t value;
  IntImm(DataType t, int64_t v) : ExprNode(kKind, t), value(v) {}
  /// An integer (or bool) constant; `t` must be a scalar Int/UInt type.
  static Expr make(DataType t, int64_t value);
};

struct FloatImm final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::FloatImm;
  double value;
  FloatImm(DataType t, double v) : ExprNode(kKind, t), value(v) {}
  /// A floating-point constant; `t` must be a scalar float type.
  static Expr make(DataType t, double value);
};

struct VarNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Var;
  std::string name;  // a hint for printing only
  VarNode(DataType t, std::string n) : ExprNode(kKind, t), name(std::move(n)) {}
};

/// A variable: identity is the node, the name is a printing hint.
class Var : public Expr {
 public:
  explicit Var(std::string name, DataType t = DataType::index());
  /// Views an Expr that holds a VarNode as a Var; InternalError otherwise.
  static Var from(const Expr& e);
  const VarNode* get() const { return static_cast<const VarNode*>(Expr::get()); }
  const std::string& name() const { return get()->name; }

 private:
  explicit Var(const Expr& e) : Expr(e) {}
};

/// Binary arithmetic nodes; both operands have the same type (checked).
template <ExprKind K>
struct BinaryNode final : ExprNode {
  static constexpr ExprKind kKind = K;
  Expr a, b;
  BinaryNode(DataType t, Expr x, Expr y) : ExprNode(K, t), a(std::move(x)), b(std::move(y)) {}
  static Expr make(Expr a, Expr b);
};
/// Integer Div and Mod are floor division and floor modulo (Python's // and %).
using Add = BinaryNode<ExprKind::Add>;
using Sub = BinaryNode<ExprKind::Sub>;
using Mul = BinaryNode<ExprKind::Mul>;
using Div = BinaryNode<ExprKind::Div>;
using Mod = BinaryNode<ExprKind::Mod>;
using Min = BinaryNode<ExprKind::Min>;
using Max = BinaryNode<ExprKind::Max>;

/// Comparisons and logical connectives; the result is boolean with the operands' lanes.
template <ExprKind K>
struct CmpNode final : ExprNode {
  static constexpr ExprKind kKind = K;
  Expr a, b;
  CmpNode(DataType t, Expr x, Expr y) : ExprNode(K, t), a(std::move(x)), b(std::move(y)) {}
  static Expr make(Expr a, Expr b);
};
using Eq = CmpNode<ExprKind::Eq>;
using Ne = CmpNode<ExprKind::Ne>;
using Lt = CmpNode<ExprKind::Lt>;
using Le = CmpNode<ExprKind::Le>;
using Gt = CmpNode<ExprKind::Gt>;
using Ge = CmpNode<ExprKind::Ge>;
using And = CmpNode<ExprKind::And>;  // operands boolean
using Or = CmpNode<ExprKind::Or>;    // operands boolean

struct Not final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Not;
  Expr a;
  Not(DataType t, Expr x) : ExprNode(kKind, t), a(std::move(x)) {}
  static Expr make(Expr a);
};

struct Select final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Select;
  Expr condition, true_value, false_value;
  Select(DataType t, Expr c, Expr tv, Expr fv)
      : ExprNode(kKind, t), condition(std::move(c)), true_value(std::move(tv)),
        false_value(std::move(fv)) {}
  static Expr make(Expr condition, Expr true_value, Expr false_value);
};

struct Cast final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Cast;
  Expr value;
  Cast(DataType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
  /// Converts `value` to `t` (same lanes); float→int truncates toward zero.
  static Expr make(DataType t, Expr value);
};

enum class MemoryScope : uint8_t { Global, Local, Shared };

struct BufferNode {
  std::string name;  // a hint for printing only
  DataType dtype;    // scalar element type
  std::vector<int64_t> shape;
  MemoryScope scope = MemoryScope::Global;
  /// A shared buffer's request for the software pipeline of the loop whose fetches fill it (a
  /// hint to CUDA code generation, schedule::CacheRead::stages): 0 for the target's default.
  int64_t pipeline_stages = 0;
};

/// A dense row-major array. Identity is the node; lowering flattens indices to one dimension.
class Buffer {
 public:
  Buffer() = default;
  Buffer(std::string name, DataType dtype, std::vector<int64_t> shape,
         MemoryScope scope = MemoryScope::Global, int64_t pipeline_stages = 0);
  bool defined() const { return node_ != nullptr; }
  const BufferNode* get() const { return node_.get(); }
  const std::string& name() const { return node_->name; }
  DataType dtype() const { return node_->dtype; }
  const std::vector<int64_t>& shape() const { return node_->shape; }
  MemoryScope scope() const { return node_->scope; }
  int64_t pipeline_stages() const { return node_->pipeline_stages; }
  int64_t num_elements() const;
  bool same_as(const Buffer& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const BufferNode> node_;
};

/// Reads `buffer` at `indices` (one per dimension before flattening, exactly one after).
/// A vector index (Ramp) gives a vector load; lanes with a false `predicate` are not read.
struct Load final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Load;
  Buffer buffer;
  std::vector<Expr> indices;
  Expr predicate;  // undefined = all lanes
  Load(DataType t, Buffer b, std::vector<Expr> idx, Expr p)
      : ExprNode(kKind, t), buffer(std::move(b)), indices(std::move(idx)), predicate(std::move(p)) {}
  static Expr make(Buffer buffer, std::vector<Expr> indices, Expr predicate = Expr());
};

/// The vector base, base + stride, ..., base + (lanes-1)*stride.
struct Ramp final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Ramp;
  Expr base, stride;
  int lanes;
  Ramp(DataType t, Expr b, Expr s, int l)
      : ExprNode(kKind, t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
  static Expr make(Expr base, Expr stride, int lanes);
};

/// A scalar repeated in every lane.
struct Broadcast final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Broadcast;
  Expr value;
  int lanes;
  Broadcast(DataType t, Expr v, int l) : ExprNode(kKind, t), value(std::move(v)), lanes(l) {}
  static Expr make(Expr value, int lanes);
};

enum class Intrinsic : uint8_t { Exp, Log, Sqrt, Tanh, Erf, Abs, Pow, Floor, Ceil };

/// A pure math intrinsic; float arguments (Abs also takes ints), result of the first arg's type.
struct Call final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;
  Intrinsic op;
  std::vector<Expr> args;
  Call(DataType t, Intrinsic o, std::vector<Expr> a) : ExprNode(kKind, t), op(o), args(std::move(a)) {}
  static Expr make(Intrinsic op, std::vector<Expr> args);
};

/// The printed name of an intrinsic ("exp", "pow", ...).
const char* intrinsic_name(Intrinsic op);

enum class IterKind : uint8_t { DataPar, Reduce };

/// A named iteration axis over [0, extent).
struct IterVar {
  Var var;
  int64_t extent = 0;
  IterKind kind = IterKind::DataPar;
};

enum class ReduceKind : uint8_t { Sum, Prod, Maximum, Minimum };

/// A commutative reduction of `source` over `axes`. Only legal as the whole body of a compute;
/// lowering replaces it by an init store and an update loop nest.
struct Reduce final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Reduce;
  ReduceKind reducer;
  Expr source;
  std::vector<IterVar> axes;
  Reduce(DataType t, ReduceKind r, Expr s, std::vector<IterVar> a)
      : ExprNode(kKind, t), reducer(r), source(std::move(s)), axes(std::move(a)) {}
  static Expr make(ReduceKind reducer, Expr source, std::vector<IterVar> axes);
};

/// The identity of `reducer` for type `t` (0, 1, -inf/lowest, +inf/highest).
Expr reduce_identity(ReduceKind reducer, DataType t);
/// combine(acc, value) for `reducer`: acc + value, acc * value, max(acc, value), min(acc, value).
Expr reduce_combine(ReduceKind reducer, Expr acc, Expr value);
/// "sum", "prod", "max", "min".
const char* reduce_kind_name(ReduceKind reducer);

}  // namespace tensortune::ir

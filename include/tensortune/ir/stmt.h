// SPDX-License-Identifier: Apache-2.0
// Loop-level statements: the lowered form of a schedule. Same handle/node discipline as expr.h.
#pragma once

#include "tensortune/ir/expr.h"

#include <memory>
#include <string>
#include <vector>

namespace tensortune::ir {

enum class StmtKind : uint8_t { For, Store, Allocate, IfThenElse, Seq, Evaluate, LetStmt };

/// How a loop runs. GPU kinds bind the loop variable to a block or thread index.
enum class ForKind : uint8_t {
  Serial,
  Parallel,
  Vectorized,
  Unrolled,
  BlockX,
  BlockY,
  BlockZ,
  ThreadX,
  ThreadY,
  ThreadZ,
};
/// "serial", "parallel", "vectorized", "unrolled", "blockIdx.x", ..., "threadIdx.z".
const char* for_kind_name(ForKind kind);
/// True for the six GPU binding kinds.
bool is_gpu_kind(ForKind kind);
/// True for threadIdx.x/y/z.
bool is_thread_kind(ForKind kind);

struct StmtNode {
  StmtKind kind;
  explicit StmtNode(StmtKind k) : kind(k) {}
  StmtNode(const StmtNode&) = delete;
  StmtNode& operator=(const StmtNode&) = delete;
  virtual ~StmtNode();
};

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  const StmtNode* get() const { return node_.get(); }
  StmtKind kind() const { return node_->kind; }
  template <class T>
  const T* as() const {
    if (node_ && node_->kind == T::kKind) {
      return static_cast<const T*>(node_.get());
    }
    return nullptr;
  }
  bool same_as(const Stmt& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const StmtNode> node_;
};

/// for (var = min; var < min + extent; ++var) body. `auto_unroll_max_step` > 0 asks the unroll
/// pass to fully unroll loop nests inside whose total trip count is at most that many steps.
struct For final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::For;
  Var var;
  Expr min, extent;
  ForKind for_kind;
  int64_t auto_unroll_max_step;
  Stmt body;
  For(Var v, Expr mn, Expr ext, ForKind k, int64_t unroll, Stmt b)
      : StmtNode(kKind),
        var(std::move(v)),
        min(std::move(mn)),
        extent(std::move(ext)),
        for_kind(k),
        auto_unroll_max_step(unroll),
        body(std::move(b)) {}
  static Stmt make(Var var,
                   Expr min,
                   Expr extent,
                   ForKind for_kind,
                   Stmt body,
                   int64_t auto_unroll_max_step = 0);
};

/// buffer[indices] = value, for the lanes where `predicate` holds.
struct Store final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Store;
  Buffer buffer;
  Expr value;
  std::vector<Expr> indices;
  Expr predicate;  // undefined = all lanes
  Store(Buffer b, Expr v, std::vector<Expr> idx, Expr p)
      : StmtNode(kKind),
        buffer(std::move(b)),
        value(std::move(v)),
        indices(std::move(idx)),
        predicate(std::move(p)) {}
  static Stmt make(Buffer buffer, Expr value, std::vector<Expr> indices, Expr predicate = Expr());
};

/// Allocates `buffer` (its shape and scope say how much and where) for the extent of `body`.
struct Allocate final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Allocate;
  Buffer buffer;
  Stmt body;
  Allocate(Buffer b, Stmt s) : StmtNode(kKind), buffer(std::move(b)), body(std::move(s)) {}
  static Stmt make(Buffer buffer, Stmt body);
};

struct IfThenElse final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::IfThenElse;
  Expr condition;
  Stmt then_case, else_case;  // else_case may be undefined
  IfThenElse(Expr c, Stmt t, Stmt e)
      : StmtNode(kKind),
        condition(std::move(c)),
        then_case(std::move(t)),
        else_case(std::move(e)) {}
  static Stmt make(Expr condition, Stmt then_case, Stmt else_case = Stmt());
};

/// Statements run in order. `make` flattens nested Seqs and returns the single stmt when only one.
struct Seq final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Seq;
  std::vector<Stmt> stmts;
  explicit Seq(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
  static Stmt make(std::vector<Stmt> stmts);
};

/// Evaluates an expression for its side effects (none today; kept for GPU barriers later).
struct Evaluate final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Evaluate;
  Expr value;
  explicit Evaluate(Expr v) : StmtNode(kKind), value(std::move(v)) {}
  static Stmt make(Expr value);
};

/// Binds `var` to `value` inside `body`.
struct LetStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::LetStmt;
  Var var;
  Expr value;
  Stmt body;
  LetStmt(Var v, Expr val, Stmt b)
      : StmtNode(kKind), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  static Stmt make(Var var, Expr value, Stmt body);
};

/// The result of lowering: a function over dense buffers, inputs first, then outputs.
struct LoweredFunc {
  std::string name;
  std::vector<Buffer> params;
  size_t num_inputs = 0;
  Stmt body;
  /// Buffers computed from constant inputs alone (weights in a blocked layout): parameters of
  /// both functions after `params`; `prepare` writes them, `body` only reads them.
  std::vector<Buffer> prepacked;
  /// The prepare function's body (undefined when `prepacked` is empty), run once before `body`.
  Stmt prepare;
};

}  // namespace tensortune::ir

// SPDX-License-Identifier: Apache-2.0
// ir::verify: one walk over a lowered function that keeps the variables and buffers in scope and
// checks every node against the rules listed in verify.h (in the spirit of tinygrad's spec.py).
#include "tensortune/ir/verify.h"

#include "tensortune/ir/ir_printer.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/support/error.h"

#include <type_traits>
#include <unordered_set>

namespace tensortune::ir {
namespace {

bool is_index_type(DataType t) {
  return t.is_int() && (t.bits() == 32 || t.bits() == 64);
}

class Verifier : public IRVisitor {
 public:
  Verifier(const LoweredFunc& f, const VerifyOptions& options) : func_(f), options_(options) {
    for (const Buffer& b : f.params) {
      check(b.defined(), "a parameter buffer is undefined");
      check(buffers_.insert(b.get()).second,
            [&] { return "buffer '" + b.name() + "' is a parameter twice"; });
    }
    for (const Buffer& b : f.prepacked) {
      check(b.defined(), "a prepacked buffer is undefined");
      check(buffers_.insert(b.get()).second,
            [&] { return "buffer '" + b.name() + "' is a parameter twice"; });
    }
    check(f.num_inputs <= f.params.size(), "num_inputs exceeds the number of parameters");
    check(f.prepacked.empty() == !f.prepare.defined(),
          "prepacked buffers and a prepare body go together");
  }
  void run() {
    check(func_.body.defined(), "the body is undefined");
    IRVisitor::visit(func_.body);
    if (func_.prepare.defined()) {
      IRVisitor::visit(func_.prepare);
    }
  }

 protected:
  using IRVisitor::visit;

  void visit(const VarNode* op) override {
    check(vars_.count(op) != 0,
          [&] { return "variable '" + op->name + "' is used outside its scope"; });
  }
  void visit(const And* op) override {
    check_bool(op->a, "&& operand");
    check_bool(op->b, "&& operand");
    IRVisitor::visit(op);
  }
  void visit(const Or* op) override {
    check_bool(op->a, "|| operand");
    check_bool(op->b, "|| operand");
    IRVisitor::visit(op);
  }
  void visit(const Not* op) override {
    check_bool(op->a, "! operand");
    IRVisitor::visit(op);
  }
  void visit(const Select* op) override {
    check_bool(op->condition, "select condition");
    IRVisitor::visit(op);
  }
  void visit(const Load* op) override {
    check_access(op->buffer, op->indices, op->predicate, op->type.lanes(), "load from");
    check(op->type.element_of() == op->buffer.dtype(),
          [&] { return "load from '" + op->buffer.name() + "' has type " + op->type.to_string(); });
    IRVisitor::visit(op);
  }
  void visit(const Reduce* op) override {
    check(options_.allow_reduce, [&] {
      return std::string("a Reduce node remains: ") + reduce_kind_name(op->reducer) + " of " +
             to_string(op->source);
    });
    for (const IterVar& iv : op->axes) {
      bind(iv.var.get());
    }
    visit_expr(op->source);
    for (const IterVar& iv : op->axes) {
      vars_.erase(iv.var.get());
    }
  }

  void visit(const For* op) override {
    check(op->var.type().is_scalar() && is_index_type(op->var.type()), [&] {
      return "loop variable '" + op->var.name() + "' has type " + op->var.type().to_string();
    });
    check_index(op->min, "loop min");
    check_index(op->extent, "loop extent");
    visit_expr(op->min);
    visit_expr(op->extent);
    bind(op->var.get());
    IRVisitor::visit(op->body);
    vars_.erase(op->var.get());
  }
  void visit(const LetStmt* op) override {
    check(op->value.type() == op->var.type(), [&] {
      return "let '" + op->var.name() + "' of type " + op->var.type().to_string() + " bound to " +
             op->value.type().to_string();
    });
    visit_expr(op->value);
    bind(op->var.get());
    IRVisitor::visit(op->body);
    vars_.erase(op->var.get());
  }
  void visit(const Allocate* op) override {
    const Buffer& b = op->buffer;
    check(b.defined(), "an allocated buffer is undefined");
    check(buffers_.insert(b.get()).second,
          [&] { return "buffer '" + b.name() + "' is allocated twice"; });
    for (int64_t d : b.shape()) {
      check(d > 0, [&] { return "buffer '" + b.name() + "' has a non-positive extent"; });
    }
    IRVisitor::visit(op->body);
    buffers_.erase(b.get());
  }
  void visit(const Store* op) override {
    check(op->value.type().element_of() == op->buffer.dtype(), [&] {
      return "store to '" + op->buffer.name() + "' of a " + op->value.type().to_string() +
             " value into a " + op->buffer.dtype().to_string() + " buffer";
    });
    check_access(op->buffer, op->indices, op->predicate, op->value.type().lanes(), "store to");
    IRVisitor::visit(op);
  }
  void visit(const IfThenElse* op) override {
    check(op->condition.type() == DataType::boolean(), [&] {
      return "if condition of type " + op->condition.type().to_string() + ": " +
             to_string(op->condition);
    });
    IRVisitor::visit(op);
  }

 private:
  void visit_expr(const Expr& e) { IRVisitor::visit(e); }
  /// `text` itself (a string literal) or what it builds (a callable): a message is built only
  /// when its check fails (the walk runs after every lowering, and the checks pass).
  template <class Text>
  static std::string text_of(const Text& text) {
    if constexpr (std::is_invocable_v<Text>) {
      return text();
    } else {
      return text;
    }
  }
  template <class Message>
  void check(bool ok, const Message& message) const {
    TT_CHECK(ok) << "verify: function '" << func_.name << "': " << text_of(message);
  }
  void check_bool(const Expr& e, const char* what) const {
    check(e.type().is_bool(),
          [&] { return std::string(what) + " is not boolean: " + to_string(e); });
  }
  template <class What>
  void check_index(const Expr& e, const What& what) const {
    check(e.defined() && is_index_type(e.type()), [&] {
      return text_of(what) + " is not an index: " + (e.defined() ? to_string(e) : "undefined");
    });
  }
  void bind(const VarNode* v) {
    check(vars_.insert(v).second, [&] { return "variable '" + v->name + "' is defined twice"; });
  }
  void check_access(const Buffer& b,
                    const std::vector<Expr>& indices,
                    const Expr& predicate,
                    int lanes,
                    const char* access) const;

  const LoweredFunc& func_;
  VerifyOptions options_;
  std::unordered_set<const VarNode*> vars_;
  std::unordered_set<const BufferNode*> buffers_;
};

void Verifier::check_access(const Buffer& b,
                            const std::vector<Expr>& indices,
                            const Expr& predicate,
                            int lanes,
                            const char* access) const {
  const auto where = [&] {
    return std::string(access) + " '" + b.name() + "'";
  };
  check(buffers_.count(b.get()) != 0,
        [&] { return where() + ": the buffer is neither a parameter nor allocated"; });
  size_t expected = options_.flattened ? 1 : b.shape().size();
  check(indices.size() == expected, [&] {
    return where() + " has " + std::to_string(indices.size()) + " indices, expected " +
           std::to_string(expected);
  });
  for (const Expr& index : indices) {
    check_index(index, [&] { return where() + " index"; });
    int index_lanes = index.type().lanes();
    check(index_lanes == lanes || (index_lanes == 1 && indices.size() > 1), [&] {
      return where() + ": index " + to_string(index) + " has " + std::to_string(index_lanes) +
             " lanes, the value " + std::to_string(lanes);
    });
  }
  if (predicate.defined()) {
    check(predicate.type() == DataType::boolean(lanes), [&] {
      return where() + ": predicate of type " + predicate.type().to_string() + ": " +
             to_string(predicate);
    });
  }
}

}  // namespace

void verify(const LoweredFunc& f, const VerifyOptions& options) {
  Verifier verifier(f, options);
  verifier.run();
}

}  // namespace tensortune::ir

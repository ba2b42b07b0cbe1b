// SPDX-License-Identifier: Apache-2.0
// The operation counter: one switch over the expression kinds. A float multiply directly under a
// float add or subtract is also counted as fusable (fma), as in Ansor's features.
#include "op_counter.h"

namespace tensortune::cost_model {
namespace {

class Counter {
 public:
  explicit Counter(OpCounts& out) : out_(out) {}

  void count(const ir::Expr& e, bool under_float_add) {
    using ir::ExprKind;
    if (!e.defined()) {
      return;
    }
    const double lanes = e.type().lanes();
    const bool is_float = e.type().is_float();
    switch (e.kind()) {
      case ExprKind::IntImm:
      case ExprKind::FloatImm:
      case ExprKind::Var:
        return;
      case ExprKind::Add:
        return binary<ir::Add>(e, is_float ? kFloatAddSub : kIntAddSub, is_float);
      case ExprKind::Sub:
        return binary<ir::Sub>(e, is_float ? kFloatAddSub : kIntAddSub, is_float);
      case ExprKind::Mul:
        if (is_float && under_float_add) {
          out_.ops[kFloatFma] += lanes;
        }
        return binary<ir::Mul>(e, is_float ? kFloatMul : kIntMul, false);
      case ExprKind::Div:
        return binary<ir::Div>(e, is_float ? kFloatDivMod : kIntDivMod, false);
      case ExprKind::Mod:
        return binary<ir::Mod>(e, is_float ? kFloatDivMod : kIntDivMod, false);
      case ExprKind::Min:
        return binary<ir::Min>(e, is_float ? kFloatMinMax : kIntMinMax, false);
      case ExprKind::Max:
        return binary<ir::Max>(e, is_float ? kFloatMinMax : kIntMinMax, false);
      case ExprKind::Eq:
        return compare<ir::Eq>(e);
      case ExprKind::Ne:
        return compare<ir::Ne>(e);
      case ExprKind::Lt:
        return compare<ir::Lt>(e);
      case ExprKind::Le:
        return compare<ir::Le>(e);
      case ExprKind::Gt:
        return compare<ir::Gt>(e);
      case ExprKind::Ge:
        return compare<ir::Ge>(e);
      case ExprKind::And:
        return binary<ir::And>(e, kBoolOp, false);
      case ExprKind::Or:
        return binary<ir::Or>(e, kBoolOp, false);
      case ExprKind::Not:
        out_.ops[kBoolOp] += lanes;
        return count(node<ir::Not>(e)->a, false);
      case ExprKind::Select: {
        const auto* s = node<ir::Select>(e);
        out_.ops[kSelect] += lanes;
        count(s->condition, false);
        count(s->true_value, false);
        return count(s->false_value, false);
      }
      case ExprKind::Cast:
        out_.ops[kCast] += lanes;
        return count(node<ir::Cast>(e)->value, false);
      case ExprKind::Load:
        return load(node<ir::Load>(e));
      case ExprKind::Ramp:
        count(node<ir::Ramp>(e)->base, false);
        return count(node<ir::Ramp>(e)->stride, false);
      case ExprKind::Broadcast:
        return count(node<ir::Broadcast>(e)->value, false);
      case ExprKind::Call:
        out_.ops[kFloatMath] += lanes;
        for (const ir::Expr& arg : node<ir::Call>(e)->args) {
          count(arg, false);
        }
        return;
      case ExprKind::Reduce:
        return count(node<ir::Reduce>(e)->source, false);
    }
  }

  void load(const ir::Load* op) {
    out_.loads.push_back(op);
    if (op->predicate.defined()) {
      ++out_.predicated_loads;
      count(op->predicate, false);
    }
    for (const ir::Expr& index : op->indices) {
      count(index, false);
    }
  }

 private:
  template <class Node>
  static const Node* node(const ir::Expr& e) {
    return static_cast<const Node*>(e.get());
  }

  template <class Node>
  void binary(const ir::Expr& e, StoreScalar slot, bool children_under_add) {
    const Node* n = node<Node>(e);
    out_.ops[slot] += e.type().lanes();
    count(n->a, children_under_add);
    count(n->b, children_under_add);
  }

  template <class Node>
  void compare(const ir::Expr& e) {
    const Node* n = node<Node>(e);
    return binary<Node>(e, n->a.type().is_float() ? kFloatCmp : kIntCmp, false);
  }

  OpCounts& out_;
};

}  // namespace

double OpCounts::flops() const {
  return ops[kFloatAddSub] + ops[kFloatMul] + ops[kFloatDivMod] + ops[kFloatMinMax] +
         ops[kFloatMath];
}

OpCounts count_ops(const ir::Store& store) {
  OpCounts counts;
  Counter counter(counts);
  counter.count(store.value, false);
  counter.count(store.predicate, false);
  for (const ir::Expr& index : store.indices) {
    counter.count(index, false);
  }
  return counts;
}

}  // namespace tensortune::cost_model

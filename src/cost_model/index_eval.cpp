// SPDX-License-Identifier: Apache-2.0
// The tolerant index evaluator: features must never throw on valid IR, so everything the
// evaluator cannot know (loads, calls, unbound variables) reads 0 instead of failing.
#include "index_eval.h"

#include "tensortune/ir/expr.h"

#include <cmath>
#include <functional>
#include <limits>

namespace tensortune::cost_model {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Saturating arithmetic: an overflowed index is out of any buffer anyway; only its sign matters.
int64_t sat_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) {
    return b > 0 ? kMax : kMin;
  }
  return r;
}

int64_t sat_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) {
    return b < 0 ? kMax : kMin;
  }
  return r;
}

int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    return (a < 0) != (b < 0) ? kMin : kMax;
  }
  return r;
}

int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) {
    return 0;
  }
  if (a == kMin && b == -1) {
    return kMax;
  }
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) {
    --q;
  }
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) {
    return 0;
  }
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) {
    r += b;
  }
  return r;
}

int64_t from_double(double v) {
  if (std::isnan(v)) {
    return 0;
  }
  if (v >= 9.2e18) {
    return kMax;
  }
  if (v <= -9.2e18) {
    return kMin;
  }
  return static_cast<int64_t>(v);
}

template <class Node>
const Node* node(const ir::Expr& e) {
  return static_cast<const Node*>(e.get());
}

// Binary nodes share the operand layout; `op` combines the evaluated operands.
template <class Node, class Op>
int64_t binary(const ir::Expr& e, const EvalEnv& env, int lane, Op op) {
  const Node* n = node<Node>(e);
  return op(eval_index(n->a, env, lane), eval_index(n->b, env, lane));
}

int64_t eval_var(const ir::Expr& e, const EvalEnv& env, int lane) {
  const auto* v = node<ir::VarNode>(e);
  auto it = env.values.find(v);
  if (it != env.values.end()) {
    return it->second;
  }
  auto let = env.lets.find(v);
  if (let != env.lets.end()) {
    return eval_index(let->second, env, lane);
  }
  return 0;
}

}  // namespace

int64_t eval_index(const ir::Expr& e, const EvalEnv& env, int lane) {
  using ir::ExprKind;
  if (!e.defined()) {
    return 0;
  }
  auto min = [](int64_t a, int64_t b) {
    return a < b ? a : b;
  };
  auto max = [](int64_t a, int64_t b) {
    return a < b ? b : a;
  };
  switch (e.kind()) {
    case ExprKind::IntImm:
      return node<ir::IntImm>(e)->value;
    case ExprKind::FloatImm:
      return from_double(node<ir::FloatImm>(e)->value);
    case ExprKind::Var:
      return eval_var(e, env, lane);
    case ExprKind::Add:
      return binary<ir::Add>(e, env, lane, sat_add);
    case ExprKind::Sub:
      return binary<ir::Sub>(e, env, lane, sat_sub);
    case ExprKind::Mul:
      return binary<ir::Mul>(e, env, lane, sat_mul);
    case ExprKind::Div:
      return binary<ir::Div>(e, env, lane, floor_div);
    case ExprKind::Mod:
      return binary<ir::Mod>(e, env, lane, floor_mod);
    case ExprKind::Min:
      return binary<ir::Min>(e, env, lane, min);
    case ExprKind::Max:
      return binary<ir::Max>(e, env, lane, max);
    case ExprKind::Eq:
      return binary<ir::Eq>(e, env, lane, std::equal_to<>());
    case ExprKind::Ne:
      return binary<ir::Ne>(e, env, lane, std::not_equal_to<>());
    case ExprKind::Lt:
      return binary<ir::Lt>(e, env, lane, std::less<>());
    case ExprKind::Le:
      return binary<ir::Le>(e, env, lane, std::less_equal<>());
    case ExprKind::Gt:
      return binary<ir::Gt>(e, env, lane, std::greater<>());
    case ExprKind::Ge:
      return binary<ir::Ge>(e, env, lane, std::greater_equal<>());
    case ExprKind::And:
      return binary<ir::And>(e, env, lane, [](int64_t a, int64_t b) { return a != 0 && b != 0; });
    case ExprKind::Or:
      return binary<ir::Or>(e, env, lane, [](int64_t a, int64_t b) { return a != 0 || b != 0; });
    case ExprKind::Not:
      return eval_index(node<ir::Not>(e)->a, env, lane) == 0 ? 1 : 0;
    case ExprKind::Select: {
      const auto* s = node<ir::Select>(e);
      return eval_index(s->condition, env, lane) != 0 ? eval_index(s->true_value, env, lane)
                                                      : eval_index(s->false_value, env, lane);
    }
    case ExprKind::Cast:
      return eval_index(node<ir::Cast>(e)->value, env, lane);
    case ExprKind::Ramp: {
      const auto* r = node<ir::Ramp>(e);
      return sat_add(eval_index(r->base, env, 0), sat_mul(eval_index(r->stride, env, 0), lane));
    }
    case ExprKind::Broadcast:
      return eval_index(node<ir::Broadcast>(e)->value, env, 0);
    case ExprKind::Load:
    case ExprKind::Call:
    case ExprKind::Reduce:
      return 0;
  }
  return 0;
}

}  // namespace tensortune::cost_model

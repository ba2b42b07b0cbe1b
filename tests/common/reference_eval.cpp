// SPDX-License-Identifier: Apache-2.0
// The naive reference interpreter: evaluates each compute of a workload element by element from
// its te body. Deliberately simple and independent of lowering and ir::eval, so that a bug there
// cannot hide itself in the oracle.
#include "common/reference.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/support/error.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

namespace tensortune::testing {
namespace {

/// One value: `f` for floats, `i` for ints and bools.
struct Value {
  double f = 0;
  int64_t i = 0;
};

struct Array {
  ir::DataType dtype;
  std::vector<int64_t> shape;
  std::vector<Value> data;
};

double round_to(ir::DataType t, double v) {
  return t.bits() == 32 ? static_cast<double>(static_cast<float>(v)) : v;
}

int64_t wrap_to(ir::DataType t, int64_t v) {
  if (t.is_bool()) {
    return v != 0 ? 1 : 0;
  }
  if (t.bits() == 32) {
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
  }
  return v;
}

int64_t floor_div(int64_t a, int64_t b) {
  TT_CHECK(b != 0) << "reference: integer division by zero";
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  return a - floor_div(a, b) * b;
}

class Evaluator {
 public:
  std::unordered_map<const ir::BufferNode*, Array> arrays;

  /// Computes every element of `op`'s output into arrays[op.output].
  void run(const te::Operation& op);

 private:
  std::vector<std::pair<const ir::VarNode*, int64_t>> env_;

  int64_t& bind(const ir::Var& v) {
    env_.emplace_back(v.get(), 0);
    return env_.back().second;
  }
  int64_t lookup(const ir::VarNode* v) const {
    for (auto it = env_.rbegin(); it != env_.rend(); ++it) {
      if (it->first == v) {
        return it->second;
      }
    }
    TT_CHECK(false) << "reference: unbound variable '" << v->name << "'";
    return 0;
  }

  Value eval(const ir::Expr& e);
  static Value arith(ir::ExprKind kind, ir::DataType t, Value a, Value b);
  static Value compare(ir::ExprKind kind, ir::DataType operand, Value a, Value b);
  Value load(const ir::Load* op);
  Value call(const ir::Call* op);
  static Value cast(ir::DataType to, ir::DataType from, Value v);
  static Value identity(ir::ReduceKind kind, ir::DataType t);
  static Value combine(ir::ReduceKind kind, ir::DataType t, Value acc, Value v);

  template <class T>
  Value binary(const ir::Expr& e) {
    const T* op = e.as<T>();
    return arith(e.kind(), e.type(), eval(op->a), eval(op->b));
  }
  template <class T>
  Value cmp(const ir::Expr& e) {
    const T* op = e.as<T>();
    return compare(e.kind(), op->a.type(), eval(op->a), eval(op->b));
  }
};

Value make_float(double f) {
  return Value{f, 0};
}
Value make_int(int64_t i) {
  return Value{0, i};
}

Value Evaluator::arith(ir::ExprKind kind, ir::DataType t, Value a, Value b) {
  if (t.is_float()) {
    double x = a.f;
    double y = b.f;
    double r = 0;
    switch (kind) {
      case ir::ExprKind::Add:
        r = x + y;
        break;
      case ir::ExprKind::Sub:
        r = x - y;
        break;
      case ir::ExprKind::Mul:
        r = x * y;
        break;
      case ir::ExprKind::Div:
        r = x / y;
        break;
      case ir::ExprKind::Mod:
        r = x - std::floor(x / y) * y;
        break;
      case ir::ExprKind::Min:
        r = std::min(x, y);
        break;
      case ir::ExprKind::Max:
        r = std::max(x, y);
        break;
      default:
        TT_CHECK(false) << "reference: not an arithmetic kind";
    }
    return make_float(round_to(t, r));
  }
  int64_t x = a.i;
  int64_t y = b.i;
  int64_t r = 0;
  switch (kind) {
    case ir::ExprKind::Add:
      r = x + y;
      break;
    case ir::ExprKind::Sub:
      r = x - y;
      break;
    case ir::ExprKind::Mul:
      r = x * y;
      break;
    case ir::ExprKind::Div:
      r = floor_div(x, y);
      break;
    case ir::ExprKind::Mod:
      r = floor_mod(x, y);
      break;
    case ir::ExprKind::Min:
      r = std::min(x, y);
      break;
    case ir::ExprKind::Max:
      r = std::max(x, y);
      break;
    default:
      TT_CHECK(false) << "reference: not an arithmetic kind";
  }
  return make_int(wrap_to(t, r));
}

Value Evaluator::compare(ir::ExprKind kind, ir::DataType operand, Value a, Value b) {
  bool fl = operand.is_float();
  auto lt = [&](Value x, Value y) {
    return fl ? x.f < y.f : x.i < y.i;
  };
  auto eq = [&](Value x, Value y) {
    return fl ? x.f == y.f : x.i == y.i;
  };
  bool r = false;
  switch (kind) {
    case ir::ExprKind::Eq:
      r = eq(a, b);
      break;
    case ir::ExprKind::Ne:
      r = !eq(a, b);
      break;
    case ir::ExprKind::Lt:
      r = lt(a, b);
      break;
    case ir::ExprKind::Le:
      r = lt(a, b) || eq(a, b);
      break;
    case ir::ExprKind::Gt:
      r = lt(b, a);
      break;
    case ir::ExprKind::Ge:
      r = lt(b, a) || eq(a, b);
      break;
    case ir::ExprKind::And:
      r = a.i != 0 && b.i != 0;
      break;
    case ir::ExprKind::Or:
      r = a.i != 0 || b.i != 0;
      break;
    default:
      TT_CHECK(false) << "reference: not a comparison kind";
  }
  return make_int(r ? 1 : 0);
}

Value Evaluator::cast(ir::DataType to, ir::DataType from, Value v) {
  if (to.is_float()) {
    return make_float(round_to(to, from.is_float() ? v.f : static_cast<double>(v.i)));
  }
  if (from.is_float()) {
    return make_int(wrap_to(to, static_cast<int64_t>(std::trunc(v.f))));
  }
  return make_int(wrap_to(to, v.i));
}

Value Evaluator::load(const ir::Load* op) {
  auto it = arrays.find(op->buffer.get());
  TT_CHECK(it != arrays.end()) << "reference: read of unknown tensor '" << op->buffer.name() << "'";
  const Array& a = it->second;
  int64_t flat = 0;
  for (size_t d = 0; d < op->indices.size(); ++d) {
    int64_t index = eval(op->indices[d]).i;
    TT_CHECK(index >= 0 && index < a.shape[d])
        << "reference: out-of-bounds read of '" << op->buffer.name() << "': index " << index
        << " in dimension " << d << " of extent " << a.shape[d];
    flat = flat * a.shape[d] + index;
  }
  return a.data[static_cast<size_t>(flat)];
}

Value Evaluator::call(const ir::Call* op) {
  ir::DataType t = op->type;
  Value x = eval(op->args[0]);
  if (!t.is_float()) {
    TT_CHECK(op->op == ir::Intrinsic::Abs) << "reference: integer " << ir::intrinsic_name(op->op);
    return make_int(wrap_to(t, x.i < 0 ? -x.i : x.i));
  }
  double r = 0;
  switch (op->op) {
    case ir::Intrinsic::Exp:
      r = std::exp(x.f);
      break;
    case ir::Intrinsic::Log:
      r = std::log(x.f);
      break;
    case ir::Intrinsic::Sqrt:
      r = std::sqrt(x.f);
      break;
    case ir::Intrinsic::Tanh:
      r = std::tanh(x.f);
      break;
    case ir::Intrinsic::Erf:
      r = std::erf(x.f);
      break;
    case ir::Intrinsic::Abs:
      r = std::fabs(x.f);
      break;
    case ir::Intrinsic::Pow:
      r = std::pow(x.f, eval(op->args[1]).f);
      break;
    case ir::Intrinsic::Floor:
      r = std::floor(x.f);
      break;
    case ir::Intrinsic::Ceil:
      r = std::ceil(x.f);
      break;
  }
  return make_float(round_to(t, r));
}

Value Evaluator::eval(const ir::Expr& e) {
  switch (e.kind()) {
    case ir::ExprKind::IntImm:
      return make_int(e.as<ir::IntImm>()->value);
    case ir::ExprKind::FloatImm:
      return make_float(round_to(e.type(), e.as<ir::FloatImm>()->value));
    case ir::ExprKind::Var:
      return make_int(lookup(e.as<ir::VarNode>()));
    case ir::ExprKind::Add:
      return binary<ir::Add>(e);
    case ir::ExprKind::Sub:
      return binary<ir::Sub>(e);
    case ir::ExprKind::Mul:
      return binary<ir::Mul>(e);
    case ir::ExprKind::Div:
      return binary<ir::Div>(e);
    case ir::ExprKind::Mod:
      return binary<ir::Mod>(e);
    case ir::ExprKind::Min:
      return binary<ir::Min>(e);
    case ir::ExprKind::Max:
      return binary<ir::Max>(e);
    case ir::ExprKind::Eq:
      return cmp<ir::Eq>(e);
    case ir::ExprKind::Ne:
      return cmp<ir::Ne>(e);
    case ir::ExprKind::Lt:
      return cmp<ir::Lt>(e);
    case ir::ExprKind::Le:
      return cmp<ir::Le>(e);
    case ir::ExprKind::Gt:
      return cmp<ir::Gt>(e);
    case ir::ExprKind::Ge:
      return cmp<ir::Ge>(e);
    case ir::ExprKind::And:
      return cmp<ir::And>(e);
    case ir::ExprKind::Or:
      return cmp<ir::Or>(e);
    case ir::ExprKind::Not:
      return make_int(eval(e.as<ir::Not>()->a).i == 0 ? 1 : 0);
    case ir::ExprKind::Select: {
      const auto* op = e.as<ir::Select>();
      return eval(eval(op->condition).i != 0 ? op->true_value : op->false_value);
    }
    case ir::ExprKind::Cast: {
      const auto* op = e.as<ir::Cast>();
      return cast(e.type(), op->value.type(), eval(op->value));
    }
    case ir::ExprKind::Load:
      return load(e.as<ir::Load>());
    case ir::ExprKind::Call:
      return call(e.as<ir::Call>());
    case ir::ExprKind::Ramp:
    case ir::ExprKind::Broadcast:
    case ir::ExprKind::Reduce:
      TT_CHECK(false) << "reference: unexpected node in a te body: " << ir::to_string(e);
  }
  return {};
}

Value Evaluator::identity(ir::ReduceKind kind, ir::DataType t) {
  bool fl = t.is_float();
  double inf = std::numeric_limits<double>::infinity();
  int64_t lo =
      t.bits() == 32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
  int64_t hi =
      t.bits() == 32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
  switch (kind) {
    case ir::ReduceKind::Sum:
      return fl ? make_float(0) : make_int(0);
    case ir::ReduceKind::Prod:
      return fl ? make_float(1) : make_int(1);
    case ir::ReduceKind::Maximum:
      return fl ? make_float(-inf) : make_int(lo);
    case ir::ReduceKind::Minimum:
      return fl ? make_float(inf) : make_int(hi);
  }
  return {};
}

Value Evaluator::combine(ir::ReduceKind kind, ir::DataType t, Value acc, Value v) {
  switch (kind) {
    case ir::ReduceKind::Sum:
      return arith(ir::ExprKind::Add, t, acc, v);
    case ir::ReduceKind::Prod:
      return arith(ir::ExprKind::Mul, t, acc, v);
    case ir::ReduceKind::Maximum:
      return arith(ir::ExprKind::Max, t, acc, v);
    case ir::ReduceKind::Minimum:
      return arith(ir::ExprKind::Min, t, acc, v);
  }
  return {};
}

/// Advances a row-major odometer; false after the last position.
bool next(std::vector<int64_t*>& counters, const std::vector<int64_t>& extents) {
  for (size_t d = counters.size(); d-- > 0;) {
    if (++*counters[d] < extents[d]) {
      return true;
    }
    *counters[d] = 0;
  }
  return false;
}

void Evaluator::run(const te::Operation& op) {
  Array out{op.output.dtype(), op.output.shape(), {}};
  out.data.reserve(static_cast<size_t>(op.output.num_elements()));
  env_.clear();
  env_.reserve(op.axes.size() + op.reduce_axes().size());
  std::vector<int64_t*> axes;
  std::vector<int64_t> extents;
  for (const ir::IterVar& axis : op.axes) {
    axes.push_back(&bind(axis.var));
    extents.push_back(axis.extent);
  }
  const ir::Reduce* reduce = op.reduce();
  std::vector<int64_t*> raxes;
  std::vector<int64_t> rextents;
  for (const ir::IterVar& axis : op.reduce_axes()) {
    raxes.push_back(&bind(axis.var));
    rextents.push_back(axis.extent);
  }
  ir::DataType t = op.output.dtype();
  do {
    if (reduce == nullptr) {
      out.data.push_back(eval(op.body));
      continue;
    }
    Value acc = identity(reduce->reducer, t);
    do {
      acc = combine(reduce->reducer, t, acc, eval(reduce->source));
    } while (next(raxes, rextents));
    out.data.push_back(acc);
  } while (next(axes, extents));
  arrays[op.output.get()] = std::move(out);
}

size_t element_size(ir::DataType t) {
  TT_CHECK(t.is_scalar() && (t.is_float() || t.is_int()) && (t.bits() == 32 || t.bits() == 64))
      << "reference: unsupported element type " << t.to_string();
  return static_cast<size_t>(t.bytes());
}

Value read_element(const void* data, ir::DataType t, size_t i) {
  const auto* bytes = static_cast<const unsigned char*>(data) + i * element_size(t);
  if (t.is_float() && t.bits() == 32) {
    float v;
    std::memcpy(&v, bytes, sizeof v);
    return make_float(v);
  }
  if (t.is_float()) {
    double v;
    std::memcpy(&v, bytes, sizeof v);
    return make_float(v);
  }
  if (t.bits() == 32) {
    int32_t v;
    std::memcpy(&v, bytes, sizeof v);
    return make_int(v);
  }
  int64_t v;
  std::memcpy(&v, bytes, sizeof v);
  return make_int(v);
}

void write_element(void* data, ir::DataType t, size_t i, Value v) {
  auto* bytes = static_cast<unsigned char*>(data) + i * element_size(t);
  if (t.is_float() && t.bits() == 32) {
    auto f = static_cast<float>(v.f);
    std::memcpy(bytes, &f, sizeof f);
  } else if (t.is_float()) {
    std::memcpy(bytes, &v.f, sizeof v.f);
  } else if (t.bits() == 32) {
    auto x = static_cast<int32_t>(v.i);
    std::memcpy(bytes, &x, sizeof x);
  } else {
    std::memcpy(bytes, &v.i, sizeof v.i);
  }
}

}  // namespace

void reference_run(const te::Workload& workload, const std::vector<void*>& args) {
  const auto& inputs = workload.inputs();
  const auto& outputs = workload.outputs();
  TT_CHECK(args.size() == inputs.size() + outputs.size())
      << "reference_run: " << args.size() << " buffers for " << inputs.size() << " inputs and "
      << outputs.size() << " outputs";
  Evaluator ev;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const ir::Buffer& b = inputs[k].buffer();
    Array a{b.dtype(), b.shape(), {}};
    auto n = static_cast<size_t>(b.num_elements());
    for (size_t i = 0; i < n; ++i) {
      a.data.push_back(read_element(args[k], b.dtype(), i));
    }
    ev.arrays[b.get()] = std::move(a);
  }
  for (const te::OperationRef& op : workload.ops()) {
    if (!op->is_placeholder()) {
      ev.run(*op);
    }
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Array& a = ev.arrays.at(outputs[k].buffer().get());
    for (size_t i = 0; i < a.data.size(); ++i) {
      write_element(args[inputs.size() + k], a.dtype, i, a.data[i]);
    }
  }
}

}  // namespace tensortune::testing

// SPDX-License-Identifier: Apache-2.0
// placeholder, compute, reduce_axis and the reductions, with the checks that keep a compute
// well-formed: a Reduce only at the top, reads through tensors with index-typed indices, unique
// axis names, and no free variables.
#include "tensortune/te/compute.h"

#include "te/operator_util.h"
#include "te/read_tracker.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/support/error.h"

#include <array>
#include <set>
#include <unordered_set>

namespace tensortune::te {
namespace {

void check_shape(const std::vector<int64_t>& shape,
                 const std::string& what,
                 const std::string& name) {
  // Far above any real tensor, and low enough that element and byte counts fit in int64_t.
  constexpr int64_t kMaxElements = int64_t{1} << 48;
  int64_t elements = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    TT_USER_CHECK(shape[d] > 0) << what << " '" << name << "': dimension " << d
                                << " has non-positive extent " << shape[d];
    TT_USER_CHECK(shape[d] <= kMaxElements / elements)
        << what << " '" << name << "': more than 2^48 elements (shape " << detail::shape_str(shape)
        << ")";
    elements *= shape[d];
  }
}

std::string default_axis_name(size_t d) {
  static constexpr std::array<const char*, 6> kLetters = {"i", "j", "k", "l", "m", "n"};
  if (d < kLetters.size()) {
    return kLetters[d];
  }
  return "a" + std::to_string(d);
}

/// Walks a compute body below its top: checks reads and variables and collects the operations
/// read, in first-read order.
class BodyChecker : public ir::IRVisitor {
 public:
  BodyChecker(const std::string& op_name,
              const detail::ReadTracker& tracker,
              std::unordered_set<const ir::VarNode*> allowed)
      : op_name_(op_name), tracker_(tracker), allowed_(std::move(allowed)) {}

  using ir::IRVisitor::visit;

  std::vector<OperationRef> inputs;

 protected:
  void visit(const ir::VarNode* op) override {
    TT_USER_CHECK(allowed_.count(op) != 0)
        << "compute '" << op_name_ << "': body uses variable '" << op->name
        << "', which is neither an axis nor a reduction axis of this compute";
  }

  void visit(const ir::Load* op) override {
    const std::string& buf = op->buffer.name();
    TT_USER_CHECK(op->indices.size() == op->buffer.shape().size())
        << "compute '" << op_name_ << "': tensor '" << buf << "' has " << op->buffer.shape().size()
        << " dimensions but is read with " << op->indices.size() << " indices";
    for (const ir::Expr& index : op->indices) {
      TT_USER_CHECK(index.type() == ir::DataType::index())
          << "compute '" << op_name_ << "': tensor '" << buf << "' is read with an index of type "
          << index.type().to_string() << ", expected int32";
    }
    TT_USER_CHECK(!op->predicate.defined())
        << "compute '" << op_name_ << "': predicated read of tensor '" << buf << "'";
    OperationRef producer = tracker_.find(op->buffer);
    TT_USER_CHECK(producer != nullptr)
        << "compute '" << op_name_ << "': body reads buffer '" << buf
        << "' that was not read through a Tensor inside the body function";
    bool seen = false;
    for (const OperationRef& input : inputs) {
      seen = seen || input == producer;
    }
    if (!seen) {
      inputs.push_back(producer);
    }
    ir::IRVisitor::visit(op);
  }

  void visit(const ir::Reduce* /*op*/) override {
    TT_USER_CHECK(false) << "compute '" << op_name_
                         << "': a reduction may only be the whole body, not part of it";
  }

  void visit(const ir::Ramp* /*op*/) override {
    TT_USER_CHECK(false) << "compute '" << op_name_ << "': vector expressions are not allowed";
  }

  void visit(const ir::Broadcast* /*op*/) override {
    TT_USER_CHECK(false) << "compute '" << op_name_ << "': vector expressions are not allowed";
  }

 private:
  const std::string& op_name_;
  const detail::ReadTracker& tracker_;
  std::unordered_set<const ir::VarNode*> allowed_;
};

ir::Expr make_reduce(const char* what,
                     ir::ReduceKind kind,
                     ir::Expr source,
                     std::vector<ir::IterVar> axes) {
  TT_USER_CHECK(source.defined()) << what << ": undefined source";
  TT_USER_CHECK(source.type().is_scalar() && !source.type().is_bool())
      << what << ": source must be a scalar number, got " << source.type().to_string();
  TT_USER_CHECK(!axes.empty()) << what << ": needs at least one reduction axis";
  for (const ir::IterVar& axis : axes) {
    TT_USER_CHECK(axis.kind == ir::IterKind::Reduce && axis.extent > 0)
        << what << ": axis '" << axis.var.name() << "' is not a reduction axis (use reduce_axis)";
  }
  return ir::Reduce::make(kind, std::move(source), std::move(axes));
}

/// Checks the top of a compute body and the uniqueness of axis names; returns the operations read.
std::vector<OperationRef> check_body(const std::string& name,
                                     const ir::Expr& body,
                                     const std::vector<ir::IterVar>& axes,
                                     const detail::ReadTracker& tracker) {
  TT_USER_CHECK(body.defined()) << "compute '" << name << "': the body function returned nothing";
  TT_USER_CHECK(body.type().is_scalar() && !body.type().is_bool())
      << "compute '" << name << "': body must be a scalar number, got " << body.type().to_string();
  std::unordered_set<const ir::VarNode*> allowed;
  std::set<std::string> names;
  for (const ir::IterVar& axis : axes) {
    allowed.insert(axis.var.get());
    names.insert(axis.var.name());
  }
  ir::Expr below = body;
  if (const auto* r = body.as<ir::Reduce>()) {
    for (const ir::IterVar& axis : r->axes) {
      TT_USER_CHECK(allowed.count(axis.var.get()) == 0)
          << "compute '" << name << "': axis '" << axis.var.name()
          << "' is used as both a compute axis and a reduction axis";
      TT_USER_CHECK(names.insert(axis.var.name()).second)
          << "compute '" << name << "': reduction axis name '" << axis.var.name()
          << "' is used twice (axis and reduction axis names must be unique)";
      allowed.insert(axis.var.get());
    }
    below = r->source;
  }
  BodyChecker checker(name, tracker, std::move(allowed));
  checker.visit(below);
  return std::move(checker.inputs);
}

}  // namespace

Tensor placeholder(std::vector<int64_t> shape, ir::DataType dtype, std::string name) {
  TT_USER_CHECK(!name.empty()) << "placeholder: empty name";
  check_shape(shape, "placeholder", name);
  // A compute may be rank 0 here (the lowering refuses it, saying what to do), but a rank-0
  // input could not even be read.
  TT_USER_CHECK(!shape.empty()) << "placeholder '" << name
                                << "' has no dimensions (rank 0); give it shape {1}";
  TT_USER_CHECK(dtype.is_scalar() && !dtype.is_bool())
      << "placeholder '" << name << "': element type must be a scalar number, got "
      << dtype.to_string();
  auto op = std::make_shared<Operation>();
  op->kind = OpKind::Placeholder;
  op->name = name;
  op->output = ir::Buffer(std::move(name), dtype, std::move(shape));
  return Tensor(std::move(op));
}

ir::IterVar reduce_axis(int64_t extent, std::string name) {
  TT_USER_CHECK(!name.empty()) << "reduce_axis: empty name";
  TT_USER_CHECK(extent > 0) << "reduce_axis '" << name << "': non-positive extent " << extent;
  return ir::IterVar{ir::Var(std::move(name)), extent, ir::IterKind::Reduce};
}

Tensor compute(std::vector<int64_t> shape,
               const std::function<ir::Expr(const std::vector<ir::Var>&)>& fn,
               std::string name,
               std::string tag,
               std::vector<std::string> axis_names) {
  TT_USER_CHECK(!name.empty()) << "compute: empty name";
  check_shape(shape, "compute", name);
  TT_USER_CHECK(axis_names.empty() || axis_names.size() == shape.size())
      << "compute '" << name << "': " << axis_names.size() << " axis names for " << shape.size()
      << " dimensions";
  std::set<std::string> seen;
  auto op = std::make_shared<Operation>();
  std::vector<ir::Var> vars;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string axis = axis_names.empty() ? default_axis_name(d) : axis_names[d];
    TT_USER_CHECK(!axis.empty()) << "compute '" << name << "': axis " << d << " has an empty name";
    TT_USER_CHECK(seen.insert(axis).second)
        << "compute '" << name << "': axis name '" << axis << "' is used twice";
    vars.emplace_back(axis);
    op->axes.push_back(ir::IterVar{vars.back(), shape[d], ir::IterKind::DataPar});
  }
  detail::ReadTracker tracker;
  ir::Expr body = fn(vars);
  op->inputs = check_body(name, body, op->axes, tracker);
  op->kind = OpKind::Compute;
  op->name = name;
  op->tag = std::move(tag);
  op->output = ir::Buffer(std::move(name), body.type(), std::move(shape));
  op->body = std::move(body);
  return Tensor(std::move(op));
}

ir::Expr sum(ir::Expr source, std::vector<ir::IterVar> axes) {
  return make_reduce("sum", ir::ReduceKind::Sum, std::move(source), std::move(axes));
}

ir::Expr prod(ir::Expr source, std::vector<ir::IterVar> axes) {
  return make_reduce("prod", ir::ReduceKind::Prod, std::move(source), std::move(axes));
}

ir::Expr max_reduce(ir::Expr source, std::vector<ir::IterVar> axes) {
  return make_reduce("max_reduce", ir::ReduceKind::Maximum, std::move(source), std::move(axes));
}

ir::Expr min_reduce(ir::Expr source, std::vector<ir::IterVar> axes) {
  return make_reduce("min_reduce", ir::ReduceKind::Minimum, std::move(source), std::move(axes));
}

}  // namespace tensortune::te

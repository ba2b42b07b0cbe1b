// SPDX-License-Identifier: Apache-2.0
// Workload: DAG checks, the deterministic operation order, the canonical text behind the key, and
// the flop count.
#include "tensortune/te/workload.h"

#include "te/operator_util.h"
#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/support/error.h"
#include "tensortune/support/hash.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace tensortune::te {
namespace {

bool contains(const std::vector<Tensor>& tensors, const OperationRef& op) {
  return std::any_of(tensors.begin(), tensors.end(), [&](const Tensor& t) { return t.op() == op; });
}

void check_distinct(const std::string& workload,
                    const std::vector<Tensor>& tensors,
                    const char* what) {
  std::unordered_set<const Operation*> seen;
  for (const Tensor& t : tensors) {
    TT_USER_CHECK(t.defined()) << "workload '" << workload << "': undefined " << what;
    TT_USER_CHECK(seen.insert(t.op().get()).second)
        << "workload '" << workload << "': " << what << " '" << t.name() << "' is listed twice";
  }
}

/// Post-order depth-first walk over inputs in first-read order.
void topo_visit(const OperationRef& op,
                std::unordered_set<const Operation*>& visited,
                std::vector<OperationRef>& order) {
  if (!visited.insert(op.get()).second) {
    return;
  }
  for (const OperationRef& input : op->inputs) {
    topo_visit(input, visited, order);
  }
  order.push_back(op);
}

/// Renames variables and buffers to positional names so the printed body is independent of
/// user names and pointers.
class CanonicalRenamer : public ir::IRMutator {
 public:
  using ir::IRMutator::mutate;

  std::unordered_map<const ir::VarNode*, ir::Var> vars;
  std::unordered_map<const ir::BufferNode*, ir::Buffer> buffers;

 protected:
  ir::Expr visit(const ir::VarNode* op, const ir::Expr& e) override {
    auto it = vars.find(op);
    return it == vars.end() ? e : it->second;
  }

  ir::Expr visit(const ir::Load* op, const ir::Expr& /*e*/) override {
    auto it = buffers.find(op->buffer.get());
    TT_CHECK(it != buffers.end()) << "load of unknown buffer '" << op->buffer.name() << "'";
    std::vector<ir::Expr> indices;
    for (const ir::Expr& index : op->indices) {
      indices.push_back(mutate(index));
    }
    return ir::Load::make(it->second, std::move(indices), mutate(op->predicate));
  }

  ir::Expr visit(const ir::Reduce* op, const ir::Expr& /*e*/) override {
    std::vector<ir::IterVar> axes;
    for (size_t r = 0; r < op->axes.size(); ++r) {
      ir::Var renamed("r" + std::to_string(r));
      vars.emplace(op->axes[r].var.get(), renamed);
      axes.push_back(ir::IterVar{renamed, op->axes[r].extent, op->axes[r].kind});
    }
    return ir::Reduce::make(op->reducer, mutate(op->source), std::move(axes));
  }
};

struct FlopInfo {
  double flops = 0;
  bool reads = false;  // depends on a tensor element (index arithmetic does not count)
};

FlopInfo count_flops(const ir::Expr& e);

FlopInfo combine(std::initializer_list<FlopInfo> parts, bool is_arith) {
  FlopInfo out;
  for (const FlopInfo& p : parts) {
    out.flops += p.flops;
    out.reads = out.reads || p.reads;
  }
  if (is_arith && out.reads) {
    out.flops += 1;
  }
  return out;
}

template <class T>
FlopInfo count_binary(const ir::Expr& e, bool is_arith) {
  const T* op = e.as<T>();
  return combine({count_flops(op->a), count_flops(op->b)}, is_arith);
}

/// Arithmetic on values read from tensors counts 1 per node (intrinsics too, a reduction's
/// combine too); comparisons, selects, casts, loads and index arithmetic count 0.
FlopInfo count_flops(const ir::Expr& e) {
  switch (e.kind()) {
    case ir::ExprKind::IntImm:
    case ir::ExprKind::FloatImm:
    case ir::ExprKind::Var:
      return {};
    case ir::ExprKind::Add:
      return count_binary<ir::Add>(e, true);
    case ir::ExprKind::Sub:
      return count_binary<ir::Sub>(e, true);
    case ir::ExprKind::Mul:
      return count_binary<ir::Mul>(e, true);
    case ir::ExprKind::Div:
      return count_binary<ir::Div>(e, true);
    case ir::ExprKind::Mod:
      return count_binary<ir::Mod>(e, true);
    case ir::ExprKind::Min:
      return count_binary<ir::Min>(e, true);
    case ir::ExprKind::Max:
      return count_binary<ir::Max>(e, true);
    case ir::ExprKind::Eq:
      return count_binary<ir::Eq>(e, false);
    case ir::ExprKind::Ne:
      return count_binary<ir::Ne>(e, false);
    case ir::ExprKind::Lt:
      return count_binary<ir::Lt>(e, false);
    case ir::ExprKind::Le:
      return count_binary<ir::Le>(e, false);
    case ir::ExprKind::Gt:
      return count_binary<ir::Gt>(e, false);
    case ir::ExprKind::Ge:
      return count_binary<ir::Ge>(e, false);
    case ir::ExprKind::And:
      return count_binary<ir::And>(e, false);
    case ir::ExprKind::Or:
      return count_binary<ir::Or>(e, false);
    case ir::ExprKind::Not:
      return count_flops(e.as<ir::Not>()->a);
    case ir::ExprKind::Select: {
      const auto* op = e.as<ir::Select>();
      return combine(
          {count_flops(op->condition), count_flops(op->true_value), count_flops(op->false_value)},
          false);
    }
    case ir::ExprKind::Cast:
      return count_flops(e.as<ir::Cast>()->value);
    case ir::ExprKind::Load:
      return {0, true};
    case ir::ExprKind::Ramp: {
      const auto* op = e.as<ir::Ramp>();
      return combine({count_flops(op->base), count_flops(op->stride)}, false);
    }
    case ir::ExprKind::Broadcast:
      return count_flops(e.as<ir::Broadcast>()->value);
    case ir::ExprKind::Call: {
      FlopInfo out;
      for (const ir::Expr& arg : e.as<ir::Call>()->args) {
        out = combine({out, count_flops(arg)}, false);
      }
      return combine({out}, true);
    }
    case ir::ExprKind::Reduce: {
      const auto* op = e.as<ir::Reduce>();
      double extent = 1;
      for (const ir::IterVar& axis : op->axes) {
        extent *= static_cast<double>(axis.extent);
      }
      FlopInfo source = count_flops(op->source);
      return {(source.flops + 1) * extent, source.reads};
    }
  }
  TT_CHECK(false) << "unknown expression kind";
  return {};
}

}  // namespace

Workload::Workload(std::string name,
                   std::vector<Tensor> inputs,
                   std::vector<Tensor> outputs,
                   const std::vector<Tensor>& constants)
    : Workload(std::move(name), std::move(inputs), std::move(outputs)) {
  for (const Tensor& c : constants) {
    auto it = std::find_if(inputs_.begin(), inputs_.end(),
                           [&](const Tensor& t) { return t.op() == c.op(); });
    TT_USER_CHECK(it != inputs_.end())
        << "workload '" << name_ << "': constant '" << c.name() << "' is not an input";
    constant_[static_cast<size_t>(it - inputs_.begin())] = true;
  }
}

bool Workload::is_constant(const std::string& name) const {
  for (size_t n = 0; n < inputs_.size(); ++n) {
    if (constant_[n] && inputs_[n].op()->name == name) {
      return true;
    }
  }
  return false;
}

Workload::Workload(std::string name, std::vector<Tensor> inputs, std::vector<Tensor> outputs)
    : name_(std::move(name)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      constant_(inputs_.size(), false) {
  TT_USER_CHECK(!name_.empty()) << "workload: empty name";
  TT_USER_CHECK(!outputs_.empty()) << "workload '" << name_ << "': no outputs";
  check_distinct(name_, inputs_, "input");
  check_distinct(name_, outputs_, "output");
  for (const Tensor& t : inputs_) {
    TT_USER_CHECK(t.op()->is_placeholder())
        << "workload '" << name_ << "': input '" << t.name() << "' is not a placeholder";
  }
  for (const Tensor& t : outputs_) {
    TT_USER_CHECK(!t.op()->is_placeholder())
        << "workload '" << name_ << "': output '" << t.name()
        << "' is a placeholder (an input cannot also be an output)";
  }
  std::unordered_set<const Operation*> visited;
  for (const Tensor& t : outputs_) {
    topo_visit(t.op(), visited, ops_);
  }
  std::set<std::string> names;
  for (const OperationRef& op : ops_) {
    TT_USER_CHECK(names.insert(op->name).second)
        << "workload '" << name_ << "': two operations are named '" << op->name << "'";
    TT_USER_CHECK(!op->is_placeholder() || contains(inputs_, op))
        << "workload '" << name_ << "': placeholder '" << op->name
        << "' is read but not listed as an input";
  }
  for (const Tensor& t : inputs_) {
    TT_USER_CHECK(visited.count(t.op().get()) != 0)
        << "workload '" << name_ << "': input '" << t.name() << "' is not read by any output";
  }
}

OperationRef Workload::find_op(const std::string& name) const {
  for (const OperationRef& op : ops_) {
    if (op->name == name) {
      return op;
    }
  }
  return nullptr;
}

std::vector<OperationRef> Workload::consumers(const OperationRef& op) const {
  std::vector<OperationRef> out;
  for (const OperationRef& candidate : ops_) {
    for (const OperationRef& input : candidate->inputs) {
      if (input == op) {
        out.push_back(candidate);
        break;
      }
    }
  }
  return out;
}

std::string Workload::canonical_text() const {
  CanonicalRenamer renamer;
  std::unordered_map<const Operation*, std::string> tensor_names;
  for (size_t n = 0; n < ops_.size(); ++n) {
    const Operation& op = *ops_[n];
    std::string tname = "T" + std::to_string(n);
    tensor_names[&op] = tname;
    renamer.buffers[op.output.get()] =
        ir::Buffer(tname, op.output.dtype(), op.output.shape(), op.output.scope());
  }
  std::ostringstream os;
  for (const OperationRef& op : ops_) {
    os << tensor_names[op.get()] << " = " << (op->is_placeholder() ? "placeholder " : "compute ")
       << op->output.dtype().to_string() << " " << detail::shape_str(op->output.shape());
    if (!op->is_placeholder()) {
      os << " tag=\"" << op->tag << "\" axes=[";
      for (size_t d = 0; d < op->axes.size(); ++d) {
        ir::Var renamed("ax" + std::to_string(d));
        renamer.vars.emplace(op->axes[d].var.get(), renamed);
        os << (d ? ", " : "") << renamed.name() << ":" << op->axes[d].extent;
      }
      os << "] body=" << ir::to_string(renamer.mutate(op->body));
      renamer.vars.clear();
    }
    os << "\n";
  }
  auto list = [&](const char* label, const std::vector<Tensor>& tensors) {
    os << label;
    for (size_t n = 0; n < tensors.size(); ++n) {
      os << (n ? ", " : " ") << tensor_names[tensors[n].op().get()];
    }
    os << "\n";
  };
  list("inputs", inputs_);
  list("outputs", outputs_);
  std::vector<Tensor> constants;
  for (size_t n = 0; n < inputs_.size(); ++n) {
    if (constant_[n])
      constants.push_back(inputs_[n]);
  }
  if (!constants.empty())
    list("constants", constants);
  return os.str();
}

std::string Workload::key() const {
  return name_ + "_" + support::hash_hex(canonical_text());
}

double Workload::flop_count() const {
  double total = 0;
  for (const OperationRef& op : ops_) {
    if (op->is_placeholder()) {
      continue;
    }
    total += count_flops(op->body).flops * static_cast<double>(op->output.num_elements());
  }
  return total;
}

int64_t Workload::max_reduction_length() const {
  int64_t longest = 1;
  for (const OperationRef& op : ops_) {
    int64_t length = 1;
    for (const ir::IterVar& axis : op->reduce_axes())
      length *= axis.extent;
    longest = std::max(longest, length);
  }
  return longest;
}

std::vector<std::string> distinct_names(const std::vector<NamedKey>& workloads) {
  std::unordered_map<std::string, std::set<std::string>> keys;  // name -> its keys
  for (const NamedKey& w : workloads)
    keys[w.name].insert(w.key);
  std::vector<std::string> out;
  out.reserve(workloads.size());
  for (const NamedKey& w : workloads) {
    const bool shared = keys[w.name].size() > 1;
    out.push_back(shared ? w.name + "_" + w.key.substr(w.key.size() > 6 ? w.key.size() - 6 : 0)
                         : w.name);
  }
  return out;
}

}  // namespace tensortune::te

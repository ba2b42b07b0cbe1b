// SPDX-License-Identifier: Apache-2.0
// The DAG analysis the sketch rules read (Ansor's AccessAnalyzer, reduced to what the CPU rules
// need): reductions, data reuse, packable inputs, element-wise epilogue chains.
#include "search/sketch/rules.h"
#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/ir/simplify.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <array>
#include <optional>
#include <set>

namespace tensortune::search::detail {
namespace {

/// One read of a buffer: the variables each index uses.
struct Read {
  ir::Buffer buffer;
  std::vector<ir::Expr> indices;
  std::vector<std::set<const ir::ExprNode*>> vars;  // per index
};

std::vector<Read> reads_of(const te::Operation& op) {
  std::vector<Read> reads;
  ir::post_order_visit(op.body, [&](const ir::Expr& e) {
    const auto* load = e.as<ir::Load>();
    if (load == nullptr) {
      return;
    }
    Read read{load->buffer, load->indices, {}};
    for (const ir::Expr& index : load->indices) {
      std::set<const ir::ExprNode*> used;
      ir::post_order_visit(index, [&](const ir::Expr& x) {
        if (x.as<ir::VarNode>() != nullptr) {
          used.insert(x.get());
        }
      });
      read.vars.push_back(std::move(used));
    }
    reads.push_back(std::move(read));
  });
  return reads;
}

bool uses_any(const std::set<const ir::ExprNode*>& used, const std::vector<ir::IterVar>& axes) {
  return std::any_of(axes.begin(), axes.end(),
                     [&](const ir::IterVar& a) { return used.count(a.var.get()) != 0; });
}

/// How many of `axes` the read's indices use.
size_t axes_used(const Read& read, const std::vector<ir::IterVar>& axes) {
  size_t n = 0;
  for (const ir::IterVar& a : axes) {
    bool found = false;
    for (const auto& used : read.vars) {
      found = found || used.count(a.var.get()) != 0;
    }
    n += found ? 1 : 0;
  }
  return n;
}

std::string producer_name(const te::Operation& op, const ir::Buffer& buffer) {
  for (const te::OperationRef& input : op.inputs) {
    if (input->output.same_as(buffer)) {
      return input->name;
    }
  }
  return buffer.name();
}

/// Whether data axis `d` of `op` can be vectorized with blocked copies of the inputs that need
/// them (see StageInfo::vector_axes); the blocks when it can.
std::optional<StageInfo::VectorAxis> vector_axis(const te::Operation& op,
                                                 const std::vector<Read>& reads,
                                                 size_t d) {
  StageInfo::VectorAxis out{d, {}};
  const ir::Var& var = op.axes[d].var;
  for (const Read& r : reads) {
    std::vector<size_t> at;
    for (size_t p = 0; p < r.vars.size(); ++p) {
      if (r.vars[p].count(var.get()) != 0)
        at.push_back(p);
    }
    if (at.empty())
      continue;
    if (at.size() > 1 || !r.indices[at[0]].same_as(var))
      return std::nullopt;
    if (at[0] + 1 == r.indices.size())
      continue;  // contiguous already
    size_t same = std::count_if(reads.begin(), reads.end(),
                                [&](const Read& o) { return o.buffer.same_as(r.buffer); });
    if (same != 1)
      return std::nullopt;
    out.blocks.emplace_back(producer_name(op, r.buffer), static_cast<int64_t>(at[0]));
  }
  if (out.blocks.empty())
    return std::nullopt;
  return out;
}

/// Whether `index` moves by exactly 1 when `var` does.
bool unit_step(const ir::Expr& index, const ir::Var& var) {
  const ir::VarMap next{{var.get(), var + ir::make_const(var.type(), int64_t{1})}};
  return ir::is_const_int(ir::simplify(ir::substitute(index, next) - index), 1);
}

/// Whether some read uses data axis `d` of `op` other than at unit stride in its last index.
bool strided_reads(const te::Operation& op, const std::vector<Read>& reads, size_t d) {
  const ir::Var& var = op.axes[d].var;
  for (const Read& r : reads) {
    for (size_t p = 0; p < r.vars.size(); ++p) {
      if (r.vars[p].count(var.get()) == 0)
        continue;
      if (p + 1 != r.vars.size() || !unit_step(r.indices[p], var))
        return true;
    }
  }
  return false;
}

/// True when some read indexes its last dimension with axis `d` of `op` at a step other than 1
/// (a stride-2 pool's x * 2 + rx).
bool stepped_last_index(const te::Operation& op, const std::vector<Read>& reads, size_t d) {
  const ir::Var& var = op.axes[d].var;
  return std::any_of(reads.begin(), reads.end(), [&](const Read& r) {
    return !r.vars.empty() && r.vars.back().count(var.get()) != 0 &&
           !unit_step(r.indices.back(), var);
  });
}

/// Whether some data axis longer than 1 is missing from a read of `input` (so each element read
/// serves several outputs).
bool reused(const te::Operation& op, const std::vector<Read>& reads, const std::string& input) {
  return std::any_of(reads.begin(), reads.end(), [&](const Read& r) {
    if (producer_name(op, r.buffer) != input)
      return false;
    return std::any_of(op.axes.begin(), op.axes.end(), [&](const ir::IterVar& a) {
      return a.extent > 1 && std::none_of(r.vars.begin(), r.vars.end(), [&](const auto& used) {
               return used.count(a.var.get()) != 0;
             });
    });
  });
}

void analyse_reuse(StageInfo& info, const te::Workload& workload) {
  const te::Operation& op = *info.op;
  std::vector<ir::IterVar> reduce = op.reduce_axes();
  std::vector<Read> reads = reads_of(op);
  for (const Read& r : reads) {
    info.has_reuse = info.has_reuse || axes_used(r, op.axes) < op.axes.size();
  }
  info.last_axis_stepped = stepped_last_index(op, reads, op.axes.size() - 1);
  if (!info.has_reuse) {
    return;
  }
  for (const Read& r : reads) {
    size_t same = std::count_if(reads.begin(), reads.end(),
                                [&](const Read& o) { return o.buffer.same_as(r.buffer); });
    bool last_is_vector_axis = !r.vars.empty() && r.vars.back().count(op.axes.back().var.get());
    bool reads_reduction = std::any_of(r.vars.begin(), r.vars.end(),
                                       [&](const auto& u) { return uses_any(u, reduce); });
    if (same == 1 && last_is_vector_axis && reads_reduction &&
        axes_used(r, op.axes) < op.axes.size()) {
      info.packable.push_back(producer_name(op, r.buffer));
      const auto* last = r.indices.back().as<ir::VarNode>();
      if (last == op.axes.back().var.get() && workload.is_constant(info.packable.back())) {
        info.panel_packable.push_back(info.packable.back());
      }
    }
  }
  info.last_axis_strided = strided_reads(op, reads, op.axes.size() - 1);
  // The last axis too when some read strides over it (dense's weight [N, K] read at [j, k]):
  // blocked by the vector, the weight is read a vector at a time.
  const size_t candidates = op.axes.size() - (info.last_axis_strided ? 0 : 1);
  for (size_t d = 0; d < candidates; ++d) {
    std::optional<StageInfo::VectorAxis> v = vector_axis(op, reads, d);
    // A blocked copy of an activation that no data axis reuses (a global pool's input) is made
    // on every call and is as large as the work: the copy alone costs more than the gathers it
    // saves. Inside ResNet-18, a zero-shot vec(channel) pick of the 512x7x7 pool took 19 us
    // against 6 us for the tuned, unblocked record.
    const bool copies_a_pass =
        v && std::any_of(v->blocks.begin(), v->blocks.end(), [&](const auto& b) {
          return !workload.is_constant(b.first) && !reused(op, reads, b.first);
        });
    if (v && !copies_a_pass) {
      info.vector_axes.push_back(std::move(*v));
    }
  }
}

/// Whether `consumer` reads `producer` only at its own axes, in order, with equal shapes.
bool reads_elementwise(const StageInfo& consumer, const StageInfo& producer) {
  const te::Operation& op = *consumer.op;
  if (op.output.shape() != producer.op->output.shape()) {
    return false;
  }
  bool any = false;
  for (const Read& r : reads_of(op)) {
    if (!r.buffer.same_as(producer.op->output)) {
      continue;
    }
    any = true;
    for (size_t d = 0; d < r.indices.size(); ++d) {
      if (d >= op.axes.size() || !r.indices[d].same_as(op.axes[d].var)) {
        return false;
      }
    }
  }
  return any;
}

std::vector<std::string> placeholder_copy_names(size_t ndim) {
  static constexpr std::array<const char*, 6> kLetters = {"i", "j", "k", "l", "m", "n"};
  std::vector<std::string> names;
  for (size_t d = 0; d < ndim; ++d) {
    names.push_back(d < kLetters.size() ? std::string(kLetters[d]) : "a" + std::to_string(d));
  }
  return names;
}

}  // namespace

std::vector<size_t> data_axes_read(const StageInfo& stage, const std::string& input) {
  std::vector<size_t> out;
  const std::vector<Read> reads = reads_of(*stage.op);
  for (size_t d = 0; d < stage.data_axes.size() && d < stage.op->axes.size(); ++d) {
    const ir::ExprNode* var = stage.op->axes[d].var.get();
    bool used = false;
    for (const Read& read : reads) {
      if (producer_name(*stage.op, read.buffer) != input)
        continue;
      for (const std::set<const ir::ExprNode*>& vars : read.vars)
        used = used || vars.count(var) != 0;
    }
    if (used)
      out.push_back(d);
  }
  return out;
}

namespace {

/// The index in `axes` of the variable every read of `input` has as its last index, if any.
std::optional<size_t> last_index_axis(const StageInfo& stage,
                                      const std::string& input,
                                      const std::vector<ir::IterVar>& axes) {
  std::optional<size_t> axis;
  for (const Read& read : reads_of(*stage.op)) {
    if (producer_name(*stage.op, read.buffer) != input || read.indices.empty())
      continue;
    std::optional<size_t> found;
    for (size_t d = 0; d < axes.size(); ++d) {
      if (read.indices.back().same_as(axes[d].var))
        found = d;
    }
    if (!found || (axis && *axis != *found))
      return std::nullopt;
    axis = found;
  }
  return axis;
}

}  // namespace

std::optional<size_t> last_index_data_axis(const StageInfo& stage, const std::string& input) {
  const size_t n = std::min(stage.op->axes.size(), stage.data_axes.size());
  const std::vector<ir::IterVar> axes(stage.op->axes.begin(),
                                      stage.op->axes.begin() + static_cast<std::ptrdiff_t>(n));
  return last_index_axis(stage, input, axes);
}

std::optional<size_t> last_index_reduce_axis(const StageInfo& stage, const std::string& input) {
  return last_index_axis(stage, input, stage.op->reduce_axes());
}

const StageInfo* DagInfo::find(const std::string& name) const {
  for (const StageInfo& s : stages) {
    if (s.name == name) {
      return &s;
    }
  }
  return nullptr;
}

bool DagInfo::is_placeholder(const std::string& name) const {
  return find(name) == nullptr;
}

const std::vector<std::string>& DagInfo::copy_axis_names(const std::string& name) const {
  for (const auto& entry : copy_axes) {
    if (entry.first == name) {
      return entry.second;
    }
  }
  TT_CHECK(false) << "no stage '" << name << "' in the analysed workload";
  static const std::vector<std::string> kNone;
  return kNone;
}

namespace {

/// See StageInfo::is_transform.
bool is_transform(const StageInfo& info) {
  int64_t volume = 1;
  for (const schedule::Axis& r : info.reduce_axes) {
    if (r.extent > kTransformExtent)
      return false;
    volume *= r.extent;
  }
  const te::Operation& op = *info.op;
  std::vector<Read> reads = reads_of(op);
  bool coefficient_axis = false, large = false;
  for (size_t d = 0; d < op.axes.size(); ++d) {
    int64_t extent = op.axes[d].extent;
    large = large || extent > kTransformExtent;
    // A small output axis no tensor read depends on: it only selects coefficients.
    bool read = std::any_of(reads.begin(), reads.end(), [&](const Read& r) {
      return std::any_of(r.vars.begin(), r.vars.end(),
                         [&](const auto& used) { return used.count(op.axes[d].var.get()) != 0; });
    });
    coefficient_axis = coefficient_axis || (extent >= 2 && extent <= kTransformExtent && !read);
  }
  return volume <= kTransformVolume && coefficient_axis && large;
}

}  // namespace

DagInfo analyse(const te::Workload& workload) {
  schedule::LoopState state(workload);
  DagInfo dag;
  for (const schedule::Stage& stage : state.stages()) {
    if (stage.is_placeholder()) {
      dag.copy_axes.emplace_back(stage.name,
                                 placeholder_copy_names(stage.op->output.shape().size()));
      continue;
    }
    StageInfo info;
    info.name = stage.name;
    info.op = stage.op;
    info.is_output = stage.is_output;
    info.is_reduction = stage.op->reduce() != nullptr;
    for (const schedule::Axis& it : stage.root_axes) {
      (it.kind == ir::IterKind::Reduce ? info.reduce_axes : info.data_axes).push_back(it);
    }
    info.consumers = state.consumers(stage.name);
    if (info.is_reduction && !info.data_axes.empty()) {
      analyse_reuse(info, workload);
      // A stage of constants alone (Winograd's weight transform) lowers into the prepare
      // function, run once: the generic rule is enough for it.
      info.constant_only = std::all_of(
          stage.op->inputs.begin(), stage.op->inputs.end(), [&](const te::OperationRef& in) {
            return in->is_placeholder() && workload.is_constant(in->name);
          });
      info.is_transform = !info.constant_only && is_transform(info);
      info.has_reuse = info.has_reuse && !info.is_transform && !info.constant_only;
    }
    std::vector<std::string> names;
    for (const schedule::Axis& it : info.data_axes) {
      names.push_back(it.name);
    }
    dag.copy_axes.emplace_back(stage.name, names);
    dag.stages.push_back(std::move(info));
  }
  return dag;
}

std::vector<std::string> epilogue_chain(const DagInfo& dag, const StageInfo& stage) {
  std::vector<std::string> chain;
  const StageInfo* current = &stage;
  while (!current->is_output) {
    if (current->consumers.size() != 1) {
      return {};
    }
    const StageInfo* next = dag.find(current->consumers[0]);
    if (next == nullptr || next->is_reduction || !reads_elementwise(*next, *current)) {
      return {};
    }
    chain.push_back(next->name);
    current = next;
  }
  return chain;
}

}  // namespace tensortune::search::detail

// SPDX-License-Identifier: Apache-2.0
// The loop-nest builder: checks the attachments, substitutes inlined stages, then emits each root
// stage's nest, placing compute_at stages at the start of their loop over the region inferred
// from the consumer's reads (TVM's schedule_ops + InferBound, Halide's bounds-driven lowering).
#include "tensortune/lower/build_loop_nest.h"

#include "stage_domain.h"
#include "stage_graph.h"
#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/lower/bound_inference.h"
#include "tensortune/support/error.h"

#include <map>
#include <utility>

namespace tensortune::lower {
namespace {

constexpr int64_t kMaxVectorLanes = 64;

/// Where a stage's output really lives when not in its op's buffer: a compute_at region or a
/// root scratch moved to global memory. Reads are redirected and shifted by `offset`.
struct Redirect {
  ir::Buffer buffer;
  std::vector<ir::Expr> offset;
};
using RedirectMap = std::unordered_map<const ir::BufferNode*, Redirect>;

class RedirectLoads : public ir::IRMutator {
 public:
  explicit RedirectLoads(const RedirectMap& map) : map_(map) {}

 protected:
  using ir::IRMutator::visit;

  ir::Expr visit(const ir::Load* op, const ir::Expr& e) override {
    ir::Expr mutated = ir::IRMutator::visit(op, e);
    const auto* load = mutated.as<ir::Load>();
    auto it = map_.find(load->buffer.get());
    if (it == map_.end()) {
      return mutated;
    }
    std::vector<ir::Expr> indices;
    for (size_t d = 0; d < load->indices.size(); ++d) {
      const ir::Expr& offset = it->second.offset[d];
      indices.push_back(ir::is_const_int(offset, 0) ? load->indices[d] : load->indices[d] - offset);
    }
    return ir::Load::make(it->second.buffer, std::move(indices), load->predicate);
  }

 private:
  const RedirectMap& map_;
};

/// Wraps `body` in one IfThenElse on the conjunction of the guards placed at `depth`.
ir::Stmt wrap_guards(const std::vector<Guard>& guards, int depth, ir::Stmt body) {
  ir::Expr cond;
  for (const Guard& g : guards) {
    if (g.depth == depth) {
      cond = cond.defined() ? (cond && g.condition) : g.condition;
    }
  }
  return cond.defined() ? ir::IfThenElse::make(cond, std::move(body)) : body;
}

/// A stage attached at a loop, with the extents and offsets of its region.
/// `shape` with `pad` more elements in its innermost dimension (a padded row pitch).
std::vector<int64_t> padded_rows(std::vector<int64_t> shape, int64_t pad) {
  if (!shape.empty()) {
    shape.back() += pad;
  }
  return shape;
}

struct Placement {
  size_t stage = 0;
  std::vector<int64_t> extents;
  std::vector<ir::Expr> offsets;
  ir::Buffer buffer;
};

class NestBuilder {
 public:
  NestBuilder(const schedule::LoopState& state, LoopOrigins* origins)
      : state_(state), stages_(state.stages()), origins_(origins) {}

  ir::LoweredFunc build(const std::string& name);

 private:
  ir::Stmt emit_stage(size_t s, std::vector<int64_t> extents, std::vector<ir::Expr> offsets);
  void check_leaves(const StageDomain& d) const;
  std::vector<std::vector<Placement>> place_attached(size_t s,
                                                     const StageDomain& d,
                                                     const ir::Expr& body);
  ir::Expr placed_body(const Placement& q, ir::VarRanges* ranges) const;
  ir::Stmt make_loop(const StageDomain& d, size_t k, const ir::Var& var, ir::Stmt body);
  ir::Stmt init_nest(const StageDomain& d, const ir::Buffer& out, ir::ReduceKind reducer);

  const schedule::LoopState& state_;
  const std::vector<schedule::Stage>& stages_;
  LoopOrigins* origins_;
  StageGraph graph_;
  std::vector<bool> emitted_;
  RedirectMap redirect_;
  ir::VarRanges known_;  // every loop variable created so far
};

void NestBuilder::check_leaves(const StageDomain& d) const {
  const schedule::Stage& st = *d.stage;
  for (size_t k = 0; k < st.leaf_axes.size(); ++k) {
    const schedule::Axis& leaf = st.leaf_axes[k];
    if (leaf.annotation != ir::ForKind::Vectorized) {
      continue;
    }
    if (leaf.kind == ir::IterKind::Reduce) {
      throw ScheduleError("vectorize: axis '" + leaf.name + "' of stage '" + st.name +
                          "' is a reduction axis");
    }
    if (d.leaf_extents[k] > kMaxVectorLanes) {
      throw ScheduleError("vectorize: extent " + std::to_string(d.leaf_extents[k]) + " of axis '" +
                          leaf.name + "' exceeds " + std::to_string(kMaxVectorLanes) +
                          " lanes (stage '" + st.name + "')");
    }
  }
}

/// Infers the region of every stage attached at a loop of stage `s` (whose body, in leaf
/// variables, is `body`) and redirects reads of it to a buffer of that region's shape. A stage
/// attached at loop k may also be read by a stage attached at the same loop or a deeper one of
/// `s` (Winograd's data transform per tile of the batched GEMM, read by the GEMM's local
/// accumulator computed inside that tile): its region then also covers that reader's region,
/// so the loops are visited innermost first.
std::vector<std::vector<Placement>> NestBuilder::place_attached(size_t s,
                                                                const StageDomain& d,
                                                                const ir::Expr& body) {
  const schedule::Stage& st = stages_[s];
  std::vector<std::vector<Placement>> placed(st.leaf_axes.size());
  for (size_t k = st.leaf_axes.size(); k-- > 0;) {
    auto it = graph_.attached.find({s, st.leaf_axes[k].name});
    if (it == graph_.attached.end()) {
      continue;
    }
    ir::VarRanges relaxed;
    for (size_t inner = k + 1; inner < d.leaf_vars.size(); ++inner) {
      relaxed[d.leaf_vars[inner].get()] = ir::ConstBound{0, d.leaf_extents[inner] - 1};
    }
    std::vector<Placement> here;
    for (size_t n = it->second.size(); n-- > 0;) {
      const size_t p = it->second[n];
      const schedule::Stage& producer = stages_[p];
      const ir::Buffer& original = producer.op->output;
      std::vector<ir::Expr> readers{body};
      ir::VarRanges ranges = relaxed;
      for (size_t inner = k; inner < placed.size(); ++inner) {
        for (const Placement& q : inner == k ? here : placed[inner]) {
          readers.push_back(placed_body(q, &ranges));
        }
      }
      Region region = infer_region(original, readers, ranges, known_);
      if (region.unbounded_dim >= 0) {
        throw ScheduleError("compute_at: the region of stage '" + producer.name +
                            "' read inside axis '" + st.leaf_axes[k].name + "' of stage '" +
                            st.name + "' is unbounded in dimension " +
                            std::to_string(region.unbounded_dim));
      }
      if (!region.read) {
        throw ScheduleError("compute_at: stage '" + producer.name + "' is computed at axis '" +
                            st.leaf_axes[k].name + "' of stage '" + st.name +
                            "', where nothing reads it");
      }
      Placement placement;
      placement.stage = p;
      placement.extents = region.extent;
      placement.offsets = region.min;
      for (const ir::IterVar& r : producer.op->reduce_axes()) {
        placement.extents.push_back(r.extent);
        placement.offsets.push_back(ir::IntImm::make(ir::DataType::index(), 0));
      }
      placement.buffer = ir::Buffer(original.name(), original.dtype(),
                                    padded_rows(region.extent, producer.row_pad), original.scope(),
                                    producer.stages);
      redirect_[original.get()] = Redirect{placement.buffer, region.min};
      here.push_back(std::move(placement));
    }
    placed[k].assign(std::make_move_iterator(here.rbegin()), std::make_move_iterator(here.rend()));
  }
  return placed;
}

/// The body of the stage placed by `q` over its region: each root axis is the region's offset
/// plus a fresh variable spanning its extent (added to `ranges`).
ir::Expr NestBuilder::placed_body(const Placement& q, ir::VarRanges* ranges) const {
  const std::vector<ir::Var> roots = root_axis_vars(stages_[q.stage]);
  ir::VarMap map;
  for (size_t r = 0; r < roots.size(); ++r) {
    ir::Var local(roots[r].name() + ".region");
    (*ranges)[local.get()] = ir::ConstBound{0, q.extents[r] - 1};
    map[roots[r].get()] = q.offsets[r] + local;
  }
  return ir::substitute(graph_.bodies[q.stage], map);
}

ir::Stmt NestBuilder::make_loop(const StageDomain& d, size_t k, const ir::Var& var, ir::Stmt body) {
  const schedule::Axis& leaf = d.stage->leaf_axes[k];
  if (origins_ != nullptr) {
    (*origins_)[var.get()] = LoopOrigin{d.stage->name, leaf.name};
  }
  return ir::For::make(var, ir::IntImm::make(ir::DataType::index(), 0),
                       ir::IntImm::make(ir::DataType::index(), d.leaf_extents[k]), leaf.annotation,
                       std::move(body), leaf.auto_unroll_max_step);
}

/// out[idx] = identity over the data-parallel loops inside the first reduction loop, with fresh
/// variables and the data-parallel guards that fall inside it.
ir::Stmt NestBuilder::init_nest(const StageDomain& d,
                                const ir::Buffer& out,
                                ir::ReduceKind reducer) {
  const size_t r = d.first_reduce_leaf;
  ir::VarMap fresh;
  std::vector<size_t> loops;
  for (size_t k = r; k < d.leaf_vars.size(); ++k) {
    if (d.stage->leaf_axes[k].kind == ir::IterKind::DataPar) {
      ir::Var v(d.leaf_vars[k].name() + ".init");
      fresh[d.leaf_vars[k].get()] = v;
      known_[v.get()] = ir::ConstBound{0, d.leaf_extents[k] - 1};
      loops.push_back(k);
    }
  }
  std::vector<ir::Expr> indices;
  for (size_t a = 0; a < d.num_data_par; ++a) {
    indices.push_back(ir::substitute(d.root_local[a], fresh));
  }
  std::vector<Guard> guards;
  for (const Guard& g : d.guards) {
    if (!g.on_reduce_axis && g.depth >= static_cast<int>(r)) {
      guards.push_back(Guard{ir::substitute(g.condition, fresh), g.depth, false});
    }
  }
  ir::Stmt stmt =
      ir::Store::make(out, ir::reduce_identity(reducer, out.dtype()), std::move(indices));
  for (size_t n = loops.size(); n-- > 0;) {
    size_t k = loops[n];
    stmt = wrap_guards(guards, static_cast<int>(k), std::move(stmt));
    stmt = make_loop(d, k, ir::Var::from(fresh.at(d.leaf_vars[k].get())), std::move(stmt));
  }
  return stmt;
}

ir::Stmt NestBuilder::emit_stage(size_t s,
                                 std::vector<int64_t> extents,
                                 std::vector<ir::Expr> offsets) {
  const schedule::Stage& st = stages_[s];
  TT_CHECK(!emitted_[s]) << "lowering: stage '" << st.name << "' emitted twice";
  emitted_[s] = true;
  StageDomain d =
      make_stage_domain(st, std::move(extents), std::move(offsets), full_root_extents(st), known_);
  check_leaves(d);
  for (const auto& [var, range] : d.leaf_ranges()) {
    known_[var] = range;
  }
  ir::VarMap roots;
  std::vector<ir::Var> root_vars = root_axis_vars(st);
  for (size_t r = 0; r < root_vars.size(); ++r) {
    roots[root_vars[r].get()] = d.root_value(r);
  }
  ir::Expr body = ir::substitute(graph_.bodies[s], roots);
  std::vector<std::vector<Placement>> placed = place_attached(s, d, body);
  body = RedirectLoads(redirect_).mutate(body);

  auto redirected = redirect_.find(st.op->output.get());
  const ir::Buffer out = redirected == redirect_.end() ? st.op->output : redirected->second.buffer;
  std::vector<ir::Expr> indices(d.root_local.begin(),
                                d.root_local.begin() + static_cast<std::ptrdiff_t>(d.num_data_par));
  ir::Stmt stmt;
  ir::Stmt init;
  if (const auto* reduce = body.as<ir::Reduce>()) {
    ir::Expr acc = ir::Load::make(out, indices);
    stmt = ir::Store::make(out, ir::reduce_combine(reduce->reducer, acc, reduce->source), indices);
    init = init_nest(d, out, reduce->reducer);
  } else {
    stmt = ir::Store::make(out, body, indices);
  }
  for (size_t k = d.leaf_vars.size(); k-- > 0;) {
    for (size_t n = placed[k].size(); n-- > 0;) {
      Placement& p = placed[k][n];
      ir::Stmt nest = emit_stage(p.stage, std::move(p.extents), std::move(p.offsets));
      stmt = ir::Allocate::make(p.buffer, ir::Seq::make({nest, stmt}));
    }
    stmt = wrap_guards(d.guards, static_cast<int>(k), std::move(stmt));
    stmt = make_loop(d, k, d.leaf_vars[k], std::move(stmt));
    if (init.defined() && k == d.first_reduce_leaf) {
      stmt = ir::Seq::make({init, stmt});
    }
  }
  return wrap_guards(d.guards, -1, std::move(stmt));
}

ir::LoweredFunc NestBuilder::build(const std::string& name) {
  graph_ = analyze_stages(state_);
  emitted_.assign(stages_.size(), false);
  ir::LoweredFunc f;
  f.name = name;
  for (const te::Tensor& t : state_.workload().inputs()) {
    f.params.push_back(t.buffer());
  }
  f.num_inputs = f.params.size();
  for (const te::Tensor& t : state_.workload().outputs()) {
    f.params.push_back(t.buffer());
  }
  std::vector<ir::Buffer> scratch;
  for (const schedule::Stage& st : stages_) {
    if (st.is_placeholder() || st.is_output || st.attach != schedule::AttachKind::Root) {
      continue;
    }
    const ir::Buffer& b = st.op->output;
    if (b.scope() == ir::MemoryScope::Global && st.row_pad == 0) {
      scratch.push_back(b);
      continue;
    }
    scratch.emplace_back(b.name(), b.dtype(), padded_rows(b.shape(), st.row_pad),
                         ir::MemoryScope::Global);
    std::vector<ir::Expr> zeros(b.shape().size(), ir::IntImm::make(ir::DataType::index(), 0));
    redirect_[b.get()] = Redirect{scratch.back(), zeros};
  }
  std::vector<ir::Stmt> nests;
  for (size_t s = 0; s < stages_.size(); ++s) {
    const schedule::Stage& st = stages_[s];
    if (st.is_placeholder() || st.attach != schedule::AttachKind::Root) {
      continue;
    }
    std::vector<ir::Expr> zeros(st.root_axes.size(), ir::IntImm::make(ir::DataType::index(), 0));
    nests.push_back(emit_stage(s, full_root_extents(st), zeros));
  }
  for (size_t s = 0; s < stages_.size(); ++s) {
    const schedule::Stage& st = stages_[s];
    if (!emitted_[s] && st.attach == schedule::AttachKind::At) {
      throw ScheduleError("compute_at: stage '" + st.name + "' is attached at axis '" +
                          st.attach_axis + "' of stage '" + st.attach_stage +
                          "', which is never computed (an attachment cycle)");
    }
  }
  TT_CHECK(!nests.empty()) << "lowering: workload '" << name << "' computes nothing";
  f.body = ir::Seq::make(std::move(nests));
  for (size_t n = scratch.size(); n-- > 0;) {
    f.body = ir::Allocate::make(scratch[n], f.body);
  }
  return f;
}

}  // namespace

ir::LoweredFunc build_loop_nest(const schedule::LoopState& state,
                                const std::string& name,
                                LoopOrigins* origins) {
  NestBuilder builder(state, origins);
  return builder.build(name);
}

}  // namespace tensortune::lower

// SPDX-License-Identifier: Apache-2.0
// Multi-level tiling of a stage with data reuse, Ansor's CPU structure "S S R S R S" (OSDI'20,
// section 4.1, rules 3-5): every data-parallel axis split into 4 levels, every reduction axis
// into 2, ordered S0 S1 R0 S2 R1 S3; parallel outer tiles, vectorized innermost tile, auto-unroll.
// Variants: a local accumulator (cache_write) or the element-wise epilogue (bias, relu, gelu)
// as the outer stage keeping levels 0 .. L-1, the reduction computed at its level L-1 tile; and
// packing of an input panel (cache_read, like the hand-written matmul kernels' packed B; a constant
// input may be packed once, at the root, in panels [N/v, K, v] that lowering moves to the prepare
// function); and a vectorized axis other than the last, with the inputs that read it copied in a
// layout blocked by the vector length (conv over NCHW vectorized over output channels, OIHW16o).
#include "search/sketch/rules.h"
#include "search/sketch/split_factors.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <map>

namespace tensortune::search::detail {

std::vector<std::string> level_names(const std::string& axis, size_t num_inner) {
  std::vector<std::string> names;
  std::string prefix = axis;
  for (size_t k = 0; k < num_inner; ++k) {
    names.push_back(prefix + ".o");
    prefix += ".i";
  }
  names.push_back(prefix);
  return names;
}

void emit_split_chain(const std::string& stage,
                      const std::string& axis,
                      const std::vector<int64_t>& inner,
                      Steps& out) {
  std::string prefix = axis;
  for (size_t k = 0; k < inner.size(); ++k) {
    int64_t factor = 1;
    for (size_t r = k; r < inner.size(); ++r) {
      factor *= inner[r];
    }
    out.emplace_back(schedule::Split{stage, prefix, factor, false});
    prefix += ".i";
  }
}

std::vector<std::string> axis_names(const std::vector<schedule::Axis>& axes) {
  std::vector<std::string> names;
  for (const schedule::Axis& it : axes) {
    names.push_back(it.name);
  }
  return names;
}

std::string emit_fuse(const std::string& stage, const std::vector<std::string>& axes, Steps& out) {
  if (axes.size() > 1) {
    out.emplace_back(schedule::Fuse{stage, axes});
  }
  return schedule::fused_axis_name(axes);
}

namespace {

/// The prior of a tile whose vector lanes are gathers, relative to one whose lanes are loads.
constexpr double kGatherPrior = 0.25;
/// Bytes of a cache line.
constexpr int64_t kLineBytes = 64;

int64_t product(const std::vector<int64_t>& f, size_t from) {
  int64_t p = 1;
  for (size_t k = from; k < f.size(); ++k) {
    p *= f[k];
  }
  return p;
}

/// The splits whose innermost factor is a multiple of `lanes` (a vector axis with blocked inputs).
std::vector<std::vector<int64_t>> whole_vectors(const std::vector<std::vector<int64_t>>& choices,
                                                int64_t lanes) {
  std::vector<std::vector<int64_t>> kept;
  for (const std::vector<int64_t>& c : choices) {
    if (c.back() % lanes == 0) {
      kept.push_back(c);
    }
  }
  return kept;
}

/// The splits of the vectorized axis whose innermost factor (the vector length) is a power of two
/// or a multiple of 16: LLVM legalizes other widths (28, 56 lanes) into slow code.
std::vector<std::vector<int64_t>> vector_friendly(
    const std::vector<std::vector<int64_t>>& choices) {
  std::vector<std::vector<int64_t>> kept;
  for (const std::vector<int64_t>& c : choices) {
    int64_t v = c.back();
    if ((v & (v - 1)) == 0 || v % 16 == 0) {
      kept.push_back(c);
    }
  }
  return kept;
}

class TilePlan final : public StagePlan {
 public:
  TilePlan(const TileSpec& spec, const DagInfo& dag, KnobTable& knobs)
      : c_(spec.stage->name), variant_(spec.variant), level_(spec.level), cpu_(spec.cpu) {
    const StageInfo& c = *spec.stage;
    data_ = axis_names(c.data_axes);
    find_axes_read(*c.op);
    for (const schedule::Axis& it : c.reduce_axes) {
      reduce_.push_back(it.name);
    }
    x_ = variant_ == TileVariant::CacheWrite ? c_ + ".local" : c_;
    if (variant_ == TileVariant::CacheWrite) {
      outer_ = {c_, data_};
    } else if (variant_ == TileVariant::Fused) {
      TT_CHECK(!spec.chain.empty()) << "fused tiling of '" << c_ << "' without an epilogue";
      for (const StageInfo* e : spec.chain) {
        middle_.emplace_back(e->name, axis_names(e->data_axes));
      }
      outer_ = middle_.back();
      middle_.pop_back();
    }
    vec_ = spec.vector_axis ? spec.vector_axis->axis : c.data_axes.size() - 1;
    gathers_ = !spec.vector_axis && c.last_axis_strided;
    if (spec.vector_axis) {
      blocks_ = spec.vector_axis->blocks;
    }
    for (size_t d = 0; d < c.data_axes.size(); ++d) {
      const schedule::Axis& it = c.data_axes[d];
      std::vector<std::vector<int64_t>> choices;
      if (d == vec_ && spec.vector_axis) {
        choices = whole_vectors(split_choices(it.extent, 3, kMaxInnermostFactor, spec.cpu.lanes),
                                spec.cpu.lanes);
      } else {
        choices = split_choices(it.extent, 3);
        if (d == vec_)
          choices = vector_friendly(choices);
      }
      int64_t widest = 1;
      for (const std::vector<int64_t>& choice : choices) {
        widest = std::max(widest, choice.back());
      }
      widest_.push_back(widest);
      extents_.push_back(it.extent);
      data_split_.push_back(
          knobs.add(c_ + "." + it.name + ".split", KnobKind::Split, std::move(choices)));
    }
    for (const schedule::Axis& it : c.reduce_axes) {
      reduce_split_.push_back(knobs.add(c_ + "." + it.name + ".split", KnobKind::Split,
                                        split_choices(it.extent, 1, kMaxReductionFactor)));
    }
    // Order 1 puts the last axis's tiles outermost, so a parallel loop splits every row among the
    // threads. Where a row is not a whole number of cache lines, the threads then write the same
    // lines row after row: a depthwise conv over 28-wide rows ran 6x slower on 2 threads than on
    // one (MobileNet v2, Zen 5). Only line-aligned rows get that order.
    const int64_t row_bytes = c.data_axes.back().extent * c.op->output.dtype().bytes();
    const bool last_first = data_.size() >= 2 && row_bytes % kLineBytes == 0;
    order_ = knobs.add_values(c_ + ".order", KnobKind::Reorder,
                              last_first ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0});
    std::vector<int64_t> counts;
    for (size_t p = 0; p <= data_.size(); ++p) {
      counts.push_back(static_cast<int64_t>(p));
    }
    parallel_ = knobs.add_values(c_ + ".parallel", KnobKind::Parallel, counts);
    unroll_ = knobs.add_values(c_ + ".unroll", KnobKind::Unroll, unroll_choices());
    size_t candidates = attached() ? 1 : data_.size() + 1;
    for (const std::string& input : spec.packs) {
      std::vector<int64_t> at;
      for (size_t k = 0; k <= candidates; ++k) {
        at.push_back(static_cast<int64_t>(k));
      }
      Pack pack{input, input + ".local", dag.copy_axis_names(input), {}};
      const std::vector<std::string>& panels = c.panel_packable;
      if (std::find(panels.begin(), panels.end(), input) != panels.end()) {
        pack.root_panels = static_cast<int64_t>(candidates) + 1;
        at.push_back(pack.root_panels);
      }
      pack.at = knobs.add_values(pack.stage + ".at", KnobKind::ComputeLocation, at);
      packs_.push_back(std::move(pack));
    }
  }

  void emit(Phase phase, const Values& v, Steps& out) const override {
    if (phase == Phase::CacheWrite && variant_ == TileVariant::CacheWrite) {
      std::vector<schedule::LayoutBlock> blocks;
      if (vec_ + 1 != data_.size()) {  // the accumulator keeps the vector axis innermost
        // Padded like the blocked inputs when the vector does not divide the axis (1000 output
        // channels in 63 blocks of 16).
        blocks.push_back({static_cast<int64_t>(vec_), vector_length(v), false, vector_padded(v)});
      }
      out.emplace_back(schedule::CacheWrite{c_, ir::MemoryScope::Local, blocks});
    }
    for (const Pack& pack : packs_) {
      const int64_t at = pack.at.one(v);
      if (phase != Phase::CacheRead || at == 0) {
        continue;
      }
      if (at != pack.root_panels) {
        out.emplace_back(schedule::CacheRead{pack.input, ir::MemoryScope::Local, {x_}});
      } else {
        // Panels as wide as the register tile's last axis, copied once (prepare): [N/v, K, v].
        // When v does not divide N (a guarded last tile), the last panel is padded with zeros:
        // every panel row still starts on a vector, where B's own rows (N = 513) do not.
        const auto dim = static_cast<int64_t>(pack.axes.size()) - 1;
        const int64_t width = last_length(v);
        out.emplace_back(schedule::CacheRead{pack.input,
                                             ir::MemoryScope::Local,
                                             {x_},
                                             {{dim, width, true, extents_.back() % width != 0}}});
      }
    }
    for (const auto& [input, dim] : blocks_) {  // computed once per call, at the root
      if (phase == Phase::CacheRead) {
        // Padded when the vector does not divide the axis (a dense layer of 1000 outputs in
        // blocks of 16): the last block's lanes past the weight are zeros no tile stores.
        const int64_t width = vector_length(v);
        out.emplace_back(schedule::CacheRead{
            input, ir::MemoryScope::Local, {x_}, {{dim, width, false, vector_padded(v)}}});
      }
    }
    if (phase != Phase::Loops) {
      return;
    }
    if (attached()) {
      emit_outer(v, out);
      std::string target = outer_.first;
      std::string axis = level_names(outer_.second.back(), 3)[static_cast<size_t>(level_ - 1)];
      for (size_t k = middle_.size(); k-- > 0;) {
        emit_middle(v, middle_[k], target, axis, out);
        target = middle_[k].first;
        axis = middle_[k].second[0] + ".o";
      }
      out.emplace_back(schedule::ComputeAt{x_, target, axis});
    }
    emit_inner(v, out);
    for (const Pack& pack : packs_) {
      emit_pack(v, pack, out);
    }
  }

  int num_attach_points() const override { return 2; }
  std::string attach_stage() const override { return x_; }
  /// The S0 loops of the root stage (X, or the outer stage X is computed in), in the order knob's
  /// order: a transform producer computed at S0 position k is computed once per tile of the first
  /// k loops (recomputed across the axes it does not read only when they come before), and X,
  /// computed deeper in the same tile, reads it there. Not with middle epilogue stages, where X
  /// is computed inside a stage that is itself computed in the outer one.
  int num_tile_loops() const override {
    return middle_.empty() ? static_cast<int>(data_.size()) : 0;
  }
  std::string tile_stage() const override { return attached() ? outer_.first : x_; }
  std::string tile_loop(const Values& v, int position) const override {
    return s0_loop(v, position);
  }
  TileLoopCost tile_loop_cost(const Values& v,
                              int position,
                              const std::string& producer) const override {
    TileLoopCost cost;
    auto read = axes_read_.find(producer);
    if (read == axes_read_.end()) {
      return cost;
    }
    const size_t n = data_.size();
    const int64_t p = parallel_.one(v);
    // At a loop fused into the parallel loop, the producer is inside all of the fused ones.
    const auto last = static_cast<size_t>(p >= 2 && position <= p ? p : position);
    for (size_t k = 0; k < last && k < n; ++k) {
      const size_t d = order_.one(v) == 0 ? k : (k + n - 1) % n;
      const int64_t tile = product(factors(v, d), 0);
      const int64_t iterations = (extents_[d] + tile - 1) / tile;
      if (read->second[d]) {
        cost.parts *= iterations;
      }
      // A transform computes its small axes in one unrolled nest that shares the reads of its
      // inputs among them: inside a loop over tiles of one (Winograd's eps), it and its own
      // producers read their inputs again for every tile.
      if (!read->second[d] || extents_[d] <= kTransformExtent) {
        cost.recompute *= iterations;
      }
    }
    return cost;
  }

  /// The register tile is the innermost level of every data axis (S3): its vectors are the
  /// accumulators, its loops other than the vector must fit the unroll budget, and a partial last
  /// tile along an axis wastes the points past its edge.
  double prior(const Values& v) const override {
    const int64_t lanes = std::max<int64_t>(1, cpu_.lanes);
    const int64_t length = vector_length(v);
    int64_t body = 1;
    int64_t most = (widest_[vec_] + lanes - 1) / lanes;
    double tails = 1.0;
    for (size_t d = 0; d < data_.size(); ++d) {
      tails *= tail_prior(extents_[d], factors(v, d)[2]);
      if (d != vec_) {
        body *= factors(v, d)[2];
        most *= widest_[d];
      }
    }
    const int64_t width = (length + lanes - 1) / lanes;  // vectors along the vectorized axis
    const int64_t vectors = width * body;
    // Vector lanes over an axis an input reads at a stride are gathers (a stride-2 conv's x):
    // the first conv of MobileNet v2 ran at 34 GFLOP/s so, with vec(f) sketches on offer.
    const double gather = gathers_ && length > 1 ? kGatherPrior : 1.0;
    return gather * vector_prior(length, std::min(lanes, widest_[vec_])) *
           register_tile_prior(vectors, cpu_.registers, most) *
           tile_loads_prior(vectors, tile_loads(v, width)) * unroll_prior(unroll_.one(v), body) *
           parallel_prior(parallel_extent(v), cpu_.cores) * tails;
  }
  std::string attach_axis(const Values& v, int level) const override {
    if (!attached()) {
      if (level == 1) {
        return s0_loop(v, static_cast<int64_t>(data_.size()));
      }
      return level_names(data_.back(), 3)[1];
    }
    if (level == 1 || level_ == 3) {
      return reduce_.back() + (level == 1 ? ".o" : ".i");
    }
    return level_names(data_.back(), 1)[0];
  }

 private:
  struct Pack {
    std::string input, stage;
    std::vector<std::string> axes;
    KnobSlot at;
    /// The `at` value that copies a constant input at the root into panels (-1: not offered).
    int64_t root_panels = -1;
  };
  using NamedAxes = std::pair<std::string, std::vector<std::string>>;

  bool attached() const { return variant_ != TileVariant::Plain; }

  /// Which data axes of the stage each of its inputs' reads use (axes_read_).
  void find_axes_read(const te::Operation& op) {
    for (const te::OperationRef& input : op.inputs) {
      std::vector<bool>& used = axes_read_[input->name];
      used.assign(op.axes.size(), false);
      ir::post_order_visit(op.body, [&](const ir::Expr& e) {
        const auto* load = e.as<ir::Load>();
        if (load == nullptr || !load->buffer.same_as(input->output)) {
          return;
        }
        for (const ir::Expr& index : load->indices) {
          ir::post_order_visit(index, [&](const ir::Expr& x) {
            for (size_t d = 0; d < op.axes.size(); ++d) {
              used[d] = used[d] || x.same_as(op.axes[d].var);
            }
          });
        }
      });
    }
  }
  const std::vector<int64_t>& factors(const Values& v, size_t d) const {
    return data_split_[d].of(v);
  }
  /// Loads of one reduction step of the register tile from the inputs it reuses (those reading
  /// some data axes but not all): one per point of the tile's axes the input reads, one per
  /// vector (`width` of them) of the vectorized axis. A 4x2-vector matmul tile loads 4 broadcasts
  /// of A and 2 vectors of B for its 8 FMAs. An input read at every data axis (depthwise conv's
  /// data) loads one value per FMA whatever the tile; 0 when no input is reused.
  int64_t tile_loads(const Values& v, int64_t width) const {
    int64_t loads = 0;
    for (const auto& [input, used] : axes_read_) {
      const auto n = std::count(used.begin(), used.end(), true);
      if (n == 0 || n == static_cast<std::ptrdiff_t>(used.size())) {
        continue;
      }
      int64_t points = 1;
      for (size_t d = 0; d < used.size() && d < data_.size(); ++d) {
        if (used[d]) {
          points *= d == vec_ ? width : factors(v, d)[2];
        }
      }
      loads += points;
    }
    return loads;
  }
  /// The innermost factor of the vectorized axis (of the inner stage X).
  int64_t vector_length(const Values& v) const { return factors(v, vec_)[2]; }
  /// Whether the vector leaves a partial last block of its axis (blocked copies pad it).
  bool vector_padded(const Values& v) const { return extents_[vec_] % vector_length(v) != 0; }
  /// The innermost factor of the last axis, vectorized in the outer, epilogue and packing stages.
  int64_t last_length(const Values& v) const { return factors(v, data_.size() - 1)[2]; }

  /// Iterations of the parallel loop: the first `parallel` level-0 loops in the knob's order.
  int64_t parallel_extent(const Values& v) const {
    const size_t n = data_.size();
    int64_t extent = 1;
    for (size_t k = 0; k < static_cast<size_t>(parallel_.one(v)) && k < n; ++k) {
      const size_t d = order_.one(v) == 0 ? k : (k + n - 1) % n;
      const int64_t tile = product(factors(v, d), 0);
      extent *= (extents_[d] + tile - 1) / tile;
    }
    return extent;
  }

  /// The root stage's (X or the outer stage's) level-0 loops in the order the knob picks.
  std::vector<std::string> s0_loops(const Values& v, const std::vector<std::string>& axes) const {
    std::vector<std::string> loops;
    size_t n = axes.size();
    for (size_t k = 0; k < n; ++k) {
      size_t d = order_.one(v) == 0 ? k : (k + n - 1) % n;
      loops.push_back(axes[d] + ".o");
    }
    return loops;
  }
  /// The loop at position `pos` (1-based) of the root stage's S0 loops, or the fused parallel
  /// loop containing it.
  std::string s0_loop(const Values& v, int64_t pos) const {
    std::vector<std::string> loops = s0_loops(v, attached() ? outer_.second : data_);
    int64_t p = parallel_.one(v);
    return p >= 2 && pos <= p ? fused_loop(loops, p) : loops[static_cast<size_t>(pos - 1)];
  }

  /// Fuse + parallel of the first S0 loops, then the unroll pragma on the outermost loop.
  void emit_root_annotations(const Values& v,
                             const std::string& stage,
                             const std::vector<std::string>& axes,
                             Steps& out) const {
    std::vector<std::string> loops = s0_loops(v, axes);
    int64_t p = parallel_.one(v);
    emit_parallel(stage, loops, p, out);
    std::string first = fused_loop(loops, p);
    if (unroll_.one(v) > 0) {
      out.emplace_back(schedule::PragmaUnroll{stage, first, unroll_.one(v)});
    }
  }

  /// The outer stage: levels 0 .. L-1 of each axis, then the rest of the tile (the last axis
  /// keeps all four levels so its innermost level is the vector).
  void emit_outer(const Values& v, Steps& out) const {
    const auto& [stage, axes] = outer_;
    size_t n = axes.size();
    auto l = static_cast<size_t>(level_);
    std::vector<std::vector<std::string>> names(n);
    for (size_t d = 0; d < n; ++d) {
      const std::vector<int64_t>& f = factors(v, d);
      std::vector<int64_t> inner(f.begin(), f.end());
      if (d + 1 < n) {
        inner.resize(l - 1);
        inner.push_back(product(f, l - 1));
      }
      emit_split_chain(stage, axes[d], inner, out);
      names[d] = level_names(axes[d], inner.size());
    }
    std::vector<std::string> order = s0_loops(v, axes);
    for (size_t level = 1; level <= 3; ++level) {
      for (size_t d = 0; d < n; ++d) {
        if (level < l || (level >= l && d + 1 == n) || (level == l && d + 1 < n)) {
          order.push_back(names[d][level]);
        }
      }
    }
    out.emplace_back(schedule::Reorder{stage, order});
    if (last_length(v) > 1) {
      out.emplace_back(schedule::Annotate{stage, names[n - 1][3], ir::ForKind::Vectorized});
    }
    emit_root_annotations(v, stage, axes, out);
  }

  /// A middle epilogue stage: computed at `target`'s `axis` for the whole tile (its first axis
  /// split by the tile extent so producers can attach outside its loops), last axis vectorized.
  void emit_middle(const Values& v,
                   const NamedAxes& e,
                   const std::string& target,
                   const std::string& axis,
                   Steps& out) const {
    const auto& [stage, axes] = e;
    out.emplace_back(schedule::ComputeAt{stage, target, axis});
    out.emplace_back(schedule::Split{stage, axes[0], product(factors(v, 0), level_ - 1), false});
    std::string last = axes.size() == 1 ? axes[0] + ".i" : axes.back();
    if (last_length(v) > 1) {
      out.emplace_back(schedule::Split{stage, last, last_length(v), false});
      out.emplace_back(schedule::Annotate{stage, last + ".i", ir::ForKind::Vectorized});
    }
  }

  /// The reduction stage X: all levels at the root, or levels L .. 3 inside the outer stage.
  void emit_inner(const Values& v, Steps& out) const {
    size_t first = attached() ? static_cast<size_t>(level_) : 0;
    size_t n = data_.size();
    std::vector<std::vector<std::string>> names(n);  // index: level - first
    for (size_t d = 0; d < n; ++d) {
      const std::vector<int64_t>& f = factors(v, d);
      std::vector<int64_t> inner(f.begin() + static_cast<std::ptrdiff_t>(first), f.end());
      if (d == vec_ && d + 1 != n) {  // blocked by the cache_write: the block is the last level
        if (!inner.empty()) {
          inner.pop_back();
        }
        emit_split_chain(x_, data_[d], inner, out);
        names[d] = level_names(data_[d], inner.size());
        names[d].push_back(data_[d] + ".b");
        continue;
      }
      emit_split_chain(x_, data_[d], inner, out);
      names[d] = level_names(data_[d], inner.size());
    }
    for (size_t r = 0; r < reduce_.size(); ++r) {
      emit_split_chain(x_, reduce_[r], reduce_split_[r].of(v), out);
    }
    std::vector<std::string> order = attached() ? std::vector<std::string>{} : s0_loops(v, data_);
    auto add_level = [&](size_t level) {
      for (size_t d = 0; level >= first && d < n; ++d) {
        order.push_back(names[d][level - first]);
      }
    };
    auto add_reduce = [&](const char* suffix) {
      for (const std::string& r : reduce_) {
        order.push_back(r + suffix);
      }
    };
    add_level(1);
    add_reduce(".o");
    add_level(2);
    add_reduce(".i");
    for (size_t d = 0; d < n; ++d) {  // level 3, the vectorized axis innermost
      if (d != vec_) {
        order.push_back(names[d].back());
      }
    }
    order.push_back(names[vec_].back());
    out.emplace_back(schedule::Reorder{x_, order});
    if (vector_length(v) > 1) {
      out.emplace_back(schedule::Annotate{x_, names[vec_].back(), ir::ForKind::Vectorized});
    }
    if (!attached()) {
      emit_root_annotations(v, x_, data_, out);
    }
  }

  void emit_pack(const Values& v, const Pack& pack, Steps& out) const {
    int64_t at = pack.at.one(v);
    if (at == 0 || at == pack.root_panels) {  // none, or at the root (the prepare function)
      return;
    }
    auto n = static_cast<int64_t>(data_.size());
    std::string axis = attached() || at > n ? reduce_.back() + ".o" : s0_loop(v, at);
    out.emplace_back(schedule::ComputeAt{pack.stage, x_, axis});
    if (last_length(v) > 1) {
      out.emplace_back(schedule::Split{pack.stage, pack.axes.back(), last_length(v), false});
      out.emplace_back(
          schedule::Annotate{pack.stage, pack.axes.back() + ".i", ir::ForKind::Vectorized});
    }
  }

  std::string c_, x_;
  TileVariant variant_;
  int level_;
  CpuShape cpu_;
  std::vector<std::string> data_, reduce_;
  /// Per data axis: its extent, and its widest innermost factor among the split choices.
  std::vector<int64_t> extents_, widest_;
  NamedAxes outer_;
  std::vector<NamedAxes> middle_;  // E1 .. E(n-1)
  std::vector<KnobSlot> data_split_, reduce_split_;
  KnobSlot order_, parallel_, unroll_;
  std::vector<Pack> packs_;
  /// Per input of the stage: whether its reads use each data axis.
  std::map<std::string, std::vector<bool>> axes_read_;
  size_t vec_ = 0;        // the vectorized data axis of X
  bool gathers_ = false;  // vectors of vec_ read some input at a stride (StageInfo)
  std::vector<std::pair<std::string, int64_t>>
      blocks_;  // (input, dim) copied blocked by the vector
};

}  // namespace

PlanRef make_tile_plan(const TileSpec& spec, const DagInfo& dag, KnobTable& knobs) {
  return std::make_shared<TilePlan>(spec, dag, knobs);
}

}  // namespace tensortune::search::detail

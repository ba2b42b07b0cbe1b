// SPDX-License-Identifier: Apache-2.0
// The GPU shared-memory tiling plan ("gpu-tile+shared", "+vthread"): blocks, threads and
// per-thread accumulator tiles, every input staged through shared memory at each outer
// reduction step, optionally blocked so that a thread's elements are contiguous there.
#include "search/sketch/rules.h"
#include "search/sketch/split_factors.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace tensortune::search::detail {
namespace {

/// The thread indices, innermost first: the last data axes of a tiled stage bind to them.
constexpr ir::ForKind kThreadKinds[] = {ir::ForKind::ThreadX, ir::ForKind::ThreadY,
                                        ir::ForKind::ThreadZ};
/// Largest per-thread tile of one axis.
constexpr int64_t kMaxPerThread = 16;
/// Largest reduction step staged through shared memory per axis.
constexpr int64_t kMaxSharedReduction = 32;

int64_t thread_limit(ir::ForKind kind) {
  return kind == ir::ForKind::ThreadZ ? 64 : 1024;
}

/// Shared-memory tiling (Ansor's GPU "S S S R R S R S" reduced to S S S R S R S): the output
/// stage C is split per data axis into blocks, threads and a per-thread tile; its accumulator
/// C.local is computed per block (at the fused block loop) over the same threads, with the
/// reduction split in two; every input C reads is copied into shared memory at C.local's outer
/// reduction loop by all threads of the block (the fused copy loop split over the same thread
/// indices, its innermost piece optionally vectorized). The accumulator's layout is blocked so
/// that each thread's elements are dense (the CUDA generator then keeps them in registers).
///
/// Without virtual threads, a thread owns a contiguous sub-tile (axis = thread * P + p); with
/// them the sub-tiles interleave (axis = v * T + thread), so neighbouring threads touch
/// neighbouring elements: coalesced global stores and conflict-free shared reads.
///
/// With an element-wise epilogue (C -> E1 -> ... -> En, the output: bias, relu, gelu), the
/// epilogue is fused: C becomes a copy of C.local and is inlined, E1..En-1 are inlined by their
/// own plans, and En takes C's place as the tiled outer stage, so the kernel writes the output
/// from registers once.
class GpuSharedTilePlan final : public StagePlan {
 public:
  GpuSharedTilePlan(const StageInfo& stage,
                    const StageInfo* epilogue_output,
                    const DagInfo& dag,
                    bool vthread,
                    const GpuShape& gpu,
                    KnobTable& knobs)
      : stage_(stage.name),
        outer_(epilogue_output != nullptr ? epilogue_output->name : stage.name),
        vthread_(vthread),
        gpu_(gpu) {
    TT_CHECK(epilogue_output == nullptr ||
             epilogue_output->data_axes.size() == stage.data_axes.size())
        << "epilogue '" << outer_ << "' of '" << stage_ << "' has another shape";
    // The last (up to) three data axes longer than 1 get threads, the innermost threadIdx.x.
    std::vector<ir::ForKind> kinds(stage.data_axes.size(), ir::ForKind::Serial);
    size_t bound = 0;
    for (size_t d = stage.data_axes.size(); d-- > 0 && bound < 3;) {
      if (stage.data_axes[d].extent > 1) {
        kinds[d] = kThreadKinds[bound++];
      }
    }
    for (size_t d = 0; d < stage.data_axes.size(); ++d) {
      const schedule::Axis& it = stage.data_axes[d];
      const bool threaded = kinds[d] != ir::ForKind::Serial;
      // (outer, inner) factors: (threads, per-thread) or, with virtual threads, (per-thread,
      // threads).
      const int64_t max_inner = vthread_ ? thread_limit(kinds[d]) : kMaxPerThread;
      std::vector<std::vector<int64_t>> choices;
      for (const std::vector<int64_t>& c : split_choices(it.extent, 2, max_inner)) {
        const int64_t threads = vthread_ ? c[1] : c[0];
        const int64_t per_thread = vthread_ ? c[0] : c[1];
        if (per_thread <= kMaxPerThread &&
            (threaded ? threads <= thread_limit(kinds[d]) : threads == 1)) {
          choices.push_back(c);
        }
      }
      const std::string outer_name =
          epilogue_output != nullptr ? epilogue_output->data_axes[d].name : it.name;
      data_.push_back(
          Axis{it.name, outer_name, it.extent, kinds[d],
               knobs.add(stage_ + "." + it.name + ".split", KnobKind::Split, std::move(choices))});
    }
    for (const schedule::Axis& it : stage.reduce_axes) {
      reduce_.push_back(
          {it.name, knobs.add(stage_ + ".local." + it.name + ".split", KnobKind::Split,
                              split_choices(it.extent, 1, kMaxSharedReduction))});
    }
    for (const te::OperationRef& input : stage.op->inputs) {
      if (std::find(inputs_.begin(), inputs_.end(), input->name) == inputs_.end()) {
        inputs_.push_back(input->name);
        input_axes_.push_back(dag.copy_axis_names(input->name));
        input_uses_.push_back(data_axes_read(stage, input->name));
        last_index_axis_.push_back(last_index_data_axis(stage, input->name));
        last_index_reduce_.push_back(last_index_reduce_axis(stage, input->name));
      }
    }
    // An input read with a threaded data axis at another dimension than its last (A [M, K] at
    // [i, k]) holds a thread's elements of that axis a reduction step apart in shared memory:
    // scalar reads, and a warp's rows in one bank. Its copy may instead be blocked by the
    // block's tile of that axis ([K][tile of i], CUTLASS's k-major A): a thread's elements are
    // then contiguous (float4 reads), neighbouring threads' rows in neighbouring banks. The
    // innermost such axis is taken; choice 0 is the natural layout.
    layouts_.resize(inputs_.size());
    for (const StageInfo::VectorAxis& va : stage.vector_axes) {
      if (va.axis >= kinds.size() || kinds[va.axis] == ir::ForKind::Serial) {
        continue;
      }
      for (const auto& [input, dim] : va.blocks) {
        const auto at = std::find(inputs_.begin(), inputs_.end(), input);
        if (at == inputs_.end()) {
          continue;
        }
        Layout& layout = layouts_[static_cast<size_t>(at - inputs_.begin())];
        if (layout.axis < 0 || static_cast<int64_t>(va.axis) > layout.axis) {
          layout.axis = static_cast<int64_t>(va.axis);
          layout.dim = dim;
        }
      }
    }
    for (size_t n = 0; n < inputs_.size(); ++n) {
      if (layouts_[n].axis >= 0) {
        layouts_[n].slot =
            knobs.add_values(inputs_[n] + ".shared.layout", KnobKind::Choice, {0, 1});
      }
    }
    // A thread's contiguous sub-tile read float4 by float4 along threadIdx.x puts lanes P floats
    // apart: for P = 8 two lanes of each quarter-warp share banks. Interleaving it in groups of
    // 4, T * 4 apart (CUTLASS's SIMT thread tiles), makes each quarter-warp's float4s one
    // contiguous 128 bytes. Choice 0 keeps the sub-tile contiguous.
    if (!vthread_) {
      interleave_ = knobs.add_values(stage_ + ".local.interleave", KnobKind::Choice, {0, 1});
      knobs.added_later(interleave_, 0);
    }
    unroll_ = knobs.add_values(stage_ + ".local.unroll", KnobKind::Unroll, {0, 16, 64, 512});
    fetch_vector_ = knobs.add_values(stage_ + ".shared.vector", KnobKind::VectorLength, {1, 2, 4});
    // The depth of the fetches' software pipeline (codegen's): 2 has the next step's tiles in
    // flight while this one is computed; 3 two steps, for blocks with too few warps to hide the
    // copies' latency otherwise, at a third copy of the tiles in shared memory.
    if (gpu_.async_copies) {
      stages_ = knobs.add_values(stage_ + ".shared.stages", KnobKind::Choice, {2, 3});
      knobs.added_later(stages_, 0);
    }
  }

  void emit(Phase phase, const Values& v, Steps& out) const override {
    const std::string local = stage_ + ".local";
    if (phase == Phase::CacheWrite) {
      std::vector<schedule::LayoutBlock> blocks;
      for (size_t d = 0; d < data_.size(); ++d) {
        const int64_t f = block_factor(data_[d], v);
        if (f > 1 && data_[d].extent % f == 0) {
          blocks.push_back(schedule::LayoutBlock{static_cast<int64_t>(d), f});
        }
      }
      out.emplace_back(schedule::CacheWrite{stage_, ir::MemoryScope::Local, blocks});
      return;
    }
    if (phase == Phase::CacheRead) {
      for (size_t n = 0; n < inputs_.size(); ++n) {
        schedule::CacheRead copy{inputs_[n], ir::MemoryScope::Shared, {local}, layout_blocks(n, v)};
        copy.row_pad = row_pad(n, v);
        copy.stages = stages_.one(v);
        out.emplace_back(std::move(copy));
      }
      return;
    }
    if (phase == Phase::Inline && outer_ != stage_) {
      out.emplace_back(schedule::ComputeInline{stage_});  // now a copy of C.local
      return;
    }
    if (phase != Phase::Loops) {
      return;
    }
    // C (or the epilogue's output): blocks (fused, blockIdx.x), threads, per-thread tile.
    std::vector<std::string> blocks, threads, inner;
    for (const Axis& a : data_) {
      if (const int64_t w = interleave_width(a, v); w > 0) {
        // [blocks][P / w][threads][w]: a thread's groups of w lie threads * w apart.
        emit_split_chain(outer_, a.outer_name, {per_thread(a, v) / w, threads_of(a, v), w}, out);
        const std::vector<std::string> names = level_names(a.outer_name, 3);
        blocks.push_back(names[0]);
        threads.push_back(names[2]);
        inner.push_back(names[1]);
        inner.push_back(names[3]);
        continue;
      }
      emit_split_chain(outer_, a.outer_name, a.slot.of(v), out);
      const std::vector<std::string> names = level_names(a.outer_name, 2);
      blocks.push_back(names[0]);
      threads.push_back(vthread_ ? names[2] : names[1]);
      inner.push_back(vthread_ ? names[1] : names[2]);
    }
    std::vector<std::string> order = blocks;
    order.insert(order.end(), threads.begin(), threads.end());
    order.insert(order.end(), inner.begin(), inner.end());
    out.emplace_back(schedule::Reorder{outer_, order});
    const std::string block = emit_fuse(outer_, blocks, out);
    out.emplace_back(schedule::Annotate{outer_, block, ir::ForKind::BlockX});
    bind_threads(outer_, threads, v, out);
    // An interleaved last axis whose tiles divide it stores its groups as float4s.
    if (const Axis& last = data_.back();
        interleave_width(last, v) > 0 && last.extent % tile_of(last, v) == 0) {
      out.emplace_back(schedule::Annotate{outer_, inner.back(), ir::ForKind::Vectorized});
    }

    // C.local at the block: outer reduction, threads, inner reduction, per-thread tile.
    out.emplace_back(schedule::ComputeAt{local, outer_, block});
    std::vector<std::string> local_threads, local_inner, outer_reduce, inner_reduce;
    for (const Axis& a : data_) {
      const int64_t f = block_factor(a, v);
      std::string outer = a.name, in;
      if (f > 1 && a.extent % f == 0) {
        in = a.name + ".b";  // the blocked layout's own axis
      } else if (f > 1) {
        out.emplace_back(schedule::Split{local, a.name, f, false});
        outer = a.name + ".o";
        in = a.name + ".i";
      }
      if (const int64_t w = interleave_width(a, v); w > 0) {
        // The block is threads * w: the threads, then a group of w.
        out.emplace_back(schedule::Split{local, in, w, false});
        local_threads.push_back(in + ".o");
        local_inner.push_back(outer);
        local_inner.push_back(in + ".i");
        continue;
      }
      // Without virtual threads the block is the per-thread tile, with them the threads.
      const bool thread_inside = vthread_ && threads_of(a, v) > 1;
      local_threads.push_back(thread_inside ? in : outer);
      if (!in.empty() || thread_inside) {
        local_inner.push_back(thread_inside ? outer : in);
      }
    }
    for (const auto& [axis, slot] : reduce_) {
      emit_split_chain(local, axis, slot.of(v), out);
      outer_reduce.push_back(axis + ".o");
      inner_reduce.push_back(axis + ".i");
    }
    std::vector<std::string> local_order = outer_reduce;
    local_order.insert(local_order.end(), local_threads.begin(), local_threads.end());
    local_order.insert(local_order.end(), inner_reduce.begin(), inner_reduce.end());
    local_order.insert(local_order.end(), local_inner.begin(), local_inner.end());
    out.emplace_back(schedule::Reorder{local, local_order});
    bind_threads(local, local_threads, v, out);
    const size_t compute = outer_reduce.size() + local_threads.size();
    if (unroll_.one(v) > 0 && compute < local_order.size()) {
      out.emplace_back(schedule::PragmaUnroll{local, local_order[compute], unroll_.one(v)});
    }

    // Each input copied into shared memory at each outer reduction step, by every thread. The
    // outer reduction loops (a conv's rc.o, ry.o, rx.o) are fused into one, so that a
    // double-buffered fetch (codegen's pipeline) overlaps every step with the next, not only
    // the steps of the innermost loop.
    if (outer_reduce.empty()) {
      return;  // nothing to stage per step (a reduction always has an axis; kept for safety)
    }
    const std::string step = emit_fuse(local, outer_reduce, out);
    for (size_t n = 0; n < inputs_.size(); ++n) {
      const std::string shared = inputs_[n] + ".shared";
      out.emplace_back(schedule::ComputeAt{shared, local, step});
      // A blocked copy still walks the input in its own order (the block's axis right after
      // the blocked one), so that neighbouring threads read neighbouring global addresses; with
      // a row segment, 8 elements of a row before the next rows (see row_segment).
      std::vector<std::string> copy_axes = input_axes_[n];
      if (!layout_blocks(n, v).empty()) {
        const auto dim = static_cast<size_t>(layouts_[n].dim);
        const std::string blocked = copy_axes[dim] + ".b";
        if (const int64_t segment = row_segment(n, v); segment > 0) {
          // A warp spans two float4s of each row: [.., last.o, dim.b, last.i].
          const std::string last = copy_axes.back();
          out.emplace_back(schedule::Split{shared, last, segment, false});
          copy_axes.back() = last + ".o";
          copy_axes.push_back(blocked);
          copy_axes.push_back(last + ".i");
        } else {
          copy_axes.insert(copy_axes.begin() + static_cast<std::ptrdiff_t>(dim) + 1, blocked);
        }
        out.emplace_back(schedule::Reorder{shared, copy_axes});
      }
      std::string loop = emit_fuse(shared, copy_axes, out);
      if (fetch_vector_.one(v) > 1) {
        out.emplace_back(schedule::Split{shared, loop, fetch_vector_.one(v), false});
        out.emplace_back(schedule::Annotate{shared, loop + ".i", ir::ForKind::Vectorized});
        loop += ".o";
      }
      for (size_t d = data_.size(); d-- > 0;) {
        const int64_t t = threads_of(data_[d], v);
        if (data_[d].kind == ir::ForKind::Serial || t <= 1) {
          continue;
        }
        out.emplace_back(schedule::Split{shared, loop, t, false});
        out.emplace_back(schedule::Annotate{shared, loop + ".i", data_[d].kind});
        loop += ".o";
      }
    }
  }

  double prior(const Values& v) const override {
    int64_t threads = 1, accumulators = 1;
    double blocks = 1;
    for (const Axis& a : data_) {
      threads *= threads_of(a, v);
      accumulators *= per_thread(a, v);
      blocks *= std::ceil(static_cast<double>(a.extent) / static_cast<double>(tile_of(a, v)));
    }
    double p = gpu_threads_prior(threads);
    // Shared-memory loads per FMA: per reduction element a thread reads, of each input, the
    // elements its tile spans along the data axes that input's index uses (a GEMM's 8x8 tile: 8
    // of A, 8 of B for 64 FMAs). Below 4 FMAs a load, shared-memory issue bounds the kernel
    // before the FMA pipe does.
    // A thread's elements contiguous in shared memory along its own tile are read 4 at a time.
    // Elements a row apart are read one by one, and a warp's rows fall in one bank.
    constexpr double kStridedReads = 0.8, kConflictedReads = 0.85;
    double loads = 0;
    int64_t operands = 0;
    for (size_t n = 0; n < input_uses_.size(); ++n) {
      double count = 1;
      for (size_t d : input_uses_[n])
        count *= static_cast<double>(per_thread(data_[d], v));
      operands += static_cast<int64_t>(count);
      const std::optional<size_t> inner = contiguous_axis(n, v);
      if (inner && !vthread_ && per_thread(data_[*inner], v) % 4 == 0) {
        count /= 4;
        // Contiguous sub-tiles of 8 or more along threadIdx.x: lanes of a quarter-warp share
        // banks (interleave_width).
        const Axis& a = data_[*inner];
        if (a.kind == ir::ForKind::ThreadX && threads_of(a, v) > 1 && per_thread(a, v) >= 8 &&
            interleave_width(a, v) == 0) {
          p *= kConflictedReads;
        }
      }
      if (layouts_[n].axis >= 0 && layouts_[n].slot.one(v) == 0 &&
          tile_of(data_[static_cast<size_t>(layouts_[n].axis)], v) > 1) {
        p *= kStridedReads;
      }
      loads += count;
    }
    p *= gpu_accumulators_prior(accumulators, operands, threads);
    if (loads > 0) {
      p *= std::sqrt(std::min(1.0, static_cast<double>(accumulators) / loads / 4));
    }
    // Global traffic: per reduction element a block loads, of each input, its tile's footprint
    // (a GEMM's 128x128 tile: 128 of A, 128 of B) for the tile's FMAs. More FMAs per load
    // leave the L2 and DRAM more headroom. A tie-breaker, at most 5%: among tiles the rules
    // above rank alike, the one with more reuse goes first (128x128 over 64x512).
    double block_fmas = 1, block_loads = 0;
    for (const Axis& a : data_) {
      block_fmas *= static_cast<double>(tile_of(a, v));
    }
    for (const std::vector<size_t>& uses : input_uses_) {
      double footprint = 1;
      for (size_t d : uses) {
        footprint *= static_cast<double>(tile_of(data_[d], v));
      }
      block_loads += footprint;
    }
    if (block_loads > 0) {
      constexpr double kIntensityScale = 8, kMaxLoss = 0.05;
      const double intensity = block_fmas / block_loads;  // FMAs per loaded element
      p *= 1 - kMaxLoss * kIntensityScale / (kIntensityScale + intensity);
    }
    // A short reduction step pays a pair of barriers for little work.
    int64_t step = 1;
    for (const auto& [axis, slot] : reduce_)
      step *= slot.of(v).back();
    p *= step >= 8 ? 1.0 : step >= 4 ? 0.8 : step >= 2 ? 0.6 : 0.4;
    p *= fetch_vector_.one(v) >= 4 ? 1.0 : fetch_vector_.one(v) == 2 ? 0.9 : 0.8;
    // Nothing here tells when a third stage pays for its shared memory: a tie-breaker only,
    // toward two, so that an untimed pick keeps the default and measurements decide.
    constexpr double kDeeperUntimed = 0.999;
    p *= stages_.one(v) > 2 ? kDeeperUntimed : 1.0;
    return p * gpu_fill_prior(blocks, threads, gpu_);
  }

 private:
  struct Axis {
    std::string name;
    std::string outer_name;  ///< the same axis of the outer stage (the epilogue's output)
    int64_t extent = 1;
    ir::ForKind kind = ir::ForKind::Serial;  ///< the thread index, Serial for none
    KnobSlot slot;
  };

  int64_t threads_of(const Axis& a, const Values& v) const {
    return a.slot.of(v)[vthread_ ? 1 : 0];
  }
  int64_t per_thread(const Axis& a, const Values& v) const {
    return a.slot.of(v)[vthread_ ? 0 : 1];
  }
  /// The block's extent along axis `a`.
  int64_t tile_of(const Axis& a, const Values& v) const {
    return threads_of(a, v) * per_thread(a, v);
  }
  /// The accumulator's block of axis `a`: what varies fastest inside one thread's elements
  /// and the threads' (the interleave's period).
  int64_t block_factor(const Axis& a, const Values& v) const {
    if (vthread_ && threads_of(a, v) > 1) {
      return threads_of(a, v);
    }
    if (const int64_t w = interleave_width(a, v); w > 0) {
      return threads_of(a, v) * w;
    }
    return per_thread(a, v);
  }
  /// The group width of axis `a`'s interleaved per-thread tile, or 0 where it stays contiguous:
  /// a threaded axis whose tile is a multiple of 4 and at least 8, under interleave choice 1.
  int64_t interleave_width(const Axis& a, const Values& v) const {
    constexpr int64_t kGroup = 4;
    if (vthread_ || interleave_.one(v) == 0 || a.kind == ir::ForKind::Serial ||
        threads_of(a, v) <= 1) {
      return 0;
    }
    const int64_t p = per_thread(a, v);
    return p >= 2 * kGroup && p % kGroup == 0 ? kGroup : 0;
  }
  /// The layout block of input `n`'s shared copy (none for the natural layout).
  std::vector<schedule::LayoutBlock> layout_blocks(size_t n, const Values& v) const {
    const Layout& layout = layouts_[n];
    if (layout.axis < 0 || layout.slot.one(v) == 0) {
      return {};
    }
    const Axis& a = data_[static_cast<size_t>(layout.axis)];
    const int64_t tile = tile_of(a, v);
    if (tile <= 1) {
      return {};
    }
    return {schedule::LayoutBlock{layout.dim, tile, false, a.extent % tile != 0}};
  }
  /// The row padding of input `n`'s blocked copy. Its lanes are stored one by one, transposed:
  /// a warp's lanes walk 4-element vectors along the input's last dimension (rows of the
  /// blocked copy, `tile` apart), so rows of a pitch that is a multiple of 32 fall in one bank.
  /// A pitch of 4 mod 8 keeps rows 16-byte aligned (float4 reads) and puts two rows' vectors
  /// 16 banks apart: a warp holding two vectors of 16 rows (a step of 8, or a row segment)
  /// stores without conflicts; one walking a longer row whole halves its conflicts.
  int64_t row_pad(size_t n, const Values& v) const {
    const std::vector<schedule::LayoutBlock> blocks = layout_blocks(n, v);
    if (blocks.empty()) {
      return 0;
    }
    constexpr int64_t kPitchPeriod = 8, kPitchResidue = 4;
    return ((kPitchResidue - blocks[0].factor % kPitchPeriod) % kPitchPeriod + kPitchPeriod) %
           kPitchPeriod;
  }
  /// The elements of a row a blocked copy of input `n` walks before the next row, when it walks
  /// less than the whole reduction step: 8 (two float4s) when its last dimension is a
  /// reduction axis whose step is a longer multiple of 8, else 0 (the whole step, in the
  /// input's own order). Its rows' stores then go 16 banks apart (row_pad) and the others
  /// lanes of the warp are neighbouring rows: no conflicts, and each row's 32 bytes are one
  /// sector of a global read.
  int64_t row_segment(size_t n, const Values& v) const {
    constexpr int64_t kSegment = 8;
    const std::optional<size_t> r = last_index_reduce_[n];
    if (layout_blocks(n, v).empty() || !r || *r >= reduce_.size() ||
        static_cast<size_t>(layouts_[n].dim) + 1 >= input_axes_[n].size()) {
      return 0;
    }
    const int64_t step = reduce_[*r].second.of(v).back();
    return step > kSegment && step % kSegment == 0 ? kSegment : 0;
  }
  /// The data axis along which input `n`'s shared copy is contiguous: the blocked one, or the
  /// one its last index is, if any.
  std::optional<size_t> contiguous_axis(size_t n, const Values& v) const {
    if (!layout_blocks(n, v).empty()) {
      return static_cast<size_t>(layouts_[n].axis);
    }
    return last_index_axis_[n];
  }
  /// Binds each data axis's thread loop in `loops` (one per data axis) that has threads.
  void bind_threads(const std::string& stage,
                    const std::vector<std::string>& loops,
                    const Values& v,
                    Steps& out) const {
    for (size_t d = 0; d < data_.size(); ++d) {
      if (data_[d].kind != ir::ForKind::Serial && threads_of(data_[d], v) > 1) {
        out.emplace_back(schedule::Annotate{stage, loops[d], data_[d].kind});
      }
    }
  }

  std::string stage_, outer_;
  bool vthread_ = false;
  GpuShape gpu_;
  std::vector<Axis> data_;
  std::vector<std::pair<std::string, KnobSlot>> reduce_;
  std::vector<std::string> inputs_;
  std::vector<std::vector<std::string>> input_axes_;
  std::vector<std::vector<size_t>> input_uses_;  ///< per input: the data axes its index reads
  /// Per input: the data axis its last index is exactly, if any.
  std::vector<std::optional<size_t>> last_index_axis_;
  /// Per input: the reduction axis its last index is exactly, if any.
  std::vector<std::optional<size_t>> last_index_reduce_;
  struct Layout {
    int64_t axis = -1;  ///< the data axis a blocked copy makes contiguous; -1: none offered
    int64_t dim = 0;    ///< the input's dimension it indexes
    KnobSlot slot{-1, {0}};
  };
  std::vector<Layout> layouts_;
  KnobSlot unroll_{-1, {0}}, fetch_vector_{-1, {1}}, interleave_{-1, {0}}, stages_{-1, {0}};
};

}  // namespace

PlanRef make_gpu_shared_tile_plan(const StageInfo& stage,
                                  const StageInfo* epilogue_output,
                                  const DagInfo& dag,
                                  bool vthread,
                                  const GpuShape& gpu,
                                  KnobTable& knobs) {
  return std::make_shared<GpuSharedTilePlan>(stage, epilogue_output, dag, vthread, gpu, knobs);
}

}  // namespace tensortune::search::detail

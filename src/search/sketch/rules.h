// SPDX-License-Identifier: Apache-2.0
// Private to src/search: the sketch rules (CPU; GPU in sketch/gpu.cpp). The compute DAG is
// analysed once (which stages reduce, which have data reuse, who reads whom); a sketch is a list of
// stage plans, one per compute stage (inline, generic, multi-level tiling), each owning its knobs
// and emitting its schedule steps for chosen knob values.
#pragma once

#include "tensortune/schedule/loop_state.h"
#include "tensortune/schedule/step.h"
#include "tensortune/search/search_space.h"
#include "tensortune/target/target.h"
#include "tensortune/te/workload.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tensortune::search::detail {

using Values = std::vector<std::vector<int64_t>>;
using Steps = std::vector<schedule::Step>;

/// What the rules read from the compute DAG about one compute stage.
struct StageInfo {
  std::string name;
  te::OperationRef op;
  bool is_output = false;
  bool is_reduction = false;
  /// A reduction with an input read that misses some data-parallel axis (matmul, conv, dense):
  /// it gets multi-level tiling.
  bool has_reuse = false;
  /// A small transform (Winograd's data and inverse transforms): every reduction axis spans at
  /// most kTransformExtent, all of them together at most kTransformVolume, some data axis is
  /// large, and some small one (2 .. kTransformExtent) is read by no tensor access: it only picks
  /// coefficients. It gets the transform rule instead of multi-level tiling (has_reuse is false).
  bool is_transform = false;
  /// Reads only constant inputs (Winograd's weight transform): computed at the root, never at a
  /// consumer's loop, so it lowers into the prepare function.
  bool constant_only = false;
  std::vector<schedule::Axis> data_axes;
  std::vector<schedule::Axis> reduce_axes;
  /// Compute stages reading this one, in stage order.
  std::vector<std::string> consumers;
  /// Inputs worth packing into a local copy inside the tiled nest (reuse stages only): read once,
  /// the last index uses the last data-parallel axis, an index uses a reduction axis, and some
  /// data-parallel axis is unused (so the copy is reused across it). B of a matmul.
  std::vector<std::string> packable;
  /// The packable inputs that are constant (weights) and read with the last data-parallel axis
  /// itself as their last index (a matmul's constant B [K, N] at [k, j]): they may also be copied
  /// once, at the root, into panels [N / v, K, v] of the vector length v (an outer_first layout
  /// block), which lowering moves to the prepare function.
  std::vector<std::string> panel_packable;
  /// Data-parallel axes other than the last (or the last one too when last_axis_strided: dense's
  /// weight [N, K] read at [j, k] is copied [N/v, K, v]) that can be the vectorized one (reuse
  /// stages only):
  /// every input reads the axis not at all, as its last index, or as exactly the axis at another
  /// index, whose tensor (read once) is then copied in a layout blocked by the vector length
  /// (conv weights OIHW -> OIHW16o for a vector over output channels).
  struct VectorAxis {
    size_t axis = 0;
    /// (input, dimension) pairs to block.
    std::vector<std::pair<std::string, int64_t>> blocks;
  };
  std::vector<VectorAxis> vector_axes;
  /// Some input reads the last data-parallel axis other than at unit stride in its last index
  /// (a stride-2 conv's x * 2 + rx, or the axis at another index): vectorizing it would gather.
  bool last_axis_strided = false;
  /// Some input's last index steps over the last data-parallel axis by more than 1 (a stride-2
  /// pool's x * 2 + rx; reductions only): a vector of it gathers every lane.
  bool last_axis_stepped = false;
};

/// The analysed compute DAG.
struct DagInfo {
  /// Compute stages, producers before consumers.
  std::vector<StageInfo> stages;
  /// Axis names of every stage's copy made by cache_read (placeholders included).
  std::vector<std::pair<std::string, std::vector<std::string>>> copy_axes;

  const StageInfo* find(const std::string& name) const;
  bool is_placeholder(const std::string& name) const;
  const std::vector<std::string>& copy_axis_names(const std::string& name) const;
};

/// Analyses `workload`'s compute DAG.
DagInfo analyse(const te::Workload& workload);

/// The data axes of `stage` (indices into its data_axes) that some index of its reads of the
/// stage `input` uses.
std::vector<size_t> data_axes_read(const StageInfo& stage, const std::string& input);

/// The data axis of `stage` that every read of `input` has as its last index, exactly (B [K, N]
/// at [k, j]: j); none when an index mixes it with others or no such axis exists.
std::optional<size_t> last_index_data_axis(const StageInfo& stage, const std::string& input);
/// The same for the reduction axes (A [M, K] at [i, k]: k, an index into reduce_axes).
std::optional<size_t> last_index_reduce_axis(const StageInfo& stage, const std::string& input);

/// The element-wise stages after reuse stage `stage` up to the output: E1 (its sole consumer,
/// reading it element-wise), E2 (E1's sole consumer, reading E1 element-wise), ..., En (an
/// output). Empty when the stage has no such chain (or is itself an output).
std::vector<std::string> epilogue_chain(const DagInfo& dag, const StageInfo& stage);

/// A knob of a sketch under construction, or a fixed value when there is only one choice (such a
/// knob is left out of the sketch).
struct KnobSlot {
  int index = -1;
  std::vector<int64_t> fixed;
  /// The chosen value in `values`.
  const std::vector<int64_t>& of(const Values& values) const {
    return index < 0 ? fixed : values[static_cast<size_t>(index)];
  }
  int64_t one(const Values& values) const { return of(values).at(0); }
};

/// Collects the knobs of a sketch while its plans are built.
class KnobTable {
 public:
  /// Adds a knob (UserError-free: names are made unique by the rules); a single choice gives a
  /// fixed slot and no knob.
  KnobSlot add(std::string name, KnobKind kind, std::vector<std::vector<int64_t>> choices);
  /// Single-value choices {v} for each v of `values`.
  KnobSlot add_values(std::string name, KnobKind kind, const std::vector<int64_t>& values);
  /// Marks `slot`'s knob as added after records were written (Knob::absent).
  void added_later(const KnobSlot& slot, int absent_choice);
  std::vector<Knob> take() { return std::move(knobs_); }

 private:
  std::vector<Knob> knobs_;
};

/// What the plausibility prior (StagePlan::prior) knows of a CPU target.
struct CpuShape {
  int64_t lanes = 8;       ///< elements of the widest vector register (16 floats with AVX-512)
  int64_t registers = 16;  ///< vector registers (32 with AVX-512)
  int64_t cores = 1;       ///< threads of parallel loops
};

/// The factors of the prior, each in (0, 1], 1 for what a hand-written kernel would do:
/// a vector of `length` elements where `reach` (the lanes, or less on a short axis) is possible;
double vector_prior(int64_t length, int64_t reach);
/// a register tile of `vectors` accumulators (at most `most` possible) on `registers` registers:
/// enough independent FMA chains to hide latency, few enough not to spill;
double register_tile_prior(int64_t vectors, int64_t registers, int64_t most);
/// a register tile of `fmas` accumulators that loads `loads` values per reduction step: 1 when it
/// loads at most 0.8 values per FMA, lower when the loads, not the FMAs, bound it;
double tile_loads_prior(int64_t fmas, int64_t loads);
/// a parallel loop of `extent` iterations on `cores` threads (1 when serial: extent 1);
double parallel_prior(int64_t extent, int64_t cores);
/// an auto-unroll `budget` for a register tile loop nest of `body` iterations around the vector;
double unroll_prior(int64_t budget, int64_t body);
/// a register tile `tile` points long over an axis of `extent`: the share of the computed points
/// that lie inside the axis, extent / (ceil(extent / tile) x tile), below 1 when the last tile is
/// partial (16-lane tiles over conv2d's 56 columns compute 64, 12.5% of them past the edge).
double tail_prior(int64_t extent, int64_t tile);

/// The widest useful vector over an axis of `extent`: the widest of vector_choices(extent), at
/// most `lanes`.
int64_t vector_reach(int64_t extent, int64_t lanes);
/// a transform whose output (at the root), or block of it (computed at a consumer's loop), takes
/// `bytes`, computing each element or reading its inputs `recompute` times: a block beyond
/// kSpillBytes leaves the L2 cache before its consumer reads it back, and recomputation repeats
/// the work;
double location_prior(int64_t bytes, int64_t recompute);

/// An intermediate larger than this leaves a core's L2 cache (1 MiB on Zen 4, shared with the
/// other intermediates and the weights) before its consumer reads it.
inline constexpr int64_t kSpillBytes = 256 * 1024;

/// The prior of a nest vectorized over its last loop (the generic and transform rules):
/// vector_prior(length, reach), times, when `parallel` >= 0, the parallel_prior of fusing its
/// first `parallel` loops, whose extents are `extents` (outermost first; the last one divided by
/// the vector length). `parallel` < 0: the nest runs inside another one's parallel loop.
double vector_nest_prior(const std::vector<int64_t>& extents,
                         int64_t length,
                         int64_t reach,
                         int64_t parallel,
                         int64_t cores);

/// The steps a sketch emits are grouped by phase: cache stages first (cache_write, then
/// cache_read), then inlining, then the loop steps of each stage, consumers before producers.
enum class Phase : uint8_t { CacheWrite, CacheRead, Inline, Loops };

/// See StagePlan::tile_loop_cost.
struct TileLoopCost {
  int64_t recompute = 1;
  int64_t parts = 1;
};

/// The schedule of one compute stage (or of a tiled group of stages) within a sketch.
class StagePlan {
 public:
  virtual ~StagePlan();
  /// Appends this plan's steps of `phase` for the chosen `values` (one per knob of the sketch).
  virtual void emit(Phase phase, const Values& values, Steps& out) const = 0;
  /// How many loops the plan offers producers to be computed at (fixed for the sketch).
  virtual int num_attach_points() const { return 0; }
  /// The stage producers attach to.
  virtual std::string attach_stage() const { return {}; }
  /// The axis of attach point `level` (1 .. num_attach_points()) for `values`.
  virtual std::string attach_axis(const Values& values, int level) const;
  /// How many loops the plan offers a transform producer (Winograd's data or inverse transform)
  /// to be computed at: loops over whole tiles of its large axes, outermost first, so the
  /// producer's region is one tile of them (by default the attach points). A multi-level tiling
  /// offers its S0 loops.
  virtual int num_tile_loops() const { return num_attach_points(); }
  /// The stage whose loops the tile loops are (by default attach_stage(); a multi-level tiling
  /// with a local accumulator offers the outer stage's loops).
  virtual std::string tile_stage() const { return attach_stage(); }
  /// The axis of tile loop `position` (1 .. num_tile_loops()) for `values`.
  virtual std::string tile_loop(const Values& values, int position) const {
    return attach_axis(values, position);
  }
  /// What computing transform `producer` at tile loop `position` costs: how many times it
  /// computes each of its elements or reads its inputs (`recompute`: the iterations of the loops
  /// up to it over axes its read ignores, as a data transform inside the GEMM's loop over output
  /// channels, or over tiles of a small axis: inside the GEMM's loop over tiles of eps, the
  /// input tiles are gathered again for each), and into how many blocks those loops split its
  /// output (`parts`). By default the loops up to it split the output and repeat nothing.
  virtual TileLoopCost tile_loop_cost(const Values& values,
                                      int position,
                                      const std::string& producer) const;
  /// How plausible `values` make this plan as fast code before anything is measured, in (0, 1]
  /// (SearchSpace::prior): the product of the factors above that apply.
  virtual double prior(const Values& /*values*/) const { return 1.0; }
};

using PlanRef = std::shared_ptr<const StagePlan>;

/// The sketch named `name` with the knobs collected in `knobs`, whose steps are every plan's
/// steps phase by phase (cache stages, inlining, then loops), plans in the given order, and whose
/// prior is the product of the plans' priors.
Sketch make_sketch(std::string name, KnobTable& knobs, std::vector<PlanRef> plans);

/// The unroll budgets an Unroll knob offers (0 = none).
const std::vector<int64_t>& unroll_choices();

/// compute_inline of `stage`.
PlanRef make_inline_plan(const std::string& stage);

inline constexpr int64_t kTransformExtent = 8;
inline constexpr int64_t kTransformVolume = 64;

/// The transform rule: the large data axes outside (fused into a parallel loop, a Parallel knob),
/// the innermost large one split by a VectorLength knob and vectorized innermost, and between them
/// the small data axes and the reduction axes fully unrolled, so coefficients that depend only on
/// them (constant matrices written as selects) fold into constants. When `consumer` offers tile
/// loops (StagePlan::num_tile_loops), a ComputeLocation knob `<stage>.at`: 0 = the root, k = the
/// consumer's tile loop k (the stage then runs inside the consumer's parallel loop). The plan
/// offers its own large loops to its producers (Winograd's row pass computed per tile of its
/// column pass).
PlanRef make_transform_plan(const StageInfo& stage,
                            const PlanRef& consumer,
                            const CpuShape& cpu,
                            KnobTable& knobs);

/// The generic rule: vectorize the innermost data-parallel axis (a VectorLength knob), fuse outer
/// data-parallel axes into a parallel loop (a Parallel knob), an Unroll knob, and, when
/// `consumer` is given, a ComputeLocation knob (0 = root, else one of its attach points).
PlanRef make_generic_plan(const StageInfo& stage,
                          const PlanRef& consumer,
                          const CpuShape& cpu,
                          KnobTable& knobs);

/// How a reuse stage is tiled.
enum class TileVariant : uint8_t { Plain, CacheWrite, Fused };

/// Multi-level tiling "S S R S R S" of a reuse stage (Ansor's CPU rule).
struct TileSpec {
  const StageInfo* stage = nullptr;
  TileVariant variant = TileVariant::Plain;
  /// CacheWrite / Fused: the outer stage keeps the tile levels 0 .. level-1 and the inner stage is
  /// computed at its last level-(level-1) loop (2: at S1, 3: at S2).
  int level = 2;
  /// Fused: the epilogue chain E1..En (En the output, the outer stage).
  std::vector<const StageInfo*> chain;
  /// Inputs packed into a local copy (cache_read), each with a ComputeLocation knob.
  std::vector<std::string> packs;
  /// The vectorized data axis when it is not the last (an index into the stage's data axes), and
  /// the inputs copied at the root in a layout blocked by its vector length, a multiple of `lanes`.
  std::optional<StageInfo::VectorAxis> vector_axis;
  /// The target's vector lanes (a blocked vector axis takes multiples of them), registers, cores.
  CpuShape cpu;
};

PlanRef make_tile_plan(const TileSpec& spec, const DagInfo& dag, KnobTable& knobs);

/// The loop that fusing the first `count` of `loops` (outermost first) makes, "a@b" (loops[0]
/// when count is 0 or 1).
std::string fused_loop(const std::vector<std::string>& loops, int64_t count);
/// Fuses the first `count` of `loops` (when two or more) and marks that loop parallel (when
/// one or more).
void emit_parallel(const std::string& stage,
                   const std::vector<std::string>& loops,
                   int64_t count,
                   Steps& out);

/// The level names of `axis` split into inner factors `inner` (outer first): "a" (none),
/// "a.o", "a.i.o", ..., "a.i.i"; and the splits that make them.
std::vector<std::string> level_names(const std::string& axis, size_t num_inner);
void emit_split_chain(const std::string& stage,
                      const std::string& axis,
                      const std::vector<int64_t>& inner,
                      Steps& out);
/// The names of `axes`, in order.
std::vector<std::string> axis_names(const std::vector<schedule::Axis>& axes);
/// Fuses `axes` of `stage` (when there are two or more) and returns the loop's name
/// (schedule::fused_axis_name).
std::string emit_fuse(const std::string& stage, const std::vector<std::string>& axes, Steps& out);

/// What the GPU priors assume of the device: its streaming multiprocessors, by architecture
/// (the data-centre part of each: sm_90 an H100 or H200, 132; sm_80 an A100, 108).
struct GpuShape {
  int64_t multiprocessors = 132;
  /// cp.async (sm_80 and newer): shared tiles may be fetched more than one step ahead.
  bool async_copies = true;
};
GpuShape gpu_shape(const target::Target& target);

/// The prior's share for keeping the device busy: `blocks` blocks of `threads` threads should
/// reach every multiprocessor (in proportion: an idle one does nothing), give each 8 warps or more
/// (fewer hide the latency of memory poorly, by a square root), and fill their last wave.
double gpu_fill_prior(double blocks, int64_t threads, const GpuShape& gpu);

/// Priors of a GPU stage's threads per block and accumulators per thread (sketch/gpu.cpp); a
/// thread loads `operands` values per reduction element into registers (0 where unknown).
double gpu_threads_prior(int64_t threads);
double gpu_accumulators_prior(int64_t accumulators, int64_t operands, int64_t threads);

/// The shared-memory tiling of reuse stage `stage`, with virtual threads or not, fusing its
/// element-wise epilogue ending at `epilogue_output` when not null (sketch/gpu_shared.cpp).
PlanRef make_gpu_shared_tile_plan(const StageInfo& stage,
                                  const StageInfo* epilogue_output,
                                  const DagInfo& dag,
                                  bool vthread,
                                  const GpuShape& gpu,
                                  KnobTable& knobs);

/// The sketch of `workload` for a GPU target (sketch/gpu.cpp).
std::vector<Sketch> gpu_sketches(const te::Workload& workload, const GpuShape& gpu);

/// A GPU stage without data reuse: its data-parallel axes fused and split over blocks and
/// threads, any reduction run by each thread alone (sketch/gpu.cpp).
PlanRef make_gpu_generic_plan(const StageInfo& stage, const GpuShape& gpu, KnobTable& knobs);

/// The GPU sketch whose reductions without data reuse over at least 32 elements run across the
/// threads of a block (a `<stage>.threads` knob of [threads along the reduction, rows per block]
/// and a `<stage>.unroll` knob each), other stages as gpu_sketches' generic plan; nullopt when
/// there is no such reduction or some stage reuses data across more than one output element
/// (sketch/gpu_reduce.cpp).
std::optional<Sketch> gpu_cross_thread_sketch(const DagInfo& dag, const GpuShape& gpu);

/// Every sketch of `workload` for `target`: for a CPU the rules' combinations of tiling variants,
/// vectorized axes and optional inlining (at most kMaxSketches); for a GPU target, gpu_sketches().
std::vector<Sketch> generate_sketches(const te::Workload& workload, const target::Target& target);

inline constexpr size_t kMaxSketches = 32;

}  // namespace tensortune::search::detail

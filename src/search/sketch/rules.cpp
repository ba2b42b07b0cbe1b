// SPDX-License-Identifier: Apache-2.0
// Sketch generation (Ansor, OSDI'20, section 4.1): the rules' structural decisions (how each reuse
// stage is tiled, whether an optional element-wise stage is inlined) are combined into sketches;
// every other decision is a knob of the sketch. Walks stages from outputs to inputs so a producer
// can be computed at loops its consumer's plan already named.
#include "search/sketch/rules.h"

#include "tensortune/support/error.h"

#include <algorithm>
#include <map>
#include <set>
#include <thread>

namespace tensortune::search::detail {
namespace {

enum class Role : uint8_t { Inline, Generic, Tile, Transform, Owned };

struct TileOption {
  TileVariant variant;
  int level;
  const char* label;
};

constexpr TileOption kTileOptions[] = {
    {TileVariant::Plain, 0, "tile"},
    {TileVariant::CacheWrite, 2, "tile+cache_write@S1"},
    {TileVariant::CacheWrite, 3, "tile+cache_write@S2"},
    {TileVariant::Fused, 2, "tile+fuse@S1"},
    {TileVariant::Fused, 3, "tile+fuse@S2"},
};

enum class Decision : uint8_t { Tiling, VectorAxis, Inlining };

/// A structural decision: a reuse stage's tiling variant; which axis of a reuse stage is
/// vectorized (option 0: the last); or inlining an element-wise stage that has several consumers
/// or feeds a tiled stage (pad into conv: inlined, or computed apart).
struct DecisionPoint {
  const StageInfo* stage = nullptr;
  Decision kind = Decision::Tiling;
  size_t options = 0;
  /// VectorAxis: the alternatives to the last axis (option k is vector_axes[k - 1]).
  std::vector<StageInfo::VectorAxis> vector_axes;
};

bool elementwise(const StageInfo& s) {
  return !s.is_reduction && !s.is_output;
}

/// The stage's vector axes worth a sketch of their own: only when the last axis does not fill
/// whole vectors of `lanes` (56 of a conv's width) or is read at a stride (a stride-2 conv's
/// width: vectors of it would be gathers), the candidate fills whole vectors (64 output
/// channels) or at least two (1000 of a classifier: 63 blocks of 16, the last one padded), and
/// every tensor to block is an input of the workload (blocked once, ahead of the loops).
std::vector<StageInfo::VectorAxis> worthwhile_vector_axes(const DagInfo& dag,
                                                          const StageInfo& s,
                                                          int64_t lanes) {
  std::vector<StageInfo::VectorAxis> out;
  if (lanes <= 1 || (s.data_axes.back().extent % lanes == 0 && !s.last_axis_strided))
    return out;
  for (const StageInfo::VectorAxis& v : s.vector_axes) {
    bool inputs = std::all_of(v.blocks.begin(), v.blocks.end(),
                              [&](const auto& b) { return dag.is_placeholder(b.first); });
    const int64_t extent = s.data_axes[v.axis].extent;
    if (inputs && (extent % lanes == 0 || extent >= 2 * lanes))
      out.push_back(v);
  }
  return out;
}

std::vector<DecisionPoint> decision_points(const DagInfo& dag, int64_t lanes) {
  std::vector<DecisionPoint> points;
  for (const StageInfo& s : dag.stages) {
    if (s.has_reuse) {
      points.push_back({&s, Decision::Tiling, epilogue_chain(dag, s).empty() ? 3u : 5u, {}});
      std::vector<StageInfo::VectorAxis> axes = worthwhile_vector_axes(dag, s, lanes);
      if (!axes.empty()) {
        points.push_back({&s, Decision::VectorAxis, axes.size() + 1, std::move(axes)});
      }
      continue;
    }
    bool optional = s.consumers.size() > 1;
    for (const std::string& c : s.consumers) {
      optional = optional || dag.find(c)->has_reuse;
    }
    if (elementwise(s) && optional) {
      points.push_back({&s, Decision::Inlining, 2, {}});
    }
  }
  return points;
}

class SketchAssembly {
 public:
  SketchAssembly(const DagInfo& dag,
                 const std::vector<DecisionPoint>& points,
                 const std::vector<size_t>& pick,
                 const CpuShape& cpu)
      : dag_(dag), cpu_(cpu) {
    for (const StageInfo& s : dag.stages) {
      role_[s.name] = s.has_reuse      ? Role::Tile
                      : s.is_transform ? Role::Transform
                      : elementwise(s) ? Role::Inline
                                       : Role::Generic;
    }
    for (size_t k = 0; k < points.size(); ++k) {
      const StageInfo& s = *points[k].stage;
      if (points[k].kind == Decision::Inlining) {
        role_[s.name] = pick[k] == 0 ? Role::Inline : Role::Generic;
        labels_.push_back(s.name + (pick[k] == 0 ? ":inline" : ":root"));
        continue;
      }
      if (points[k].kind == Decision::VectorAxis) {  // follows the stage's Tiling decision
        if (pick[k] > 0) {
          TileSpec& spec = tiles_.at(s.name);
          // The accumulator must be a blocked local buffer: storing vectors across the output's
          // own layout would scatter (not over the last axis, innermost in every layout).
          spec.vector_axis = points[k].vector_axes[pick[k] - 1];
          valid_ = valid_ && (spec.variant == TileVariant::CacheWrite ||
                              spec.vector_axis->axis + 1 == s.data_axes.size());
          labels_.back() += "+vec(" + s.data_axes[spec.vector_axis->axis].name + ")";
        }
        continue;
      }
      const TileOption& option = kTileOptions[pick[k]];
      TileSpec spec{&s, option.variant, option.level, {}, {}, std::nullopt, cpu};
      std::string label = s.name + ":" + option.label;
      if (option.variant == TileVariant::Fused) {
        std::vector<std::string> chain = epilogue_chain(dag, s);
        for (const std::string& e : chain) {
          spec.chain.push_back(dag.find(e));
          role_[e] = Role::Owned;
        }
        label = s.name + ":tile+fuse(" + chain.back() + ")@S" + std::to_string(option.level - 1);
      }
      tiles_[s.name] = spec;
      labels_.push_back(label);
    }
  }

  /// False for a combination of decisions that does not make a sketch.
  bool valid() const { return valid_; }

  Sketch build() {
    KnobTable knobs;
    std::map<std::string, PlanRef> providers;
    std::vector<PlanRef> plans;
    for (auto it = dag_.stages.rbegin(); it != dag_.stages.rend(); ++it) {
      const StageInfo& s = *it;
      switch (role_.at(s.name)) {
        case Role::Owned:
          break;
        case Role::Inline:
          plans.push_back(make_inline_plan(s.name));
          break;
        case Role::Tile: {
          TileSpec spec = tiles_.at(s.name);
          for (const std::string& input : s.packable) {
            // One copy per input: a second cache_read of it would be named "<input>.local.1".
            bool blocked =
                spec.vector_axis &&
                std::any_of(spec.vector_axis->blocks.begin(), spec.vector_axis->blocks.end(),
                            [&](const auto& b) { return b.first == input; });
            bool packable =
                !blocked && (dag_.is_placeholder(input) || role_.at(input) == Role::Inline);
            if (packable && packed_.insert(input).second) {
              spec.packs.push_back(input);
            }
          }
          plans.push_back(make_tile_plan(spec, dag_, knobs));
          providers[s.name] = plans.back();
          break;
        }
        case Role::Transform:
          plans.push_back(make_transform_plan(s, transform_consumer(s, providers), cpu_, knobs));
          providers[s.name] = plans.back();
          break;
        case Role::Generic: {
          PlanRef consumer;
          if (!s.is_output && !s.constant_only && s.consumers.size() == 1 &&
              providers.count(s.consumers[0]) != 0) {
            consumer = providers.at(s.consumers[0]);
          }
          plans.push_back(make_generic_plan(s, consumer, cpu_, knobs));
          providers[s.name] = plans.back();
          break;
        }
      }
    }
    return make_sketch(labels_.empty() ? "generic" : join_labels(), knobs, std::move(plans));
  }

 private:
  /// The plan a transform stage can be computed in: its sole consumer's, looking through
  /// inlined stages (Winograd's final gather inlined into a graph kernel's epilogue).
  PlanRef transform_consumer(const StageInfo& s,
                             const std::map<std::string, PlanRef>& providers) const {
    const StageInfo* current = &s;
    for (size_t hops = 0; hops < dag_.stages.size(); ++hops) {
      if (current->is_output || current->consumers.size() != 1) {
        return nullptr;
      }
      const std::string& next = current->consumers[0];
      if (role_.at(next) != Role::Inline) {
        auto it = providers.find(next);
        return it == providers.end() ? nullptr : it->second;
      }
      current = dag_.find(next);
    }
    return nullptr;
  }

  std::string join_labels() const {
    std::string name;
    for (const std::string& l : labels_) {
      name += (name.empty() ? "" : " ") + l;
    }
    return name;
  }

  const DagInfo& dag_;
  CpuShape cpu_;
  std::map<std::string, Role> role_;
  std::map<std::string, TileSpec> tiles_;
  std::vector<std::string> labels_;
  std::set<std::string> packed_;
  bool valid_ = true;
};

/// The target as the rules see it: lanes of its widest vector register for the output's element
/// type (16 floats with AVX-512; 256-bit vectors when unknown), its vector registers (32 with
/// AVX-512, else 16) and its threads (-cores, else every hardware thread).
CpuShape cpu_shape(const te::Workload& workload, const target::Target& target) {
  const int bits = target.vector_bits > 0 ? target.vector_bits : 256;
  const int element = workload.outputs().empty() ? 32 : workload.outputs()[0].dtype().bits();
  CpuShape cpu;
  cpu.lanes = std::max<int64_t>(1, bits / std::max(8, element));
  cpu.registers = bits >= 512 ? 32 : 16;
  cpu.cores =
      target.cores > 0 ? target.cores : std::max<int64_t>(1, std::thread::hardware_concurrency());
  return cpu;
}

std::vector<Sketch> cpu_sketches(const te::Workload& workload, const target::Target& target) {
  DagInfo dag = analyse(workload);
  const CpuShape cpu = cpu_shape(workload, target);
  std::vector<DecisionPoint> points = decision_points(dag, cpu.lanes);
  std::vector<Sketch> sketches;
  std::vector<size_t> pick(points.size(), 0);
  while (sketches.size() < kMaxSketches) {
    SketchAssembly assembly(dag, points, pick, cpu);
    if (assembly.valid()) {
      sketches.push_back(assembly.build());
    }
    // Next combination, last decision fastest.
    size_t k = points.size();
    while (k > 0 && ++pick[k - 1] == points[k - 1].options) {
      pick[--k] = 0;
    }
    if (k == 0) {
      break;
    }
  }
  return sketches;
}

}  // namespace

Sketch make_sketch(std::string name, KnobTable& knobs, std::vector<PlanRef> plans) {
  Sketch sketch;
  sketch.name = std::move(name);
  sketch.knobs = knobs.take();
  sketch.prior = [plans](const Values& values) {
    double p = 1;
    for (const PlanRef& plan : plans) {
      p *= plan->prior(values);
    }
    return p;
  };
  sketch.build = [plans = std::move(plans)](const Values& values) {
    Steps steps;
    for (Phase phase : {Phase::CacheWrite, Phase::CacheRead, Phase::Inline, Phase::Loops}) {
      for (const PlanRef& plan : plans) {
        plan->emit(phase, values, steps);
      }
    }
    return steps;
  };
  return sketch;
}

std::vector<Sketch> generate_sketches(const te::Workload& workload, const target::Target& target) {
  if (target.is_gpu()) {
    return gpu_sketches(workload, gpu_shape(target));
  }
  return cpu_sketches(workload, target);
}

}  // namespace tensortune::search::detail

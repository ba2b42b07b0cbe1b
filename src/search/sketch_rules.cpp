// SPDX-License-Identifier: Apache-2.0
// Sketch generation (Ansor, OSDI'20, section 4.1): the rules' structural decisions (how each reuse
// stage is tiled, whether an optional element-wise stage is inlined) are combined into sketches;
// every other decision is a knob of the sketch. Walks stages from outputs to inputs so a producer
// can be computed at loops its consumer's plan already named.
#include "sketch_rules.h"

#include "tensortune/support/error.h"

#include <map>
#include <set>

namespace tensortune::search::detail {
namespace {

enum class Role : uint8_t { Inline, Generic, Tile, Owned };

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

/// A structural decision: a reuse stage's tiling variant, or inlining an element-wise stage that
/// has several consumers or feeds a tiled stage (pad into conv: inlined, or computed apart).
struct DecisionPoint {
  const StageInfo* stage = nullptr;
  bool tiling = false;
  size_t options = 0;
};

bool elementwise(const StageInfo& s) {
  return !s.is_reduction && !s.is_output;
}

std::vector<DecisionPoint> decision_points(const DagInfo& dag) {
  std::vector<DecisionPoint> points;
  for (const StageInfo& s : dag.stages) {
    if (s.has_reuse) {
      points.push_back({&s, true, epilogue_chain(dag, s).empty() ? 3u : 5u});
      continue;
    }
    bool optional = s.consumers.size() > 1;
    for (const std::string& c : s.consumers) {
      optional = optional || dag.find(c)->has_reuse;
    }
    if (elementwise(s) && optional) {
      points.push_back({&s, false, 2});
    }
  }
  return points;
}

class SketchAssembly {
 public:
  SketchAssembly(const DagInfo& dag,
                 const std::vector<DecisionPoint>& points,
                 const std::vector<size_t>& pick)
      : dag_(dag) {
    for (const StageInfo& s : dag.stages) {
      role_[s.name] = s.has_reuse ? Role::Tile : elementwise(s) ? Role::Inline : Role::Generic;
    }
    for (size_t k = 0; k < points.size(); ++k) {
      const StageInfo& s = *points[k].stage;
      if (!points[k].tiling) {
        role_[s.name] = pick[k] == 0 ? Role::Inline : Role::Generic;
        labels_.push_back(s.name + (pick[k] == 0 ? ":inline" : ":root"));
        continue;
      }
      const TileOption& option = kTileOptions[pick[k]];
      TileSpec spec{&s, option.variant, option.level, {}, {}};
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
            bool packable = dag_.is_placeholder(input) || role_.at(input) == Role::Inline;
            if (packable && packed_.insert(input).second) {
              spec.packs.push_back(input);
            }
          }
          plans.push_back(make_tile_plan(spec, dag_, knobs));
          providers[s.name] = plans.back();
          break;
        }
        case Role::Generic: {
          PlanRef consumer;
          if (!s.is_output && s.consumers.size() == 1 && providers.count(s.consumers[0]) != 0) {
            consumer = providers.at(s.consumers[0]);
          }
          plans.push_back(make_generic_plan(s, consumer, knobs));
          providers[s.name] = plans.back();
          break;
        }
      }
    }
    return make_sketch(labels_.empty() ? "generic" : join_labels(), knobs, std::move(plans));
  }

 private:
  std::string join_labels() const {
    std::string name;
    for (const std::string& l : labels_) {
      name += (name.empty() ? "" : " ") + l;
    }
    return name;
  }

  const DagInfo& dag_;
  std::map<std::string, Role> role_;
  std::map<std::string, TileSpec> tiles_;
  std::vector<std::string> labels_;
  std::set<std::string> packed_;
};

std::vector<Sketch> cpu_sketches(const te::Workload& workload) {
  DagInfo dag = analyse(workload);
  std::vector<DecisionPoint> points = decision_points(dag);
  std::vector<Sketch> sketches;
  std::vector<size_t> pick(points.size(), 0);
  while (sketches.size() < kMaxSketches) {
    sketches.push_back(SketchAssembly(dag, points, pick).build());
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
    return gpu_sketches(workload);
  }
  return cpu_sketches(workload);
}

}  // namespace tensortune::search::detail

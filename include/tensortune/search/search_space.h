// SPDX-License-Identifier: Apache-2.0
// The schedule space of a workload, generated from its compute DAG and the target by rules:
// sketches (loop structures) whose decisions are named knobs; a configuration picks one choice per
// knob and maps to schedule steps.
#pragma once

#include "tensortune/schedule/step.h"
#include "tensortune/support/json.h"
#include "tensortune/support/rng.h"
#include "tensortune/target/target.h"
#include "tensortune/te/workload.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tensortune::search {

enum class KnobKind : uint8_t {
  /// Split factors of one axis, outer level first (the outermost extent is implied).
  Split,
  /// A loop order among several (choice i = the i-th order of the sketch).
  Reorder,
  /// Where a stage is computed (choice i = the i-th candidate location; 0 = root).
  ComputeLocation,
  /// Maximum unrolled steps of a nest (0 = none).
  Unroll,
  /// Vector length of the innermost data-parallel axis (1 = scalar).
  VectorLength,
  /// How many outer loops are fused into the parallel loop.
  Parallel,
  /// Any other yes/no or small-integer decision (a cache stage on or off, ...).
  Choice,
};
const char* knob_kind_name(KnobKind kind);

/// One decision of a sketch. Every choice is a short list of integers (a split: its factors; the
/// others: one value).
struct Knob {
  std::string name;  ///< unique in its sketch, e.g. "C.i.split", "C.unroll", "C.local.at"
  KnobKind kind = KnobKind::Choice;
  std::vector<std::vector<int64_t>> choices;
  /// For a knob added after records were written: the choice a stored configuration without it
  /// means (the one that builds what the sketch built before the knob existed); -1: required.
  int absent = -1;
};

/// A configuration: the sketch and the index of the chosen value of each of its knobs.
struct Config {
  int sketch = 0;
  std::vector<int> choice;
  bool operator==(const Config& o) const { return sketch == o.sketch && choice == o.choice; }
  bool operator!=(const Config& o) const { return !(*this == o); }
  bool operator<(const Config& o) const {
    return sketch != o.sketch ? sketch < o.sketch : choice < o.choice;
  }
};

/// One loop structure and its knobs; `build` maps the chosen values (one per knob, in knob order)
/// to the schedule steps.
struct Sketch {
  std::string name;  ///< e.g. "C:tile-SSRSRS+cache_write", unique in the space
  std::vector<Knob> knobs;
  std::function<std::vector<schedule::Step>(const std::vector<std::vector<int64_t>>& values)> build;
  /// How plausible the chosen values make fast code before anything is measured, in (0, 1]
  /// (empty: 1 for every configuration). See SearchSpace::prior.
  std::function<double(const std::vector<std::vector<int64_t>>& values)> prior;
};

class SearchSpace {
 public:
  /// Applies the sketch rules to `workload`'s compute DAG for `target` (the CPU rules, or the GPU
  /// rules for a cuda target: blocks, threads, per-thread accumulators). Never empty: a compute
  /// nobody wrote rules for gets the generic rules.
  static SearchSpace generate(const te::Workload& workload, const target::Target& target);

  const std::string& workload_key() const { return workload_key_; }
  const std::vector<Sketch>& sketches() const { return sketches_; }
  /// Number of configurations, summed over sketches (a double: it can pass 2^64).
  double size() const;

  /// A uniform choice of sketch, then per knob a uniform choice; a split knob with several levels
  /// picks its innermost factor uniformly among the distinct ones first (uniform over tuples,
  /// 1024 split in four would have an innermost factor of 1 a quarter of the time and 64 one time
  /// in eighteen, while that factor, the register tile, matters most).
  Config sample(support::Rng& rng) const;
  /// The sketch rules' prior of `config` in (0, 1]: the product, over its tiled and generic
  /// stages, of how fully the vector lanes are used, whether the register tile has enough
  /// accumulators to hide FMA latency without spilling the register file, whether the auto-unroll
  /// budget covers that tile, and whether the parallel loop has work for every core. 1 is what a
  /// hand-written kernel would choose; uniform samples of a conv2d space score far lower (a third
  /// of them run single-threaded, most spill or use narrow vectors).
  double prior(const Config& config) const;
  /// A sample drawn from the prior: uniform samples (sample()) accepted with probability
  /// prior(config), the most plausible of 64 draws when none is. Every configuration stays
  /// reachable; the model-guided tuners draw their random candidates this way.
  Config sample_plausible(support::Rng& rng) const;
  /// The configurations in grid order (sketch, then knobs as mixed-radix digits, last knob fastest)
  /// from position `offset`, at most `limit` of them.
  std::vector<Config> enumerate(double offset, size_t limit) const;
  /// Every configuration one step away: one knob moved to a neighbouring choice.
  std::vector<Config> neighbours(const Config& config) const;
  /// One random mutation: one or more knobs changed (a split knob keeps most of its factors).
  Config mutate(const Config& config, support::Rng& rng) const;
  /// Knobs taken from either parent (same sketch; otherwise returns `a`).
  Config crossover(const Config& a, const Config& b, support::Rng& rng) const;

  /// The schedule steps of `config` (ScheduleError if they fail to apply is the caller's concern:
  /// this only builds the list). InternalError on an out-of-range config.
  std::vector<schedule::Step> steps(const Config& config) const;

  /// {"sketch": NAME, "knobs": {KNOB: [values...], ...}}: stable across runs, stored in records.
  support::Json to_json(const Config& config) const;
  /// Inverse of to_json; UserError when the sketch or a knob is unknown, a value is not a choice,
  /// or a knob is missing that has no Knob::absent choice.
  Config from_json(const support::Json& json) const;
  /// The configuration of this space closest to `json` (a configuration of the same operator on
  /// another shape): same sketch, and per knob the exact value when it is a choice, else the choice
  /// nearest in log scale (split factors compared level by level); a knob missing from `json`
  /// takes its first choice. nullopt when the sketch is not in this space or `json` is malformed.
  /// This is how the best records of one shape start the search of another (transfer).
  std::optional<Config> nearest(const support::Json& json) const;
  /// A stable text identity of `config` (used to never measure a configuration twice).
  std::string key(const Config& config) const;
  /// One readable line, e.g. "C:tile-SSRSRS C.i.split=[4,8,1] C.unroll=64 ...".
  std::string describe(const Config& config) const;

 private:
  /// The sketch of `config`; InternalError when the config is out of range.
  const Sketch& checked(const Config& config) const;
  /// The index of the sketch named `name`, or -1.
  int sketch_index(const std::string& name) const;

  std::string workload_key_;
  std::vector<Sketch> sketches_;
  /// Per sketch and knob: the choice indices grouped by innermost factor (split knobs with two or
  /// more levels), else empty.
  std::vector<std::vector<std::vector<std::vector<int>>>> strata_;
};

}  // namespace tensortune::search

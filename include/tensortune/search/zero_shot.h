// SPDX-License-Identifier: Apache-2.0
// Zero-shot schedules: a schedule for a workload nobody tuned, picked from its own generated space
// by a cost model trained beforehand on other workloads (the shipped model; for a GPU target, the
// GPU sketch rules' prior), without measuring anything. Deterministic: the same workload, target,
// model and options give the same steps.
#pragma once

#include "tensortune/cost_model/cost_model.h"
#include "tensortune/database/database.h"
#include "tensortune/schedule/step.h"
#include "tensortune/support/json.h"
#include "tensortune/target/target.h"
#include "tensortune/te/workload.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tensortune::search {

struct ZeroShotOptions {
  /// Configurations drawn from the sketch prior and scored per workload. Lowering them for
  /// features is the cost: 1024 take about a third of a second for a ResNet-18 convolution on
  /// 2 threads.
  int samples = 1024;
  /// Then simulated annealing under the model (chains, steps each) from the `refine_starts`
  /// best-scored draws; its `refine_keep` best join the draws. 0 chains: the draws alone. The
  /// draws seldom hold the best point, its neighbours by the model's lights often do (see
  /// docs/design/zero_shot.md).
  int refine_chains = 32;
  int refine_steps = 30;
  size_t refine_starts = 32;
  size_t refine_keep = 8;
  /// Then a greedy ascent under the model (for a GPU, the prior) from each of the `climb_starts`
  /// best points: each step moves to the best-scored neighbour (one knob one choice away) while
  /// that scores higher, for at most `climb_steps` steps. 0 starts: none.
  size_t climb_starts = 8;
  int climb_steps = 40;
  /// The prior's weight against the model's scores (TuneOptions::prior_weight's meaning).
  double prior_weight = 0.5;
  uint64_t seed = 0;
  /// Threads that lower candidates (0: every hardware thread, at most 8).
  int threads = 0;
};

/// What zero-shot chose for one workload.
struct ZeroShotPick {
  std::vector<schedule::Step> steps;
  /// One readable line: the sketch and knob values (SearchSpace::describe).
  std::string config;
  double prior = 0;  ///< the configuration's sketch prior, in (0, 1]
  /// The configuration of the workload's space, as SearchSpace::to_json writes it (null when the
  /// pick is the default loop nest): where a tuning job starts.
  support::Json configuration;
};

/// The default loop nests made cheaper without a search: element-wise stages feeding element-wise
/// ones inlined, a reduction whose element-wise epilogue is the output computed per iteration of
/// the output's outer loop (with the stages in front of it that each iteration reads a part of
/// its own), and the outer loop of each stage left at the root parallel unless the workload is
/// too small for threads. What zero-shot builds when the model ranks the default first: a
/// depthwise conv with its bias and clip ran 514 us as written, 163 us so (2 threads, Zen 5).
/// Empty when no rule applies or the steps do not apply.
std::vector<schedule::Step> fused_default_steps(const te::Workload& workload);

class ZeroShot {
 public:
  /// `model` may be null or untrained: configurations are then ranked by the prior alone.
  explicit ZeroShot(std::shared_ptr<const cost_model::CostModel> model,
                    ZeroShotOptions options = {});

  /// The best-scored valid configuration of `workload`'s space for `target` (resolved), or
  /// nullopt when none of the samples lowers.
  std::optional<ZeroShotPick> pick(const te::Workload& workload,
                                   const target::Target& target) const;
  /// "cost model" or "sketch prior": what ranked the picks for a CPU.
  std::string ranking() const;
  /// What ranked the picks for `target`: for a GPU the sketch prior ("GPU sketch prior"), the
  /// shipped model having been trained on CPU records only.
  std::string ranking(const target::Target& target) const;

 private:
  std::shared_ptr<const cost_model::CostModel> model_;
  ZeroShotOptions options_;
};

/// Training samples from every record of `db` on every target of kind `kind`: each record's steps
/// re-lowered for features, scored by throughput relative to the best record of its workload and
/// target (failures 0), one ranking group per workload and target. A workload is rebuilt from its
/// spec, or else found by key in `known` (a model's kernel, which has no spec); one that is
/// neither is left out and counted in `unknown`. Records whose steps no longer apply are skipped
/// and counted in `skipped`.
std::vector<cost_model::Sample> corpus_samples(
    const database::Database& db,
    target::TargetKind kind,
    int64_t* skipped = nullptr,
    const std::map<std::string, te::Workload>* known = nullptr,
    int64_t* unknown = nullptr);

}  // namespace tensortune::search

// SPDX-License-Identifier: Apache-2.0
// Model-guided proposal of candidates: the evaluator that lowers configurations and extracts their
// features (cached), simulated annealing over the knob space (parallel chains, a falling
// temperature, early stop) and evolutionary search (population, mutation, crossover).
#pragma once

#include "tensortune/ir/stmt.h"
#include "tensortune/search/search_space.h"
#include "tensortune/support/rng.h"
#include "tensortune/target/target.h"
#include "tensortune/te/workload.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tensortune::search {

/// The cost-model features of `steps` on `workload`, or nullopt when they do not apply or lower.
/// Features are taken from the loop nest before the vectorize and unroll passes (vector and
/// unrolled loops are still annotated loops there): ten times cheaper than the full lowering, and
/// the same for every candidate, measured or predicted.
std::optional<std::vector<float>> feature_vector(const te::Workload& workload,
                                                 const std::vector<schedule::Step>& steps,
                                                 const target::Target& target);

/// Lowers configurations of one space and extracts their cost-model features, caching the
/// features by configuration key. A configuration whose steps fail to apply or lower
/// (ScheduleError) is invalid: it is dropped and counted. The cache holds at most
/// cache_limit() configurations: a call that would pass it empties it first, so an overnight
/// job does not grow by the thousands of candidates each round's search scores (about 2.5 KB
/// each; 0.36 MB per trial on matmul 64³ before the limit).
class CandidateEvaluator {
 public:
  CandidateEvaluator(te::Workload workload, const SearchSpace& space, target::Target target);

  /// The features of `config`, or nullptr when it is invalid. The pointer stays valid until the
  /// next call.
  const std::vector<float>* features(const Config& config);
  /// The features of each of `configs` (nullptr for an invalid one): those not evaluated yet are
  /// lowered on up to threads() threads (lowering is pure and dominates the search's time).
  std::vector<const std::vector<float>*> features(const std::vector<Config>& configs);
  /// Threads the batch features() uses (default: every hardware thread, at most 8).
  void set_threads(int threads) { threads_ = threads < 1 ? 1 : threads; }
  int threads() const { return threads_; }
  /// The most configurations the cache keeps (default 16384, at least 1).
  void set_cache_limit(size_t limit) { cache_limit_ = limit < 1 ? 1 : limit; }
  size_t cache_limit() const { return cache_limit_; }
  size_t cached() const { return cache_.size(); }
  /// Lowers `config` (not cached); nullopt when it is invalid.
  std::optional<ir::LoweredFunc> lower_config(const Config& config) const;
  /// Lowers explicit steps (a record's); nullopt when they do not apply.
  std::optional<ir::LoweredFunc> lower_steps(const std::vector<schedule::Step>& steps) const;

  const SearchSpace& space() const { return space_; }
  const te::Workload& workload() const { return workload_; }
  /// Evaluations that found a configuration invalid, and all evaluations (a configuration
  /// evaluated again after the cache was emptied counts again).
  int64_t invalid() const { return invalid_; }
  int64_t evaluated() const { return evaluated_; }
  /// Seconds spent lowering and extracting features.
  double seconds() const { return seconds_; }

 private:
  te::Workload workload_;
  const SearchSpace& space_;
  target::Target target_;
  std::string name_;
  std::unordered_map<std::string, std::unique_ptr<std::vector<float>>> cache_;
  int64_t invalid_ = 0, evaluated_ = 0;
  double seconds_ = 0;
  int threads_ = 1;
  size_t cache_limit_ = 16384;
};

/// Scores of configurations (higher = predicted faster); -infinity for an invalid one.
using ScoreFn = std::function<std::vector<float>(const std::vector<Config>&)>;
/// Adds weight x (the range of the finite scores) x log2(prior) to each finite score, so that a
/// configuration whose prior is half another's needs a lead of weight x range in the model's
/// scores to stay ahead of it; weight 0 changes nothing, infinite scores stay as they are.
void weigh_by_prior(const SearchSpace& space,
                    const std::vector<Config>& configs,
                    double weight,
                    std::vector<float>& scores);
/// The same with a given `range` instead of the scores' own, so that scores of several batches
/// compare on one scale.
void weigh_by_prior(const SearchSpace& space,
                    const std::vector<Config>& configs,
                    double weight,
                    double range,
                    std::vector<float>& scores);
/// The spread of the finite scores (1 when they do not differ).
float score_spread(const std::vector<float>& scores);
/// True when the configuration (by SearchSpace::key) was already measured.
using MeasuredFn = std::function<bool(const std::string& key)>;

struct AnnealingOptions {
  int chains = 64;
  int max_steps = 60;
  /// Stop when the kept top set has not changed for this many steps.
  int early_stop = 15;
  double start_temperature = 1.0;
  double end_temperature = 0.0;
  /// Fresh chains start from samples of the sketch rules' prior (SearchSpace::sample_plausible),
  /// not uniform ones: the model ranks them, and chains that start among plausible
  /// configurations do not spend their steps leaving spills and scalar loops.
  bool plausible_starts = true;
};

struct EvolutionOptions {
  int population = 256;
  int generations = 4;
  double mutation_probability = 0.85;
  /// The initial population is topped up from the prior (see AnnealingOptions).
  bool plausible_starts = true;
};

/// Simulated annealing from `starts` (topped up with random samples to `chains` points). Returns up
/// to `count` distinct unmeasured valid configurations, best predicted first.
std::vector<Config> simulated_annealing(const SearchSpace& space,
                                        const ScoreFn& score,
                                        const MeasuredFn& measured,
                                        std::vector<Config> starts,
                                        size_t count,
                                        support::Rng& rng,
                                        const AnnealingOptions& options = {});

/// Evolutionary search: an initial population of `starts` plus random samples, fitness-
/// proportional selection, mutation or crossover. Same contract as simulated_annealing.
std::vector<Config> evolutionary_search(const SearchSpace& space,
                                        const ScoreFn& score,
                                        const MeasuredFn& measured,
                                        std::vector<Config> starts,
                                        size_t count,
                                        support::Rng& rng,
                                        const EvolutionOptions& options = {});

/// Up to `count` distinct unmeasured configurations drawn uniformly, or from the sketch rules'
/// prior when `plausible` (SearchSpace::sample_plausible); gives up after 50×count draws when the
/// space is nearly exhausted. `taken` keys are skipped too and extended.
std::vector<Config> random_unmeasured(const SearchSpace& space,
                                      const MeasuredFn& measured,
                                      std::unordered_set<std::string>& taken,
                                      size_t count,
                                      support::Rng& rng,
                                      bool plausible = false);

}  // namespace tensortune::search

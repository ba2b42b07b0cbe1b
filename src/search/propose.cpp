// SPDX-License-Identifier: Apache-2.0
// The next batch of a task: transferred starts, the model-guided search's picks, random ones.
#include "search/tune_job.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

namespace tensortune::search::detail {

namespace {

/// The model's scores of `configs` for one task; -infinity for invalid configurations.
std::vector<float> model_scores(TaskState& state,
                                const cost_model::CostModel& model,
                                const std::vector<Config>& configs) {
  std::vector<std::vector<float>> rows;
  std::vector<size_t> where;
  const std::vector<const std::vector<float>*> features = state.evaluator.features(configs);
  for (size_t i = 0; i < configs.size(); ++i) {
    if (const std::vector<float>* f = features[i]) {
      rows.push_back(*f);
      where.push_back(i);
    }
  }
  std::vector<float> scores(configs.size(), -std::numeric_limits<float>::infinity());
  if (rows.empty())
    return scores;
  const std::vector<float> predicted = model.predict(rows);
  for (size_t k = 0; k < where.size(); ++k)
    scores[where[k]] = predicted[k];
  return scores;
}

}  // namespace

bool trained_elsewhere(const TaskState& state, const cost_model::CostModel* model) {
  return model != nullptr && model->trained() && state.top.empty();
}

std::vector<Config> propose(TaskState& state,
                            const cost_model::CostModel* model,
                            const TuneOptions& options,
                            size_t n) {
  const MeasuredFn measured = [&](const std::string& key) {
    return state.is_measured(key);
  };
  std::vector<Config> picked;
  std::unordered_set<std::string> taken, taken_schedules;
  auto take = [&](const Config& c) {
    if (picked.size() >= n || measured(state.space.key(c)))
      return;
    if (!taken.insert(state.space.key(c)).second)
      return;
    // Another configuration with the same steps was (or is about to be) measured.
    const std::string text = state.schedule_text(c);
    if (state.measured_schedules.count(text) != 0 || !taken_schedules.insert(text).second)
      return;
    if (state.evaluator.features(c) == nullptr)
      return;  // invalid: dropped and counted
    picked.push_back(c);
  };
  if (options.tuner == TunerKind::Grid) {
    while (picked.size() < n && state.grid_offset < state.space.size()) {
      const std::vector<Config> chunk = state.space.enumerate(state.grid_offset, n);
      state.grid_offset += static_cast<double>(chunk.size());
      for (const Config& c : chunk)
        take(c);
      if (chunk.empty())
        break;
    }
    return picked;
  }
  // Before the task has measurements of its own, the model-guided tuners measure as they are the
  // configurations of this workload tuned elsewhere (TuneTask::starts) and the best of other
  // shapes of the same operator (nearest in this space): those of the database, then those of
  // this run's other tasks, up to half the batch.
  if (options.tuner != TunerKind::Random && model != nullptr && state.top.empty()) {
    for (const Config& c : state.transfer_starts)
      take(c);
    const size_t peer_room = picked.size() + n / 2;
    for (size_t i = 0; i < state.peer_starts.size() && picked.size() < peer_room; ++i)
      take(state.peer_starts[i]);
  }
  const bool guided = options.tuner != TunerKind::Random && model != nullptr && model->trained();
  if (guided) {
    // Rounded up, so a small batch still explores (5% of 16 would be none).
    const double share = trained_elsewhere(state, model)
                             ? std::max(options.eps_greedy, options.first_batch_random_share)
                             : options.eps_greedy;
    const auto n_random = static_cast<size_t>(std::ceil(share * static_cast<double>(n)));
    const double prior_weight = options.prior ? options.prior_weight : 0.0;
    const ScoreFn score = [&](const std::vector<Config>& c) {
      std::vector<float> s = model_scores(state, *model, c);
      weigh_by_prior(state.space, c, prior_weight, s);
      return s;
    };
    const size_t wanted = n - std::min(n, n_random);
    const std::vector<Config> starts = state.top_configs(
        options.tuner == TunerKind::Xgb ? static_cast<size_t>(options.annealing.chains / 2)
                                        : static_cast<size_t>(options.evolution.population / 4));
    AnnealingOptions annealing = options.annealing;
    EvolutionOptions evolution = options.evolution;
    annealing.plausible_starts = evolution.plausible_starts = options.prior;
    const std::vector<Config> best = options.tuner == TunerKind::Xgb
                                         ? simulated_annealing(state.space, score, measured, starts,
                                                               wanted, state.rng, annealing)
                                         : evolutionary_search(state.space, score, measured, starts,
                                                               wanted, state.rng, evolution);
    for (const Config& c : best)
      take(c);
  }
  // The random share, and the whole batch while the model knows nothing yet: drawn from the
  // prior by the model-guided tuners.
  const bool plausible = options.prior && options.tuner != TunerKind::Random;
  for (int attempt = 0; picked.size() < n && attempt < 4; ++attempt) {
    std::unordered_set<std::string> local = taken;
    for (const Config& c :
         random_unmeasured(state.space, measured, local, n - picked.size(), state.rng, plausible)) {
      take(c);
    }
  }
  return picked;
}

}  // namespace tensortune::search::detail

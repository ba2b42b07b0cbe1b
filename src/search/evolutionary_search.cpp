// SPDX-License-Identifier: Apache-2.0
// The candidate evaluator (lower + features, cached) and the model-guided proposers: simulated
// annealing and evolutionary search.
#include "tensortune/search/evolutionary_search.h"

#include "tensortune/cost_model/features.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/support/error.h"
#include "tensortune/support/log.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <set>
#include <thread>
#include <unordered_set>

namespace tensortune::search {

namespace {

constexpr float kInvalid = -std::numeric_limits<float>::infinity();

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The `capacity` best-scored distinct configurations seen; reports whether an insert changed it.
class TopSet {
 public:
  explicit TopSet(size_t capacity) : capacity_(capacity) {}
  bool offer(const std::string& key, float score, const Config& config) {
    if (capacity_ == 0 || !std::isfinite(score) || by_key_.count(key) != 0)
      return false;
    if (ranked_.size() == capacity_ && score <= ranked_.begin()->first)
      return false;
    ranked_.emplace(score, key);
    by_key_.emplace(key, config);
    if (ranked_.size() > capacity_) {
      by_key_.erase(ranked_.begin()->second);
      ranked_.erase(ranked_.begin());
    }
    return true;
  }
  std::vector<Config> best_first() const {
    std::vector<Config> out;
    for (auto it = ranked_.rbegin(); it != ranked_.rend(); ++it)
      out.push_back(by_key_.at(it->second));
    return out;
  }

 private:
  size_t capacity_;
  std::set<std::pair<float, std::string>> ranked_;
  std::map<std::string, Config> by_key_;
};

/// Tops `points` up with random samples to `n`, drawn from the prior when `plausible`.
void fill_random(const SearchSpace& space,
                 std::vector<Config>& points,
                 size_t n,
                 support::Rng& rng,
                 bool plausible) {
  if (points.size() > n)
    points.resize(n);
  while (points.size() < n)
    points.push_back(plausible ? space.sample_plausible(rng) : space.sample(rng));
}

/// Offers every valid unmeasured point to `top`; true when any entered it.
bool offer_all(const SearchSpace& space,
               const MeasuredFn& measured,
               const std::vector<Config>& points,
               const std::vector<float>& scores,
               TopSet& top) {
  bool changed = false;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!std::isfinite(scores[i]))
      continue;
    const std::string key = space.key(points[i]);
    if (measured(key))
      continue;
    changed = top.offer(key, scores[i], points[i]) || changed;
  }
  return changed;
}

}  // namespace

float score_spread(const std::vector<float>& scores) {
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  for (float s : scores) {
    if (!std::isfinite(s))
      continue;
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
  return hi > lo ? hi - lo : 1.0f;
}

void weigh_by_prior(const SearchSpace& space,
                    const std::vector<Config>& configs,
                    double weight,
                    std::vector<float>& scores) {
  weigh_by_prior(space, configs, weight, score_spread(scores), scores);
}

void weigh_by_prior(const SearchSpace& space,
                    const std::vector<Config>& configs,
                    double weight,
                    double range,
                    std::vector<float>& scores) {
  TT_CHECK(scores.size() == configs.size())
      << scores.size() << " scores for " << configs.size() << " configurations";
  if (weight <= 0) {
    return;
  }
  for (size_t i = 0; i < scores.size(); ++i) {
    if (std::isfinite(scores[i])) {
      scores[i] +=
          static_cast<float>(weight * range * std::log2(std::max(1e-9, space.prior(configs[i]))));
    }
  }
}

CandidateEvaluator::CandidateEvaluator(te::Workload workload,
                                       const SearchSpace& space,
                                       target::Target target)
    : workload_(std::move(workload)),
      space_(space),
      target_(std::move(target)),
      name_(lower::function_name(workload_)),
      threads_(static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1U, 8U))) {}

std::optional<ir::LoweredFunc> CandidateEvaluator::lower_steps(
    const std::vector<schedule::Step>& steps) const {
  try {
    return tensortune::lower::lower(schedule::apply_steps(workload_, steps), target_, name_);
  } catch (const ScheduleError& e) {
    TT_LOG(3) << "search: dropped an invalid candidate: " << e.what();
    return std::nullopt;
  }
}

std::optional<ir::LoweredFunc> CandidateEvaluator::lower_config(const Config& config) const {
  return lower_steps(space_.steps(config));
}

std::optional<std::vector<float>> feature_vector(const te::Workload& workload,
                                                 const std::vector<schedule::Step>& steps,
                                                 const target::Target& target) {
  try {
    lower::LowerOptions options;
    options.vectorize_and_unroll = false;
    const ir::LoweredFunc func = lower::lower(schedule::apply_steps(workload, steps), target,
                                              lower::function_name(workload), options);
    return cost_model::extract_features(func).vector;
  } catch (const ScheduleError& e) {
    TT_LOG(3) << "search: dropped an invalid candidate: " << e.what();
    return std::nullopt;
  }
}

const std::vector<float>* CandidateEvaluator::features(const Config& config) {
  return features(std::vector<Config>{config}).front();
}

std::vector<const std::vector<float>*> CandidateEvaluator::features(
    const std::vector<Config>& configs) {
  std::vector<std::string> keys;
  std::vector<size_t> todo;  // the configurations to evaluate, each key once
  std::unordered_set<std::string> seen;
  if (cache_.size() + configs.size() > cache_limit_)
    cache_.clear();  // no pointer handed out earlier is still in use (see features())
  for (size_t i = 0; i < configs.size(); ++i) {
    keys.push_back(space_.key(configs[i]));
    if (cache_.count(keys[i]) == 0 && seen.insert(keys[i]).second)
      todo.push_back(i);
  }
  if (!todo.empty()) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::optional<std::vector<float>>> out(todo.size());
    std::atomic<size_t> next{0};
    std::vector<std::exception_ptr> errors(static_cast<size_t>(threads_));
    auto work = [&](size_t worker) {
      try {
        for (size_t k = next++; k < todo.size(); k = next++) {
          out[k] = feature_vector(workload_, space_.steps(configs[todo[k]]), target_);
        }
      } catch (...) {
        errors[worker] = std::current_exception();
        next = todo.size();
      }
    };
    const size_t n = std::min(todo.size(), static_cast<size_t>(threads_));
    std::vector<std::thread> pool;
    for (size_t w = 1; w < n; ++w)
      pool.emplace_back(work, w);
    work(0);
    for (std::thread& t : pool)
      t.join();
    for (const std::exception_ptr& e : errors) {
      if (e)
        std::rethrow_exception(e);
    }
    for (size_t k = 0; k < todo.size(); ++k) {
      std::unique_ptr<std::vector<float>> value;
      if (out[k]) {
        value = std::make_unique<std::vector<float>>(std::move(*out[k]));
      } else {
        ++invalid_;
      }
      ++evaluated_;
      cache_.emplace(keys[todo[k]], std::move(value));
    }
    seconds_ += seconds_since(start);
  }
  std::vector<const std::vector<float>*> result;
  for (const std::string& key : keys)
    result.push_back(cache_.at(key).get());
  return result;
}

std::vector<Config> simulated_annealing(const SearchSpace& space,
                                        const ScoreFn& score,
                                        const MeasuredFn& measured,
                                        std::vector<Config> starts,
                                        size_t count,
                                        support::Rng& rng,
                                        const AnnealingOptions& options) {
  TT_CHECK(options.chains > 0 && options.max_steps >= 0);
  std::vector<Config> points = std::move(starts);
  fill_random(space, points, static_cast<size_t>(options.chains), rng, options.plausible_starts);
  std::vector<float> scores = score(points);
  TopSet top(count);
  offer_all(space, measured, points, scores, top);
  const float scale = score_spread(scores);
  int unchanged = 0;
  for (int step = 0; step < options.max_steps; ++step) {
    const double t =
        options.start_temperature + (options.end_temperature - options.start_temperature) * step /
                                        std::max(1, options.max_steps);
    std::vector<Config> next(points.size());
    for (size_t i = 0; i < points.size(); ++i)
      next[i] = space.mutate(points[i], rng);
    const std::vector<float> next_scores = score(next);
    for (size_t i = 0; i < points.size(); ++i) {
      if (!std::isfinite(next_scores[i]))
        continue;
      const double delta = (next_scores[i] - scores[i]) / scale;
      if (!std::isfinite(scores[i]) || delta >= 0 ||
          (t > 0 && rng.uniform() < std::exp(delta / t))) {
        points[i] = next[i];
        scores[i] = next_scores[i];
      }
    }
    unchanged = offer_all(space, measured, next, next_scores, top) ? 0 : unchanged + 1;
    if (options.early_stop > 0 && unchanged >= options.early_stop) {
      TT_LOG(2) << "search: annealing stopped early after " << step + 1 << " steps";
      break;
    }
  }
  return top.best_first();
}

std::vector<Config> evolutionary_search(const SearchSpace& space,
                                        const ScoreFn& score,
                                        const MeasuredFn& measured,
                                        std::vector<Config> starts,
                                        size_t count,
                                        support::Rng& rng,
                                        const EvolutionOptions& options) {
  TT_CHECK(options.population > 1 && options.generations >= 0);
  std::vector<Config> population = std::move(starts);
  fill_random(space, population, static_cast<size_t>(options.population), rng,
              options.plausible_starts);
  std::vector<float> scores = score(population);
  TopSet top(count);
  offer_all(space, measured, population, scores, top);
  for (int gen = 0; gen < options.generations; ++gen) {
    // Fitness-proportional selection on scores shifted to be positive; invalid points never breed.
    float lo = std::numeric_limits<float>::infinity();
    for (float s : scores) {
      if (std::isfinite(s))
        lo = std::min(lo, s);
    }
    const float spread = score_spread(scores);
    std::vector<double> cumulative;
    double total = 0;
    for (float s : scores) {
      total += std::isfinite(s) ? (s - lo) / spread + 0.05 : 0.0;
      cumulative.push_back(total);
    }
    if (total <= 0)
      break;
    auto pick = [&]() -> const Config& {
      const double r = rng.uniform() * total;
      const size_t i = static_cast<size_t>(
          std::upper_bound(cumulative.begin(), cumulative.end(), r) - cumulative.begin());
      return population[std::min(i, population.size() - 1)];
    };
    std::vector<Config> children;
    children.reserve(population.size());
    for (size_t i = 0; i < population.size(); ++i) {
      if (rng.uniform() < options.mutation_probability) {
        children.push_back(space.mutate(pick(), rng));
      } else {
        children.push_back(space.crossover(pick(), pick(), rng));
      }
    }
    population = std::move(children);
    scores = score(population);
    offer_all(space, measured, population, scores, top);
  }
  return top.best_first();
}

std::vector<Config> random_unmeasured(const SearchSpace& space,
                                      const MeasuredFn& measured,
                                      std::unordered_set<std::string>& taken,
                                      size_t count,
                                      support::Rng& rng,
                                      bool plausible) {
  std::vector<Config> out;
  for (size_t tries = 0; out.size() < count && tries < 50 * count; ++tries) {
    Config c = plausible ? space.sample_plausible(rng) : space.sample(rng);
    std::string key = space.key(c);
    if (measured(key) || !taken.insert(std::move(key)).second)
      continue;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace tensortune::search

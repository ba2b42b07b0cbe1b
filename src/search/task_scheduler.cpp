// SPDX-License-Identifier: Apache-2.0
// The task scheduler: warm-up round-robin, then Ansor's gradient rule (or plain round-robin).
#include "tensortune/search/task_scheduler.h"

#include "tensortune/support/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace tensortune::search {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool has_time(double seconds) {
  return seconds > 0 && std::isfinite(seconds);
}

}  // namespace

const char* policy_name(SchedulePolicy policy) {
  switch (policy) {
    case SchedulePolicy::Gradient:
      return "gradient";
    case SchedulePolicy::RoundRobin:
      return "round-robin";
  }
  return "?";
}

SchedulePolicy parse_policy(const std::string& text) {
  if (text == "gradient")
    return SchedulePolicy::Gradient;
  if (text == "round-robin")
    return SchedulePolicy::RoundRobin;
  throw UserError("unknown task scheduler '" + text + "' (expected gradient or round-robin)");
}

TaskScheduler::TaskScheduler(std::vector<double> weights,
                             std::vector<double> flops,
                             std::vector<std::string> ops,
                             TaskSchedulerOptions options)
    : options_(options), rng_(options.seed) {
  TT_USER_CHECK(!weights.empty()) << "task scheduler: no tasks";
  TT_CHECK(weights.size() == flops.size() && weights.size() == ops.size());
  for (size_t i = 0; i < weights.size(); ++i) {
    TT_USER_CHECK(weights[i] > 0 && std::isfinite(weights[i]))
        << "task scheduler: task " << i << " has weight " << weights[i] << " (must be > 0)";
    Task t;
    t.weight = weights[i];
    t.flops = flops[i];
    t.op = ops[i];
    tasks_.push_back(std::move(t));
  }
}

void TaskScheduler::set_groups(std::vector<int> groups) {
  TT_CHECK(groups.size() == tasks_.size())
      << "task scheduler: " << groups.size() << " groups for " << tasks_.size() << " tasks";
  for (size_t i = 0; i < groups.size(); ++i)
    tasks_[i].group = groups[i];
}

double TaskScheduler::group_best(size_t i) const {
  auto best_of = [&](const Task& t) {
    return t.best_history.empty() ? kInf : t.best_history.back();
  };
  double best = best_of(tasks_[i]);
  if (tasks_[i].group < 0)
    return best;
  for (const Task& t : tasks_) {
    if (t.group == tasks_[i].group && has_time(best_of(t)))
      best = has_time(best) ? std::min(best, best_of(t)) : best_of(t);
  }
  return best;
}

void TaskScheduler::report(int task, double best_seconds) {
  Task& t = tasks_.at(static_cast<size_t>(task));
  t.rounds += 1;
  t.best_history.push_back(has_time(best_seconds) ? best_seconds : kInf);
}

void TaskScheduler::finish(int task) {
  tasks_.at(static_cast<size_t>(task)).finished = true;
}

double TaskScheduler::total_latency() const {
  double total = 0;
  std::map<int, std::pair<double, double>> groups;  // group -> (fastest, its weight)
  for (const Task& t : tasks_) {
    if (t.best_history.empty() || !has_time(t.best_history.back()))
      continue;
    const double best = t.best_history.back();
    if (t.group < 0) {
      total += t.weight * best;
      continue;
    }
    auto [it, fresh] = groups.emplace(t.group, std::make_pair(best, t.weight));
    if (!fresh && best < it->second.first)
      it->second = {best, t.weight};
  }
  for (const auto& [group, fastest] : groups)
    total += fastest.second * fastest.first;
  return total;
}

// d(total latency)/d(round) for task i, negative when more rounds should help (Ansor's
// task_scheduler.py): alpha * observed slope over the last rounds + (1 - alpha) * an optimistic
// forward slope, bounded by what the best FLOP rate of the same operator says is reachable.
double TaskScheduler::gradient(size_t i) const {
  const Task& t = tasks_[i];
  const double best = t.best_history.back();
  if (!has_time(best))
    return -kInf;  // nothing works yet: most urgent
  const auto n = static_cast<int>(t.best_history.size());
  double backward = 0;
  if (n > options_.backward_window) {
    const double before = t.best_history[static_cast<size_t>(n - 1 - options_.backward_window)];
    if (has_time(before))
      backward = (best - before) / options_.backward_window;
  }
  double reachable = best - best / n;
  double best_rate = 0;
  for (const Task& other : tasks_) {
    if (other.op != t.op || other.best_history.empty() || !has_time(other.best_history.back())) {
      continue;
    }
    best_rate = std::max(best_rate, other.flops / other.best_history.back());
  }
  if (best_rate > 0 && t.flops > 0)
    reachable = std::min(reachable, options_.beta * t.flops / best_rate);
  const double fastest = group_best(i);
  if (fastest < best) {
    // A slower form of its group: only beating the group's fastest would cut the latency.
    return t.weight * (1 - options_.alpha) * std::min(0.0, reachable - fastest);
  }
  const double forward = reachable - best;
  return t.weight * (options_.alpha * backward + (1 - options_.alpha) * forward);
}

int TaskScheduler::next() {
  std::vector<size_t> live;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (!tasks_[i].finished)
      live.push_back(i);
  }
  last_gradients_.clear();
  if (live.empty())
    return -1;
  if (options_.policy == SchedulePolicy::RoundRobin) {
    for (size_t k = 0; k < tasks_.size(); ++k) {
      const size_t i = (round_robin_next_ + k) % tasks_.size();
      if (!tasks_[i].finished) {
        round_robin_next_ = i + 1;
        return static_cast<int>(i);
      }
    }
  }
  for (size_t i : live) {
    if (tasks_[i].rounds == 0)
      return static_cast<int>(i);  // warm-up: everyone once
  }
  if (options_.eps_random > 0 && rng_.uniform() < options_.eps_random) {
    return static_cast<int>(live[rng_.pick(live.size())]);
  }
  size_t chosen = live.front();
  double lowest = kInf;
  bool all_equal = true;
  for (size_t i : live) {
    const double g = gradient(i);
    last_gradients_.push_back(g);
    if (g != last_gradients_.front())
      all_equal = false;
    if (g < lowest) {
      lowest = g;
      chosen = i;
    }
  }
  if (all_equal)
    chosen = live[rng_.pick(live.size())];
  return static_cast<int>(chosen);
}

}  // namespace tensortune::search

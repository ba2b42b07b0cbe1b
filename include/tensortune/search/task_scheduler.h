// SPDX-License-Identifier: Apache-2.0
// The task scheduler: shares one trial budget among the workloads of a model, giving the next round
// to the task whose improvement would cut the weighted total latency most (Ansor's gradient rule),
// or round-robin.
#pragma once

#include "tensortune/support/rng.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::search {

enum class SchedulePolicy : uint8_t { Gradient, RoundRobin };
/// "gradient" / "round-robin" and back; UserError on anything else.
const char* policy_name(SchedulePolicy policy);
SchedulePolicy parse_policy(const std::string& text);

struct TaskSchedulerOptions {
  SchedulePolicy policy = SchedulePolicy::Gradient;
  /// Weight of the backward (observed) gradient against the forward (optimistic) one.
  double alpha = 0.2;
  /// A task is assumed unable to run faster than `beta` times the best FLOP rate of its operator.
  double beta = 2.0;
  /// Rounds looked back for the observed gradient.
  int backward_window = 3;
  /// Probability of giving the round to a random live task.
  double eps_random = 0.05;
  uint64_t seed = 0;
};

class TaskScheduler {
 public:
  /// One entry per task: its weight (how often it runs in the model), FLOPs of one call and
  /// operator name (tasks of one operator bound each other's forward gradient).
  TaskScheduler(std::vector<double> weights,
                std::vector<double> flops,
                std::vector<std::string> ops,
                TaskSchedulerOptions options = {});

  /// The task that gets the next round, or -1 when every task is finished. Every live task gets
  /// one round before the gradient rule starts.
  int next();
  /// Tasks with the same group id (>= 0) compute the same thing in different forms (a conv
  /// layer, directly and by Winograd): the model runs the group's fastest, so the total latency
  /// counts only that one, and a round on a slower form is worth only what would beat it.
  /// -1 (the default) puts a task in a group of its own.
  void set_groups(std::vector<int> groups);
  /// Records a finished round of `task`: its best time so far (0 or inf = none yet).
  void report(int task, double best_seconds);
  /// Takes `task` out of the rotation (its space is exhausted or it stopped improving).
  void finish(int task);
  bool finished(int task) const { return tasks_[static_cast<size_t>(task)].finished; }

  /// Sum of weight × best time over the tasks that have one (per group: its fastest task).
  double total_latency() const;
  /// The gradients the last next() compared (for logs and tests; empty before the rule starts).
  const std::vector<double>& last_gradients() const { return last_gradients_; }
  int rounds(int task) const { return tasks_[static_cast<size_t>(task)].rounds; }

 private:
  struct Task {
    double weight = 1, flops = 0;
    std::string op;
    int group = -1;
    int rounds = 0;
    bool finished = false;
    std::vector<double> best_history;  ///< best seconds after each round (inf = none)
  };
  double gradient(size_t i) const;
  /// The fastest best time among the tasks of task i's group (its own when ungrouped).
  double group_best(size_t i) const;

  std::vector<Task> tasks_;
  TaskSchedulerOptions options_;
  support::Rng rng_;
  size_t round_robin_next_ = 0;
  std::vector<double> last_gradients_;
};

}  // namespace tensortune::search

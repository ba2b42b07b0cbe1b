// SPDX-License-Identifier: Apache-2.0
// A compiled model on disk (what `tensortune compile-model` writes and `run-model` loads):
// DIR/model.so (every unique kernel, built with the database's best records), DIR/model.h (their
// C prototypes), DIR/model.json (the run plan) and DIR/weights.bin (the packed constants).
#pragma once

#include "tensortune/driver/compile.h"
#include "tensortune/graph/executor.h"
#include "tensortune/graph/graph.h"
#include "tensortune/graph/run_plan.h"

#include <memory>
#include <string>
#include <vector>

namespace tensortune::graph {

/// What export_model wrote.
struct ExportedModel {
  std::string dir;
  std::string library_path, header_path, plan_path, weights_path;
  RunPlan plan;
  MemoryPlan memory;
  /// One per unique kernel, with the schedule each got (record, adapted or default).
  std::vector<driver::Compiled> functions;
};

/// Partitions `graph` (optimized), builds each unique kernel through `compiler` as function
/// `kernel_<i>` of DIR/model.so and writes the plan and the weights. Creates DIR; UserError
/// when a file cannot be written.
ExportedModel export_model(const Graph& graph, driver::Compiler& compiler, const std::string& dir);

/// A model folder loaded for running: the library opened with dlopen, every function of the
/// plan resolved, the weights read.
class LoadedModel {
 public:
  /// UserError naming the file for a missing folder or file, a malformed plan, weights of
  /// another size than the plan says, or a library lacking a function the plan calls.
  static LoadedModel load(const std::string& dir);

  const RunPlan& plan() const { return *plan_; }
  /// Runs the model (see RunPlan::execute). Not thread-safe: calls share one arena.
  void run(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) const;

 private:
  std::shared_ptr<void> library_;  // dlclose on the last copy
  std::shared_ptr<RunPlan> plan_;
  std::vector<KernelFunction> functions_;
  std::shared_ptr<std::vector<uint8_t>> arena_;
};

}  // namespace tensortune::graph

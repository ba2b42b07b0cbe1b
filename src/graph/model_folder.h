// SPDX-License-Identifier: Apache-2.0
// What the CPU and the GPU model folders share (model_library.cpp, gpu_model.cpp).
#pragma once

#include "tensortune/driver/compile.h"
#include "tensortune/graph/graph.h"
#include "tensortune/graph/model_library.h"
#include "tensortune/graph/partition.h"
#include "tensortune/graph/run_plan.h"

#include <memory>
#include <string>
#include <vector>

namespace tensortune::graph::detail {

/// The partition of a model to compile: validated, float32 inputs and outputs only, at least one
/// kernel (UserError otherwise, before anything is written).
Partition model_partition(const Graph& graph);

/// One export item per unique kernel ("kernel_<i>", the form built_tasks picks); item_of[k] is
/// the item kernel k calls.
std::vector<driver::ExportItem> model_items(const Graph& graph,
                                            const Partition& partition,
                                            const driver::Compiler& compiler,
                                            std::vector<size_t>& item_of);

/// The entry point of `plan` and what model.h documents of it.
driver::ModelDecl model_decl(const RunPlan& plan);

/// The items' workload names, unique within the model (a key-hash suffix where two share one).
std::vector<std::string> distinct_names(const std::vector<driver::ExportItem>& items);

/// dlopen of the library at `path` (RTLD_LOCAL; closed when the last owner goes); UserError
/// with dlerror() when it cannot be loaded.
std::shared_ptr<void> open_library(const std::string& path);

/// Writes a model file atomically; UserError naming it on failure.
void write_model_file(const std::string& path, const void* data, size_t bytes);

/// Writes m.plan_path: `plan_json` (the plan's JSON and what the caller added) with each
/// function's schedule provenance as "kernels" (load() ignores it; users read it).
void write_plan(const ExportedModel& m, support::Json plan_json);

}  // namespace tensortune::graph::detail

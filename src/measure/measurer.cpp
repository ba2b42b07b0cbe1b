// SPDX-License-Identifier: Apache-2.0
// The Measurer (see measurer.h): reference outputs checked against the interpreter, batches
// built then run, the consecutive-failure stop rule and the time totals.
#include "tensortune/measure/measurer.h"

#include "measure/host_reference.h"
#include "tensortune/ir/eval.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/measure/kernel_buffers.h"
#include "tensortune/runtime/cuda_driver.h"
#include "tensortune/support/error.h"
#include "tensortune/support/log.h"

#include <algorithm>

namespace tensortune::measure {
namespace {

/// How many stores the loop nest executes (loops of unknown extent count 64 iterations): the
/// interpreter's work, roughly.
class StoreCounter : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  int64_t total = 0;

 protected:
  void visit(const ir::For* op) override {
    const int64_t* extent = ir::as_const_int(op->extent);
    int64_t saved = scale_;
    scale_ = std::min<int64_t>(scale_ * (extent != nullptr ? std::max<int64_t>(*extent, 1) : 64),
                               int64_t{1} << 50);
    ir::IRVisitor::visit(op);
    scale_ = saved;
  }
  void visit(const ir::Store* op) override {
    total = std::min<int64_t>(total + scale_, int64_t{1} << 50);
    ir::IRVisitor::visit(op);
  }

 private:
  int64_t scale_ = 1;
};

/// Runs the interpreter on the inputs of `seed` and compares with the compiled outputs.
void check_with_interpreter(const ir::LoweredFunc& func,
                            const std::vector<std::string>& outputs,
                            const Tolerance& tolerance,
                            uint64_t seed) {
  KernelBuffers buffers(KernelSignature::of(func));
  buffers.fill_inputs(seed);
  buffers.poison_outputs();
  std::vector<void*> args(buffers.pointers(),
                          buffers.pointers() + buffers.signature().params.size());
  ir::eval(func, args);
  std::optional<std::string> diff = compare_outputs(buffers, outputs, tolerance);
  TT_CHECK(!diff) << "measure: the compiled default schedule of '" << func.name
                  << "' disagrees with the interpreter (compiled vs interpreted): " << *diff;
}

/// `options` for `target`: GPU targets run in a GPU worker. Checks for a device first, so a
/// machine without one fails before anything is built or started.
MeasurerOptions for_target(MeasurerOptions options, const target::Target& target) {
  options.run.gpu = target.is_gpu();
  if (options.run.gpu) {
    std::string why = runtime::cuda_unavailable_reason();
    TT_USER_CHECK(why.empty()) << "measure: no CUDA device: " << why;
  }
  return options;
}

}  // namespace

Measurer::Measurer(const target::Target& target, MeasurerOptions options)
    : options_(for_target(std::move(options), target)),
      builder_(target, options_.build),
      runner_(options_.run) {}

std::shared_ptr<const Reference> Measurer::make_reference(const ir::LoweredFunc& default_func,
                                                          const Tolerance& tolerance) {
  // On a GPU the default schedule (no thread bindings) would run on one thread: a GEMM 4096^3
  // would take hours. Its CPU build, its outer loops parallel, computes the same outputs, checked
  // below as on the CPU.
  BuildResult built = options_.run.gpu
                          ? builder_.build_for_host(detail::parallel_outer_loops(default_func))
                          : builder_.build({default_func}).at(0);
  TT_USER_CHECK(built.ok()) << "measure: the default schedule of '" << default_func.name
                            << "' does not build: " << built.message;
  auto reference = std::make_shared<Reference>();
  reference->id = next_reference_id_++;
  reference->signature = built.signature;
  reference->tolerance = tolerance;
  reference->seed = options_.run.seed;
  reference->outputs = runner_.outputs(built, reference->seed);
  StoreCounter counter;
  counter.visit(default_func.body);
  if (counter.total <= options_.interpreter_check_max_stores) {
    check_with_interpreter(default_func, reference->outputs, tolerance, reference->seed);
    TT_LOG(1) << "measure: the reference of '" << default_func.name << "' matches the interpreter";
  } else {
    TT_LOG(1) << "measure: the reference of '" << default_func.name << "' executes about "
              << counter.total << " stores, more than interpreter_check_max_stores ("
              << options_.interpreter_check_max_stores << "); not checked with the interpreter";
  }
  return reference;
}

std::vector<MeasureResult> Measurer::measure(const Reference& reference,
                                             const std::vector<ir::LoweredFunc>& candidates) {
  TT_USER_CHECK(!stopped()) << stop_reason_;
  double start = now_seconds();
  std::vector<BuildResult> builds = builder_.build(candidates);
  totals_.build_wall_seconds += now_seconds() - start;
  std::vector<MeasureResult> results;
  results.reserve(builds.size());
  for (const BuildResult& build : builds) {
    auto best = best_seconds_.find(reference.id);
    runner_.set_single_call_limit(options_.single_call_factor > 0 && best != best_seconds_.end()
                                      ? options_.single_call_factor * best->second
                                      : 0.0);
    results.push_back(runner_.run(build, reference));
    record(results.back());
    const MeasureResult& r = results.back();
    if (r.ok() && r.median_seconds > 0 && r.repeats.size() > 1) {
      double& b = best_seconds_.emplace(reference.id, r.median_seconds).first->second;
      b = std::min(b, r.median_seconds);
    }
  }
  totals_.wall_seconds += now_seconds() - start;
  return results;
}

void Measurer::record(const MeasureResult& result) {
  ++totals_.trials;
  ++totals_.by_status.at(static_cast<size_t>(result.status));
  totals_.run_seconds += result.run_seconds;
  totals_.verify_seconds += result.verify_seconds;
  if (result.ok()) {
    consecutive_errors_ = 0;
    recent_by_status_.fill(0);
    return;
  }
  ++consecutive_errors_;
  ++recent_by_status_.at(static_cast<size_t>(result.status));
  last_error_ = result.message.substr(0, result.message.find('\n'));
  if (options_.max_consecutive_errors <= 0 ||
      consecutive_errors_ < options_.max_consecutive_errors || stopped()) {
    return;
  }
  std::string counts;
  for (size_t s = 1; s < recent_by_status_.size(); ++s) {
    if (recent_by_status_[s] > 0) {
      counts += (counts.empty() ? "" : ", ") + std::to_string(recent_by_status_[s]) + " " +
                status_name(static_cast<MeasureStatus>(s));
    }
  }
  stop_reason_ = "measure: stopped after " + std::to_string(consecutive_errors_) +
                 " failed trials in a row (" + counts + "); the last: " + last_error_ +
                 ". Check the target and the schedule space, or raise the limit "
                 "(max_consecutive_errors)";
}

}  // namespace tensortune::measure

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
#include "tensortune/support/stats.h"

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

/// The timing protocol of round `round` of `rounds`: its share of the repeats (the first rounds
/// take the remainder) and of the budget; `rounds` is at most the repeats.
TimingOptions round_timing(TimingOptions timing, int round, int rounds) {
  const int repeat = std::max(1, timing.repeat);
  timing.repeat = repeat / rounds + (round < repeat % rounds ? 1 : 0);
  timing.budget_s /= rounds;
  return timing;
}

/// Adds a later round's result for the same candidate to `into`: its repeats and times (the
/// build counted once), or its failure, which replaces the success.
void merge_round(MeasureResult& into, const MeasureResult& round, int index, int rounds) {
  into.run_seconds += round.run_seconds;
  into.verify_seconds += round.verify_seconds;
  into.wall_seconds += round.wall_seconds - round.build_seconds;
  if (!round.ok()) {
    into.status = round.status;
    into.signal = round.signal;
    into.message = "in round " + std::to_string(index + 1) + " of " + std::to_string(rounds) +
                   " (it passed the earlier ones): " + round.message;
    into.repeats.clear();
    into.median_seconds = 0;
    return;
  }
  into.repeats.insert(into.repeats.end(), round.repeats.begin(), round.repeats.end());
  into.median_seconds = median(into.repeats);
}

}  // namespace

Measurer::Measurer(const target::Target& target, MeasurerOptions options)
    : options_(for_target(std::move(options), target)),
      builder_(target, options_.build),
      runner_(options_.run) {
  TT_USER_CHECK(options_.rounds >= 1)
      << "measure: rounds must be at least 1, got " << options_.rounds;
}

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
                                             const std::vector<ir::LoweredFunc>& candidates,
                                             Protocol protocol) {
  TT_USER_CHECK(!stopped()) << stop_reason_;
  double start = now_seconds();
  std::vector<BuildResult> builds = builder_.build(candidates);
  totals_.build_wall_seconds += now_seconds() - start;
  const int rounds = std::min(options_.rounds, std::max(1, options_.run.timing.repeat));
  std::vector<MeasureResult> results;
  results.reserve(builds.size());
  runner_.set_timing(round_timing(options_.run.timing, 0, rounds));
  for (const BuildResult& build : builds) {
    auto best = best_seconds_.find(reference.id);
    runner_.set_single_call_limit(protocol == Protocol::Search && options_.single_call_factor > 0 &&
                                          best != best_seconds_.end()
                                      ? options_.single_call_factor * best->second
                                      : 0.0);
    results.push_back(runner_.run(build, reference));
    const MeasureResult& r = results.back();
    if (r.ok() && r.median_seconds > 0 && r.run_seconds > 0) {
      double& b = best_seconds_.emplace(reference.id, r.median_seconds).first->second;
      b = std::min(b, r.median_seconds);
    }
  }
  // The later rounds run the candidates that passed and were timed by repeats (run_seconds > 0),
  // not by their check call alone; a check call that was fine once is not cut short again.
  for (int round = 1; round < rounds; ++round) {
    runner_.set_timing(round_timing(options_.run.timing, round, rounds));
    runner_.set_single_call_limit(0.0);
    for (size_t i = 0; i < builds.size(); ++i) {
      if (results[i].ok() && results[i].run_seconds > 0) {
        merge_round(results[i], runner_.run(builds[i], reference), round, rounds);
      }
    }
  }
  runner_.set_timing(options_.run.timing);
  for (const MeasureResult& r : results) {
    record(r);
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

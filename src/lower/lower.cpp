// SPDX-License-Identifier: Apache-2.0
// The lowering pipeline: build the loop nest, check GPU bindings, simplify, flatten storage,
// unswitch split guards, vectorize, unroll, simplify, hoist constant stages into the prepare
// function, with ir::verify between passes (Halide's lower() in miniature).
#include "tensortune/lower/lower.h"

#include "tensortune/ir/ir_printer.h"
#include "tensortune/ir/simplify.h"
#include "tensortune/ir/verify.h"
#include "tensortune/lower/build_loop_nest.h"
#include "tensortune/lower/check_gpu_bindings.h"
#include "tensortune/lower/flatten_storage.h"
#include "tensortune/lower/hoist_prepacked.h"
#include "tensortune/lower/unroll_loops.h"
#include "tensortune/lower/unswitch_guards.h"
#include "tensortune/lower/vectorize_loops.h"
#include "tensortune/support/log.h"

#include <cctype>

namespace tensortune::lower {
namespace {

class Pipeline {
 public:
  explicit Pipeline(const LowerOptions& options) : options_(options) {}

  /// Logs the pass, then the IR, and verifies it when asked.
  void after(const char* pass, const ir::LoweredFunc& f, bool flattened) {
    TT_LOG(1) << "lower: " << pass;
    TT_LOG(3) << "lower: after " << pass << ":\n" << ir::to_string(f);
    verified_ = false;
    if (options_.verify_each_pass) {
      verify(f, flattened);
    }
  }

  /// The final check, skipped when the last pass was already verified.
  void finish(const ir::LoweredFunc& f, bool flattened) {
    if (!verified_) {
      verify(f, flattened);
    }
  }

 private:
  void verify(const ir::LoweredFunc& f, bool flattened) {
    ir::VerifyOptions vo;
    vo.flattened = flattened;
    ir::verify(f, vo);
    verified_ = true;
  }

  const LowerOptions& options_;
  bool verified_ = false;
};

}  // namespace

ir::LoweredFunc lower(const schedule::LoopState& state,
                      const target::Target& target,
                      const std::string& name,
                      const LowerOptions& options) {
  Pipeline pipeline(options);
  LoopOrigins origins;
  ir::LoweredFunc f = build_loop_nest(state, name, &origins);
  pipeline.after("build_loop_nest", f, false);
  check_gpu_bindings(f.body, target, origins);
  TT_LOG(1) << "lower: check_gpu_bindings";
  f.body = ir::simplify(f.body);
  pipeline.after("simplify", f, false);
  if (options.stop_before_flatten) {
    pipeline.finish(f, false);
    return f;
  }
  f = flatten_storage(f);
  pipeline.after("flatten_storage", f, true);
  if (options.vectorize_and_unroll) {
    // Not on GPUs: a tile predicate there can depend on threadIdx, and the copies of a body
    // holding __syncthreads() would put barriers in divergent branches.
    if (!target.is_gpu()) {
      f.body = unswitch_guards(f.body);
      pipeline.after("unswitch_guards", f, true);
    }
    f.body = vectorize_loops(f.body);
    pipeline.after("vectorize_loops", f, true);
    f.body = unroll_loops(f.body);
    pipeline.after("unroll_loops", f, true);
  }
  f.body = ir::simplify(f.body);
  pipeline.after("simplify", f, true);
  if (!target.is_gpu()) {
    f = hoist_prepacked(std::move(f), state.workload().constant_inputs());
    pipeline.after("hoist_prepacked", f, true);
  }
  pipeline.finish(f, true);
  return f;
}

ir::LoweredFunc lower(const te::Workload& workload,
                      const schedule::Schedule& schedule,
                      const target::Target& target,
                      const LowerOptions& options) {
  schedule::LoopState state = schedule::apply_schedule(workload, schedule);
  return lower(state, target, function_name(workload), options);
}

std::string function_name(const te::Workload& workload) {
  std::string name;
  for (char c : workload.name()) {
    name += std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_';
  }
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) != 0) {
    name = "f_" + name;
  }
  return name;
}

}  // namespace tensortune::lower

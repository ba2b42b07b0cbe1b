// SPDX-License-Identifier: Apache-2.0
// Generated CUDA C checked without a GPU: the source is compiled by the host C++ compiler behind
// a small shim (one POSIX thread per CUDA thread, blocks one after another, __shared__ arrays as
// statics, __syncthreads() as a barrier of the block's threads) and each kernel's result is
// compared with ir::eval of the same lowered function. Missing barriers or wrong guards show up
// as wrong results (or as a hang, which the test runner's timeout reports).
#pragma once

#include "tensortune/schedule/step.h"
#include "tensortune/te/workload.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::codegen::emulation {

/// True when the host C++ compiler ('c++') the emulation needs is on PATH.
bool host_compiler_available();

/// One kernel launch to emulate: `kernel` of the source with `num_args` pointer parameters.
struct EmulatedLaunch {
  std::string kernel;
  std::array<int64_t, 3> grid{{1, 1, 1}};
  std::array<int64_t, 3> block{{1, 1, 1}};
  size_t num_args = 0;
};

/// Compiles CUDA C `source` behind the emulation shim into DIR/NAME.so with one
/// `extern "C" void tt_run_<i>(void** args)` per launch i, and loads it (RTLD_LOCAL). Returns
/// the dlopen handle, or null with the compiler's log (or dlerror) in `error`.
void* build_emulation(const std::string& source,
                      const std::vector<EmulatedLaunch>& launches,
                      const std::string& dir,
                      const std::string& name,
                      std::string* error);

/// Lowers `spec` with `steps` for 'cuda -arch=sm_90', runs the emulated kernels and ir::eval on
/// the same random inputs and compares every output (gtest assertions; skips without 'c++').
void expect_emulation_matches_eval(const std::string& spec,
                                   const std::vector<schedule::Step>& steps);
/// The same for a workload built in the test (float32 tensors only).
void expect_emulation_matches_eval(const te::Workload& workload,
                                   const std::vector<schedule::Step>& steps);
/// The same with the steps as a JSON array (the "steps" of a schedule file).
void expect_emulation_matches_eval(const std::string& spec, const std::string& steps_json);

}  // namespace tensortune::codegen::emulation

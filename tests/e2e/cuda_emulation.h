// SPDX-License-Identifier: Apache-2.0
// Generated CUDA C checked without a GPU: the source is compiled by the host C++ compiler behind
// a small shim (one POSIX thread per CUDA thread, blocks one after another, __shared__ arrays as
// statics, __syncthreads() as a barrier of the block's threads) and each kernel's result is
// compared with ir::eval of the same lowered function. Missing barriers or wrong guards show up
// as wrong results (or as a hang, which the test runner's timeout reports).
#pragma once

#include "tensortune/schedule/step.h"
#include "tensortune/te/workload.h"

#include <string>
#include <vector>

namespace tensortune::codegen::emulation {

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

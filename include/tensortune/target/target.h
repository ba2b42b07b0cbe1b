// SPDX-License-Identifier: Apache-2.0
// A plain description of the device code is generated for, parsed from strings such as
// "llvm -mcpu=znver4 -cores=2", "native" or "cuda -arch=sm_90". No backend library is used here.
#pragma once

#include <string>
#include <vector>

namespace tensortune::target {

enum class TargetKind { Llvm, Cuda };

struct Target {
  TargetKind kind = TargetKind::Llvm;
  /// LLVM CPU name ("znver4"); "native" until resolved against the host by codegen.
  std::string mcpu = "native";
  /// Extra LLVM feature flags ("+avx512f,-avx512vl"), may be empty.
  std::string mattr;
  /// Threads for parallel loops (CPU); 0 = all cores of the host.
  int cores = 0;
  /// Widest vector register in bits (512 for AVX-512); 0 = unknown, filled by host resolution.
  int vector_bits = 0;
  /// CUDA: "sm_90", "sm_80", ...
  std::string arch;
  /// GPU limits checked when binding axes.
  int max_threads_per_block = 1024;
  int max_shared_memory_bytes = 48 * 1024;
  int warp_size = 32;

  bool is_gpu() const { return kind == TargetKind::Cuda; }
  /// The number of a CUDA target's architecture (90 for "sm_90" and "sm_90a"); 0 without one.
  int sm_version() const;
  /// Canonical text: "llvm -mcpu=znver4 -cores=2 ..." with options in a fixed order; parse() of it
  /// gives back an equal Target.
  std::string to_string() const;
  bool operator==(const Target& other) const { return to_string() == other.to_string(); }
  bool operator!=(const Target& other) const { return !(*this == other); }

  /// Parses a target string. Throws UserError naming the bad option and listing the accepted ones.
  static Target parse(const std::string& text);
};

}  // namespace tensortune::target

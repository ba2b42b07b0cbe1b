// SPDX-License-Identifier: Apache-2.0
// Host memory for a kernel's parameters: inputs random from a seed (never zero), outputs
// poisoned so an unwritten element is caught, and the comparison of outputs with a reference.
#pragma once

#include "tensortune/measure/measure_input.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tensortune::measure {

/// One 64-byte aligned array per parameter (and prepacked buffer) of a kernel signature.
class KernelBuffers {
 public:
  /// Allocates every parameter; UserError for a dtype that cannot be filled (float16, ...).
  explicit KernelBuffers(KernelSignature signature);

  /// Fills the inputs with random values in [-1, -0.1] u [0.1, 1] (integers: -4..4 without 0),
  /// the same bytes for the same seed and signature in every process.
  void fill_inputs(uint64_t seed);
  /// Fills the outputs with NaN (integers: the byte 0xDE), so a kernel that leaves an element
  /// unwritten fails the comparison.
  void poison_outputs();
  /// Copies the inputs of `other`, whose signature must be compatible.
  void copy_inputs_from(const KernelBuffers& other);

  /// The argument array of the kernel ABI (inputs, outputs, then prepacked buffers, which the
  /// kernel's prepare function fills).
  void* const* pointers() const { return pointers_.data(); }
  const KernelSignature& signature() const { return signature_; }
  void* data(size_t index) const { return pointers_[index]; }
  /// The bytes of parameter `index`.
  std::string bytes(size_t index) const;
  /// The bytes of every output, in parameter order (the form of Reference::outputs).
  std::vector<std::string> output_bytes() const;
  /// Evicts every parameter except the first output from the CPU caches.
  void flush_caches() const;

 private:
  KernelSignature signature_;
  std::vector<std::shared_ptr<void>> storage_;
  std::vector<void*> pointers_;
};

/// Compares output `index` of `got` with `expected` (that output's bytes from a reference run).
/// Returns nothing when they match, else a message such as "C[3, 17] = nan, expected 1.25
/// (tolerance 0.00126); 512 of 4096 elements differ".
std::optional<std::string> compare_output(const KernelBuffers& got,
                                          size_t index,
                                          const std::string& expected,
                                          const Tolerance& tolerance);

/// compare_output for every output; the messages of the outputs that differ, joined by lines.
std::optional<std::string> compare_outputs(const KernelBuffers& got,
                                           const std::vector<std::string>& expected,
                                           const Tolerance& tolerance);

}  // namespace tensortune::measure

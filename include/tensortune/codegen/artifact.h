// SPDX-License-Identifier: Apache-2.0
// A built kernel: a callable CPU function (JIT) and, on request, its generated text forms.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tensortune::codegen {

/// The ABI of every generated CPU kernel: buffers are the function's params in order (inputs,
/// then outputs, then prepacked buffers; dense, row-major); returns 0 on success.
/// A kernel with prepacked buffers (stages computed from constant inputs alone, such as weights
/// copied into a blocked layout) has a second function, NAME_prepare, with the same argument
/// array: it fills the prepacked buffers from the constant inputs, once, before the kernel runs.
using KernelFn = int32_t (*)(void* const* buffers);

/// The symbol of a kernel's prepare function: NAME_prepare.
inline std::string prepare_function_name(const std::string& kernel) {
  return kernel + "_prepare";
}

class Artifact {
 public:
  Artifact() = default;
  Artifact(std::string name,
           KernelFn fn,
           std::shared_ptr<void> owner,
           KernelFn prepare_fn = nullptr)
      : name_(std::move(name)), fn_(fn), prepare_(prepare_fn), owner_(std::move(owner)) {}
  const std::string& name() const { return name_; }
  KernelFn function() const { return fn_; }
  bool defined() const { return fn_ != nullptr; }
  /// Calls the kernel; InternalError when the artifact is empty.
  int32_t operator()(void* const* buffers) const;
  /// True when the kernel has prepacked buffers and a prepare function.
  bool has_prepare() const { return prepare_ != nullptr; }
  /// The prepare function itself (nullptr when there is none).
  KernelFn prepare_function() const { return prepare_; }
  /// Fills the prepacked buffers from the constant inputs (call once after the inputs change and
  /// before the kernel); returns 0 and does nothing for a kernel without prepacked buffers.
  int32_t prepare(void* const* buffers) const;

 private:
  std::string name_;
  KernelFn fn_ = nullptr;
  KernelFn prepare_ = nullptr;
  std::shared_ptr<void> owner_;  // keeps the JIT (and its code) alive
};

}  // namespace tensortune::codegen

// SPDX-License-Identifier: Apache-2.0
// A built kernel: a callable CPU function (JIT) and, on request, its generated text forms.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tensortune::codegen {

/// The ABI of every generated CPU kernel: buffers are the function's params in order (inputs,
/// then outputs; dense, row-major); returns 0 on success.
using KernelFn = int32_t (*)(void* const* buffers);

class Artifact {
 public:
  Artifact() = default;
  Artifact(std::string name, KernelFn fn, std::shared_ptr<void> owner)
      : name_(std::move(name)), fn_(fn), owner_(std::move(owner)) {}
  const std::string& name() const { return name_; }
  KernelFn function() const { return fn_; }
  bool defined() const { return fn_ != nullptr; }
  /// Calls the kernel; InternalError when the artifact is empty.
  int32_t operator()(void* const* buffers) const;

 private:
  std::string name_;
  KernelFn fn_ = nullptr;
  std::shared_ptr<void> owner_;  // keeps the JIT (and its code) alive
};

}  // namespace tensortune::codegen

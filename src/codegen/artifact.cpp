// SPDX-License-Identifier: Apache-2.0
// Artifact: a built kernel and the JIT that owns its code.
#include "tensortune/codegen/artifact.h"

#include "tensortune/support/error.h"

namespace tensortune::codegen {

int32_t Artifact::operator()(void* const* buffers) const {
  TT_CHECK(fn_ != nullptr) << "codegen: calling an empty artifact '" << name_ << "'";
  return fn_(buffers);
}

int32_t Artifact::prepare(void* const* buffers) const {
  TT_CHECK(fn_ != nullptr) << "codegen: preparing an empty artifact '" << name_ << "'";
  return prepare_ != nullptr ? prepare_(buffers) : 0;
}

}  // namespace tensortune::codegen

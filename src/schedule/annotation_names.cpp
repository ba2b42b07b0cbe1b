// SPDX-License-Identifier: Apache-2.0
// The annotate step words. They differ from ir::for_kind_name() for the CPU
// kinds because a step is an imperative ("vectorize C.j.i") while a loop kind
// is a property ("vectorized").
#include "annotation_names.h"

#include "tensortune/support/error.h"

namespace tensortune::schedule {

const char* annotation_name(ir::ForKind kind) {
  switch (kind) {
    case ir::ForKind::Serial:
      return "serial";
    case ir::ForKind::Parallel:
      return "parallel";
    case ir::ForKind::Vectorized:
      return "vectorize";
    case ir::ForKind::Unrolled:
      return "unroll";
    case ir::ForKind::BlockX:
      return "blockIdx.x";
    case ir::ForKind::BlockY:
      return "blockIdx.y";
    case ir::ForKind::BlockZ:
      return "blockIdx.z";
    case ir::ForKind::ThreadX:
      return "threadIdx.x";
    case ir::ForKind::ThreadY:
      return "threadIdx.y";
    case ir::ForKind::ThreadZ:
      return "threadIdx.z";
  }
  TT_CHECK(false) << "bad loop kind " << static_cast<int>(kind);
  return "";
}

bool parse_annotation(const std::string& word, ir::ForKind* kind) {
  for (int k = 0; k <= static_cast<int>(ir::ForKind::ThreadZ); ++k) {
    auto candidate = static_cast<ir::ForKind>(k);
    if (word == annotation_name(candidate)) {
      *kind = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace tensortune::schedule

// SPDX-License-Identifier: Apache-2.0
// Private to src/schedule: the words naming an annotate step's loop kind, as
// used in step lines, error messages and JSON ("vectorize", "unroll",
// "blockIdx.x", ...).
#pragma once

#include "tensortune/ir/stmt.h"

#include <string>

namespace tensortune::schedule {

/// "serial", "parallel", "vectorize", "unroll", "blockIdx.x" ... "threadIdx.z".
const char* annotation_name(ir::ForKind kind);
/// The kind named `word` by annotation_name(); false when no kind has that
/// name.
bool parse_annotation(const std::string& word, ir::ForKind* kind);

}  // namespace tensortune::schedule

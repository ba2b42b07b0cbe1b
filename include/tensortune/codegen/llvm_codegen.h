// SPDX-License-Identifier: Apache-2.0
// Loop IR -> LLVM IR -> machine code, for CPU targets. No LLVM type appears in this header.
#pragma once

#include "tensortune/codegen/artifact.h"
#include "tensortune/ir/stmt.h"
#include "tensortune/target/target.h"

#include <string>
#include <vector>

namespace tensortune::codegen {

/// The host as an LLVM target: mcpu and features from LLVM's host detection, vector_bits from the
/// features (512 with AVX-512F), cores from the hardware. Fields already set in `base` other than
/// "native" are kept.
target::Target resolve_host(const target::Target& base = {});

/// Compiles a flattened LoweredFunc in process (ORC LLJIT, O3). Throws UserError on an
/// unsupported construct or a GPU target; InternalError when LLVM rejects the module.
Artifact build_cpu(const ir::LoweredFunc& func, const target::Target& target);

/// The optimised (or, with optimize = false, the freshly generated) LLVM IR text.
std::string emit_llvm_ir(const ir::LoweredFunc& func, const target::Target& target,
                         bool optimize = true);
/// The target assembly text (AT&T syntax).
std::string emit_assembly(const ir::LoweredFunc& func, const target::Target& target);

/// Writes a shared library exporting `extern "C" int32_t NAME(void* const* buffers)` for each
/// function, with tensortune's runtime linked in so the library loads on its own.
/// Throws UserError when the output cannot be written or the system linker fails.
void export_shared_library(const std::vector<ir::LoweredFunc>& funcs, const target::Target& target,
                           const std::string& path);

}  // namespace tensortune::codegen

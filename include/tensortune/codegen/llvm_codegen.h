// SPDX-License-Identifier: Apache-2.0
// Loop IR -> LLVM IR -> machine code, for CPU targets. No LLVM type appears in this header.
#pragma once

#include "tensortune/codegen/artifact.h"
#include "tensortune/codegen/model_entry.h"
#include "tensortune/ir/stmt.h"
#include "tensortune/runtime/cuda_model.h"
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
std::string emit_llvm_ir(const ir::LoweredFunc& func,
                         const target::Target& target,
                         bool optimize = true);
/// The target assembly text (AT&T syntax).
std::string emit_assembly(const ir::LoweredFunc& func, const target::Target& target);

/// The freshly generated (unoptimised, verified) module of `func` as LLVM bitcode: the form in
/// which a candidate crosses to a build worker process. Throws like build_cpu.
std::string emit_bitcode(const ir::LoweredFunc& func, const target::Target& target);

/// Optimises bitcode from emit_bitcode (O3, `target`'s cost model) and emits a position-independent
/// relocatable object file. Throws UserError when the bytes are not bitcode.
std::string compile_bitcode(const std::string& bitcode, const target::Target& target);

/// Links an object file from compile_bitcode into this process (ORC LLJIT, with the runtime and
/// libm symbols bound to this binary's copies) and returns its function `name`, with its
/// NAME_prepare function when `with_prepare` (a kernel with prepacked buffers). Throws UserError
/// when the bytes are not a loadable object or a function is not defined in it.
Artifact load_object(const std::string& object, const std::string& name, bool with_prepare = false);

/// Writes a shared library exporting `extern "C" int32_t NAME(void* const* buffers)` for each
/// function, with tensortune's runtime linked in so the library loads on its own (it needs only
/// system libraries: libc, libm, libpthread, libstdc++). The runtime archive is found by
/// find_runtime_archive(). Throws UserError when the output cannot be written, the runtime
/// archive is missing or the system linker fails.
void export_shared_library(const std::vector<ir::LoweredFunc>& funcs,
                           const target::Target& target,
                           const std::string& path);
/// Same, linking the runtime archive `runtime_archive` (find_runtime_archive(runtime_archive)).
void export_shared_library(const std::vector<ir::LoweredFunc>& funcs,
                           const target::Target& target,
                           const std::string& path,
                           const std::string& runtime_archive);

/// Same, with a whole model's C entry point in the library too (tt_model_run and its query
/// functions, see model_entry.h), calling the functions of `funcs`. Throws UserError as above,
/// and when a call of `entry` names a function not in `funcs`, passes another number of buffers
/// than it takes, or an input, output, arena or weight index is out of range.
void export_shared_library(const std::vector<ir::LoweredFunc>& funcs,
                           const target::Target& target,
                           const std::string& path,
                           const std::string& runtime_archive,
                           const ModelEntry& entry);

/// What export_shared_library writes besides the functions.
struct SharedLibraryOptions {
  /// The runtime archive (find_runtime_archive(runtime_archive)).
  std::string runtime_archive;
  /// A whole model's entry point (as the overload above), or null.
  const ModelEntry* entry = nullptr;
  /// When not empty (a C identifier), the library also exports
  ///   void NAME_set_num_threads(int32_t n);   (n >= 1; 0 = one per hardware thread)
  ///   int32_t NAME_get_num_threads(void);
  /// the thread count of its own copy of the runtime's pool, which its parallel loops run on.
  /// UserError when a function of `funcs` has one of these names.
  std::string threads_prefix;
};
/// Same as above, with `options`.
void export_shared_library(const std::vector<ir::LoweredFunc>& funcs,
                           const target::Target& target,
                           const std::string& path,
                           const SharedLibraryOptions& options);

/// Writes a GPU model library: `image` (serialized) embedded as data, the size queries of
/// `sizes` (its calls are ignored), and the tt_model_cuda_* entry points (model_entry.h)
/// forwarding to the runtime linked in (runtime/cuda_model.h), compiled for the host `host`.
/// UserError as export_shared_library.
void export_cuda_model_library(const runtime::CudaModelImage& image,
                               const ModelEntry& sizes,
                               const target::Target& host,
                               const std::string& path,
                               const std::string& runtime_archive = "");

/// The path of tensortune's runtime archive (libtt_runtime.a) that exported libraries link:
/// `explicit_path` when not empty (UserError when it is not a file); else the first that exists
/// of: LIBDIR/tensortune/ and LIBDIR/ where LIBDIR holds the binary this code is loaded from
/// (support::loaded_binary_dir: libtensortune.so's folder, or the executable's), beside the
/// running executable, EXE_DIR/../lib/tensortune/, EXE_DIR/../lib/, and the build tree this
/// library was compiled in. UserError listing the places tried when none exists.
std::string find_runtime_archive(const std::string& explicit_path = "");

}  // namespace tensortune::codegen

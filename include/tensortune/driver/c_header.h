// SPDX-License-Identifier: Apache-2.0
// The C header written beside an exported kernel library: one prototype per function and a
// comment table of its buffers (position, role, element type, shape), and a model's entry point.
#pragma once

#include "tensortune/codegen/model_entry.h"
#include "tensortune/ir/stmt.h"

#include <string>
#include <vector>

namespace tensortune::driver {

/// The C element type of a buffer of `dtype` ("float", "double", "int32_t", ...; "uint16_t" for
/// float16/bfloat16 bits). Throws UserError for a type with no C equivalent (bool, vectors).
std::string c_type(ir::DataType dtype);

/// True when `name` is a C identifier ([A-Za-z_][A-Za-z0-9_]*) that is no C or C++ keyword
/// (nor int32_t / int64_t, which the header uses).
bool is_c_identifier(const std::string& name);

/// What an exported function named `name` would collide with, "" when nothing: the program's
/// `main`, a function of tensortune's runtime (tt_parallel_for, tt_alloc, ...), a model entry
/// point's symbol (tt_model_run, ...), or a C library function the generated code or a caller
/// needs (expf, memcpy, malloc, ...). Loaded with RTLD_GLOBAL, such a kernel would replace the
/// real function for the whole process.
std::string symbol_collision(const std::string& name);

/// A model input or output as a header documents it.
struct TensorDecl {
  std::string name;
  ir::DataType dtype;
  std::vector<int64_t> shape;
};

/// A whole model's entry point for an exported library: the calls it makes (`entry`, whose
/// input_bytes and output_bytes are the sizes of `inputs` and `outputs`), the tensors the header
/// documents, and the file beside the library that holds the weights.
struct ModelDecl {
  codegen::ModelEntry entry;
  std::vector<TensorDecl> inputs;
  std::vector<TensorDecl> outputs;
  std::string weights_file = "weights.bin";
};

/// A self-contained C (and C++) header for library `library_name`: include guard, <stdint.h>,
/// extern "C", and for each function `int32_t NAME(void* const* buffers);` preceded by a comment
/// listing buffers[i] with its tensor name, input/output, element type and shape. `notes` (empty,
/// or one per function) adds a line to each function's comment (e.g. where its schedule came
/// from). With `model`, the entry point's prototypes (codegen/model_entry.h) follow, with a
/// comment listing inputs[i] and outputs[i] and showing how to load the weights and call it.
/// Throws UserError when a name is not a C identifier.
std::string c_header(const std::vector<ir::LoweredFunc>& funcs,
                     const std::string& library_name,
                     const std::vector<std::string>& notes = {},
                     const ModelDecl* model = nullptr);

}  // namespace tensortune::driver

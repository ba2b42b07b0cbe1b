// SPDX-License-Identifier: Apache-2.0
// The C header of an exported library: what a user needs to call a kernel from C without
// tensortune (the buffer order, element types and shapes), and a whole model's entry point.
#include "tensortune/driver/c_header.h"

#include "tensortune/codegen/model_entry.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

namespace tensortune::driver {

std::string c_type(ir::DataType dtype) {
  TT_USER_CHECK(dtype.is_scalar() && !dtype.is_bool())
      << "c header: no C element type for '" << dtype.to_string() << "'";
  if (dtype.code() == ir::DataType::Code::Float && dtype.bits() == 32) {
    return "float";
  }
  if (dtype.code() == ir::DataType::Code::Float && dtype.bits() == 64) {
    return "double";
  }
  if (dtype.is_float()) {
    TT_USER_CHECK(dtype.bits() == 16)
        << "c header: no C element type for '" << dtype.to_string() << "'";
    return "uint16_t";  // the raw bits of a float16 / bfloat16
  }
  int bits = dtype.bits();
  TT_USER_CHECK(bits == 8 || bits == 16 || bits == 32 || bits == 64)
      << "c header: no C element type for '" << dtype.to_string() << "'";
  return std::string(dtype.is_uint() ? "uint" : "int") + std::to_string(bits) + "_t";
}

bool is_c_identifier(const std::string& name) {
  auto ident = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  };
  // The header declares the name in C and is included from C++ too: neither language's
  // keywords (nor the C library's names the header itself uses) can name a function.
  static const std::set<std::string> kReserved = {"alignas",
                                                  "alignof",
                                                  "and",
                                                  "and_eq",
                                                  "asm",
                                                  "auto",
                                                  "bitand",
                                                  "bitor",
                                                  "bool",
                                                  "break",
                                                  "case",
                                                  "catch",
                                                  "char",
                                                  "char16_t",
                                                  "char32_t",
                                                  "char8_t",
                                                  "class",
                                                  "co_await",
                                                  "co_return",
                                                  "co_yield",
                                                  "compl",
                                                  "concept",
                                                  "const",
                                                  "const_cast",
                                                  "consteval",
                                                  "constexpr",
                                                  "constinit",
                                                  "continue",
                                                  "decltype",
                                                  "default",
                                                  "delete",
                                                  "do",
                                                  "double",
                                                  "dynamic_cast",
                                                  "else",
                                                  "enum",
                                                  "explicit",
                                                  "export",
                                                  "extern",
                                                  "false",
                                                  "float",
                                                  "for",
                                                  "friend",
                                                  "goto",
                                                  "if",
                                                  "inline",
                                                  "int",
                                                  "int32_t",
                                                  "int64_t",
                                                  "long",
                                                  "mutable",
                                                  "namespace",
                                                  "new",
                                                  "noexcept",
                                                  "not",
                                                  "not_eq",
                                                  "nullptr",
                                                  "operator",
                                                  "or",
                                                  "or_eq",
                                                  "private",
                                                  "protected",
                                                  "public",
                                                  "register",
                                                  "reinterpret_cast",
                                                  "requires",
                                                  "restrict",
                                                  "return",
                                                  "short",
                                                  "signed",
                                                  "sizeof",
                                                  "static",
                                                  "static_assert",
                                                  "static_cast",
                                                  "struct",
                                                  "switch",
                                                  "template",
                                                  "this",
                                                  "thread_local",
                                                  "throw",
                                                  "true",
                                                  "try",
                                                  "typedef",
                                                  "typeid",
                                                  "typename",
                                                  "union",
                                                  "unsigned",
                                                  "using",
                                                  "virtual",
                                                  "void",
                                                  "volatile",
                                                  "wchar_t",
                                                  "while",
                                                  "xor",
                                                  "xor_eq",
                                                  "_Alignas",
                                                  "_Alignof",
                                                  "_Atomic",
                                                  "_Bool",
                                                  "_Complex",
                                                  "_Generic",
                                                  "_Imaginary",
                                                  "_Noreturn",
                                                  "_Static_assert",
                                                  "_Thread_local"};
  return !name.empty() && std::isdigit(static_cast<unsigned char>(name[0])) == 0 &&
         std::all_of(name.begin(), name.end(), ident) && kReserved.count(name) == 0;
}

std::string symbol_collision(const std::string& name) {
  if (name == "main")
    return "the program's entry point 'main'";
  // runtime/parallel.h's C API (driver may not include runtime/): the library exports none of
  // them, but a process that loads it next to tensortune or another model has them.
  static const std::set<std::string> kRuntime = {
      "tt_parallel_for", "tt_set_num_threads", "tt_get_num_threads", "tt_alloc", "tt_try_alloc",
      "tt_free",         "tt_parallel_wake"};
  if (kRuntime.count(name) != 0)
    return "tensortune's runtime function '" + name + "'";
  for (const char* symbol :
       {codegen::kModelRun, codegen::kModelArenaBytes, codegen::kModelWeightBytes,
        codegen::kModelNumInputs, codegen::kModelNumOutputs, codegen::kModelInputBytes,
        codegen::kModelOutputBytes, codegen::kModelCallsHash}) {
    if (name == symbol)
      return std::string("the model entry point's symbol '") + symbol + "'";
  }
  static const std::set<std::string> kLibc = {
      "exp",  "expf",   "log",     "logf",    "sqrt",   "sqrtf",  "tanh",    "tanhf", "erf",
      "erff", "fabs",   "fabsf",   "pow",     "powf",   "floor",  "floorf",  "ceil",  "ceilf",
      "fmod", "fmodf",  "fmin",    "fminf",   "fmax",   "fmaxf",  "sin",     "sinf",  "cos",
      "cosf", "memcpy", "memset",  "memmove", "malloc", "calloc", "realloc", "free",  "abort",
      "exit", "printf", "fprintf", "puts",    "fopen",  "fread",  "fwrite",  "fclose"};
  if (kLibc.count(name) != 0)
    return "the C library's function '" + name + "'";
  return "";
}

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d) {
    text += (d == 0 ? "" : ", ") + std::to_string(shape[d]);
  }
  return text + "]";
}

/// The comment block and prototype of one function.
void write_function(std::ostringstream& os, const ir::LoweredFunc& f, const std::string& note) {
  os << "/* " << f.name << ": " << f.num_inputs << " input(s), " << f.params.size() - f.num_inputs
     << " output(s).\n";
  if (!note.empty()) {
    os << " * " << note << "\n";
  }
  os << " *\n";
  std::vector<ir::Buffer> all = f.params;
  all.insert(all.end(), f.prepacked.begin(), f.prepacked.end());
  for (size_t i = 0; i < all.size(); ++i) {
    const ir::Buffer& b = all[i];
    std::string index = "buffers[" + std::to_string(i) + "]";
    std::string role = i < f.num_inputs ? "input" : i < f.params.size() ? "output" : "prepacked";
    os << " *   " << index << std::string(index.size() < 12 ? 12 - index.size() : 1, ' ') << role
       << std::string(role.size() < 8 ? 8 - role.size() : 1, ' ') << c_type(b.dtype()) << " "
       << b.name() << shape_text(b.shape()) << "  (" << b.dtype().to_string() << ", "
       << b.num_elements() << " elements)\n";
  }
  if (!f.prepacked.empty()) {
    os << " *\n * The prepacked buffers (allocated by the caller) hold constant inputs rewritten\n"
       << " * into the kernel's layout: call " << f.name << "_prepare once with the same array\n"
       << " * whenever those inputs change, then " << f.name << " as often as needed.\n";
  }
  os << " */\nint32_t " << f.name << "(void* const* buffers);\n";
  if (!f.prepacked.empty()) {
    os << "int32_t " << f.name << "_prepare(void* const* buffers);\n";
  }
  os << "\n";
}

/// `text` safe inside a C block comment.
std::string comment_safe(std::string text) {
  for (size_t at = text.find("*/"); at != std::string::npos; at = text.find("*/", at)) {
    text.replace(at, 2, "* /");
  }
  return text;
}

/// The rows "inputs[0]   float x[1, 3, 8, 8]  (float32, 192 elements)" of `tensors`.
void write_tensors(std::ostringstream& os,
                   const std::vector<TensorDecl>& tensors,
                   const std::vector<int64_t>& bytes,
                   const char* array) {
  TT_CHECK(tensors.size() == bytes.size()) << "one size per model " << array;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorDecl& t = tensors[i];
    int64_t numel = 1;
    for (int64_t d : t.shape)
      numel *= d;
    TT_CHECK(numel * t.dtype.bytes() == bytes[i]) << "model " << array << " " << i << " size";
    std::string index = std::string(array) + "[" + std::to_string(i) + "]";
    os << " *   " << index << std::string(index.size() < 12 ? 12 - index.size() : 1, ' ')
       << c_type(t.dtype) << " " << comment_safe(t.name) << shape_text(t.shape) << "  ("
       << t.dtype.to_string() << ", " << numel << " elements)\n";
  }
}

/// The comment block and prototypes of a model's entry point.
void write_model(std::ostringstream& os, const ModelDecl& m, const std::string& library_name) {
  const codegen::ModelEntry& e = m.entry;
  os << "/* The model: " << codegen::kModelRun << " makes the " << e.calls.size()
     << " kernel call(s) of the model in order\n"
     << " * and returns the first non-zero kernel status (0 on success).\n *\n";
  write_tensors(os, m.inputs, e.input_bytes, "inputs");
  write_tensors(os, m.outputs, e.output_bytes, "outputs");
  os << " *\n"
     << " * weights: the " << e.weight_bytes << " bytes of " << comment_safe(m.weights_file)
     << " (beside " << library_name << ".so), read only;\n"
     << " * arena: " << e.arena_bytes << " bytes of scratch for the intermediate values (best\n"
     << " * 64-byte aligned, as the weights).\n"
     << " * Usage (error checks left out):\n"
     << " *   void *weights, *arena;\n"
     << " *   posix_memalign(&weights, 64, " << codegen::kModelWeightBytes << "());\n"
     << " *   FILE* f = fopen(\"" << comment_safe(m.weights_file) << "\", \"rb\");\n"
     << " *   fread(weights, 1, " << codegen::kModelWeightBytes << "(), f);\n"
     << " *   fclose(f);\n"
     << " *   posix_memalign(&arena, 64, " << codegen::kModelArenaBytes << "());\n"
     << " *   void* inputs[] = {x};   // one pointer per input, in the order above\n"
     << " *   void* outputs[] = {y};  // one per output\n"
     << " *   int32_t status = " << codegen::kModelRun
     << "(inputs, outputs, arena, weights);  // 0: success\n"
     << " * Calls that run at the same time need an arena each; they may share the weights.\n"
     << " * " << codegen::kModelInputBytes << "(i) and " << codegen::kModelOutputBytes
     << "(i) give a tensor's size in bytes\n"
     << " * (-1: no such tensor).\n"
     << " */\n"
     << "int32_t " << codegen::kModelRun
     << "(void* const* inputs, void* const* outputs, void* arena, const void* weights);\n"
     << "int64_t " << codegen::kModelArenaBytes << "(void);\n"
     << "int64_t " << codegen::kModelWeightBytes << "(void);\n"
     << "int32_t " << codegen::kModelNumInputs << "(void);\n"
     << "int32_t " << codegen::kModelNumOutputs << "(void);\n"
     << "int64_t " << codegen::kModelInputBytes << "(int32_t i);\n"
     << "int64_t " << codegen::kModelOutputBytes << "(int32_t i);\n\n";
}

}  // namespace

std::string c_header(const std::vector<ir::LoweredFunc>& funcs,
                     const std::string& library_name,
                     const std::vector<std::string>& notes,
                     const ModelDecl* model) {
  TT_USER_CHECK(is_c_identifier(library_name))
      << "c header: library name '" << library_name << "' is not a C identifier";
  TT_CHECK(notes.empty() || notes.size() == funcs.size()) << "one note per function";
  std::string guard = library_name;
  std::transform(guard.begin(), guard.end(), guard.begin(), [](char c) {
    return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  });
  guard = "TENSORTUNE_" + guard + "_H_";
  std::ostringstream os;
  os << "/* " << library_name << ".h: kernels generated by tensortune; do not edit.\n"
     << " *\n"
     << " * Link with -l" << library_name << " (lib" << library_name
     << ".so; it needs only the C and C++ runtime\n"
     << " * libraries). Every function takes `buffers`, an array of pointers to dense row-major\n"
     << " * arrays: the inputs in declaration order, then the outputs, then the prepacked buffers\n"
     << " * of a kernel that has them. It returns 0 on success.\n"
     << " *\n"
     << " * Parallel loops run on a thread pool private to the library: " << library_name
     << "_set_num_threads\n"
     << " * sets its size (n >= 1; 0, the default, is one thread per hardware thread). Between\n"
     << " * loops a worker spins TT_THREAD_SPIN_US microseconds (environment, read once; default\n"
     << " * 100, 0 = never) before it sleeps.\n"
     << " */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n#include <stdint.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  for (size_t i = 0; i < funcs.size(); ++i) {
    TT_USER_CHECK(is_c_identifier(funcs[i].name))
        << "c header: function name '" << funcs[i].name << "' is not a C identifier";
    write_function(os, funcs[i], notes.empty() ? "" : notes[i]);
  }
  os << "/* The number of threads this library's parallel loops use. */\n"
     << "void " << library_name << "_set_num_threads(int32_t n);\n"
     << "int32_t " << library_name << "_get_num_threads(void);\n\n";
  if (model != nullptr) {
    write_model(os, *model, library_name);
  }
  os << "#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n\n#endif  /* " << guard << " */\n";
  return os.str();
}

}  // namespace tensortune::driver

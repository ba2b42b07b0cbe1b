// SPDX-License-Identifier: Apache-2.0
// Identifiers, C types and the device helper functions of generated CUDA C. Helpers implement
// the IR's semantics where C's differ: floor division/modulo and NaN-propagating min/max.
#include "codegen/cuda/internal.h"
#include "tensortune/support/error.h"

#include <cctype>

namespace tensortune::codegen::cuda {
namespace {

/// C++ keywords, CUDA builtins and the names the generated code itself uses.
const std::set<std::string>& reserved_names() {
  static const std::set<std::string> names = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "char16_t", "char32_t", "class", "compl", "const", "const_cast",
      "constexpr", "continue", "decltype", "default", "delete", "do", "double", "dynamic_cast",
      "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
      "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
      "reinterpret_cast", "restrict", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
      "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
      "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      // CUDA builtins and the math functions the generated code calls.
      "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "min", "max", "abs",
      "exp", "expf", "log", "logf", "sqrt", "sqrtf", "tanh", "tanhf", "erf", "erff", "fabs",
      "fabsf", "pow", "powf", "floor", "floorf", "ceil", "ceilf", "fmod", "fmodf", "__int_as_float",
      "__longlong_as_double", "__syncthreads", "float2", "float4", "make_float2", "make_float4",
      // Names of the generated code.
      "tt_lane", "tt_vec", "tt_floordiv", "tt_floormod", "tt_min", "tt_max", "tt_abs"};
  return names;
}

}  // namespace

std::string sanitize(const std::string& hint) {
  std::string name;
  for (char c : hint) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    name += ok ? c : '_';
  }
  // Leading digits are illegal, leading underscores reserved for the implementation.
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) != 0 || name[0] == '_') {
    name = "v" + name;
  }
  if (reserved_names().count(name) != 0 || name.rfind("tt_", 0) == 0) {
    name += "_";
  }
  return name;
}

std::string NameTable::get(const void* key, const std::string& hint) {
  auto it = names_.find(key);
  if (it != names_.end()) {
    return it->second;
  }
  std::string base = sanitize(hint);
  std::string name = base;
  for (int n = 1; used_.count(name) != 0; ++n) {
    name = base + "_" + std::to_string(n);
  }
  used_.insert(name);
  names_.emplace(key, name);
  return name;
}

const std::string* NameTable::find(const void* key) const {
  auto it = names_.find(key);
  return it == names_.end() ? nullptr : &it->second;
}

std::string c_type(ir::DataType t, const std::string& what) {
  TT_USER_CHECK(t.code() != ir::DataType::Code::BFloat && !(t.is_float() && t.bits() == 16))
      << "cuda codegen: " << t.element_of().to_string() << " is not supported yet (" << what << ")";
  if (t.is_bool()) {
    return "bool";
  }
  if (t.is_float()) {
    TT_CHECK(t.bits() == 32 || t.bits() == 64) << "cuda codegen: no C type for " << t.to_string();
    return t.bits() == 32 ? "float" : "double";
  }
  const char* base = nullptr;
  switch (t.bits()) {
    case 8:
      base = "char";
      break;
    case 16:
      base = "short";
      break;
    case 32:
      base = "int";
      break;
    case 64:
      base = "long long";
      break;
    default:
      TT_CHECK(false) << "cuda codegen: no C type for " << t.to_string();
  }
  if (t.is_uint()) {
    return std::string("unsigned ") + base;
  }
  return t.bits() == 8 ? "signed char" : base;
}

std::string helper_source(const Helpers& h) {
  const char* prefix = "template <typename T>\n__device__ __forceinline__ T ";
  std::string out;
  if (h.floordiv) {
    out += std::string(prefix) +
           "tt_floordiv(T a, T b) {\n"
           "  T q = a / b;\n"
           "  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n"
           "}\n";
  }
  if (h.floormod) {
    out += std::string(prefix) +
           "tt_floormod(T a, T b) {\n"
           "  T r = a % b;\n"
           "  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"
           "}\n";
  }
  if (h.float_floormod) {
    out +=
        "__device__ __forceinline__ float tt_floormod_fp(float a, float b) {\n"
        "  float r = fmodf(a, b);\n"
        "  return (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) ? r + b : r;\n"
        "}\n"
        "__device__ __forceinline__ double tt_floormod_fp(double a, double b) {\n"
        "  double r = fmod(a, b);\n"
        "  return (r != 0.0 && ((r < 0.0) != (b < 0.0))) ? r + b : r;\n"
        "}\n";
  }
  // Min and max propagate NaN like ir::eval: `a` when it wins or is NaN, else `b`.
  if (h.min) {
    out += std::string(prefix) + "tt_min(T a, T b) { return (a < b || a != a) ? a : b; }\n";
  }
  if (h.max) {
    out += std::string(prefix) + "tt_max(T a, T b) { return (a > b || a != a) ? a : b; }\n";
  }
  if (h.abs) {
    out += std::string(prefix) + "tt_abs(T a) { return a < 0 ? -a : a; }\n";
  }
  // Over 48 KB a block's shared memory must be dynamic (the launch sizes it, the module's
  // loader raises the kernel's limit); the CPU emulation declares a static array instead.
  if (h.dynamic_shared) {
    out +=
        "#if defined(__CUDACC__)\n"
        "#define TT_DYNAMIC_SHARED(bytes) extern __shared__ __align__(16) unsigned char "
        "tt_shared[]\n"
        "#else\n"
        "#define TT_DYNAMIC_SHARED(bytes) __shared__ __align__(16) unsigned char tt_shared[bytes]\n"
        "#endif\n";
  }
  // Asynchronous global -> shared copies (sm_80); elsewhere (and under the CPU emulation) plain
  // copies, which the wait then has nothing to wait for.
  if (h.cp_async) {
    out +=
        "__device__ __forceinline__ void tt_cp_async4(float* dst, const float* src, bool valid) {\n"
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
        "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4, %2;\\n\"\n"
        "               :: \"r\"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "
        "\"l\"(src), \"r\"(valid ? 4 : 0));\n"
        "#else\n"
        "  *dst = valid ? *src : 0.0f;\n"
        "#endif\n"
        "}\n"
        "__device__ __forceinline__ void tt_cp_async16(float* dst, const float* src) {\n"
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
        "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\\n\"\n"
        "               :: \"r\"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "
        "\"l\"(src));\n"
        "#else\n"
        "  *reinterpret_cast<float4*>(dst) = *reinterpret_cast<const float4*>(src);\n"
        "#endif\n"
        "}\n"
        "__device__ __forceinline__ void tt_cp_async_wait_all() {\n"
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
        "  asm volatile(\"cp.async.wait_all;\\n\" ::: \"memory\");\n"
        "#endif\n"
        "}\n";
  }
  if (h.cp_async_groups) {
    out +=
        "__device__ __forceinline__ void tt_cp_async_commit() {\n"
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
        "  asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");\n"
        "#endif\n"
        "}\n"
        "template <int N>\n"
        "__device__ __forceinline__ void tt_cp_async_wait_group() {\n"
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
        "  asm volatile(\"cp.async.wait_group %0;\\n\" :: \"n\"(N) : \"memory\");\n"
        "#endif\n"
        "}\n";
  }
  return out;
}

}  // namespace tensortune::codegen::cuda

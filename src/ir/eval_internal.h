// SPDX-License-Identifier: Apache-2.0
// Private to eval*.cpp: the interpreter state. Expressions are evaluated one lane at a time (every
// vector operation of the IR is lane-wise), so no value ever needs a heap allocation; variables and
// buffers live on small binding stacks searched from the innermost scope outwards.
#pragma once

#include "tensortune/ir/eval.h"

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tensortune::ir::eval_detail {

/// One lane of a value: `i` for ints and bools, `f` for floats (float32 values are always exactly
/// representable as float: every float32 result is rounded to float).
union Scalar {
  int64_t i;
  double f;
};

inline Scalar make_int(int64_t v) {
  Scalar s{};
  s.i = v;
  return s;
}
inline Scalar make_float(double v) {
  Scalar s{};
  s.f = v;
  return s;
}

/// The memory layouts the interpreter can read and write.
enum class ElemKind : uint8_t { F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool };

struct BufferSlot {
  const BufferNode* node;
  unsigned char* data;
  int64_t size;
  ElemKind elem;
};

/// Wraps an integer result to the width of `t` (two's complement, like compiled code).
inline int64_t wrap_int(DataType t, int64_t v) {
  int bits = t.bits();
  if (bits >= 64) {
    return v;
  }
  if (bits == 32 && t.is_int()) {
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
  }
  uint64_t u = static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
  if (t.is_uint()) {
    return static_cast<int64_t>(u);
  }
  uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((u ^ sign) - sign);
}

/// Throws: float16/bfloat16 arithmetic is not interpreted.
[[noreturn]] void unsupported_float(DataType t);

/// Rounds a float result to the precision of `t` (float32 or float64).
inline double round_float(DataType t, double v) {
  if (t.bits() == 32) {
    return static_cast<double>(static_cast<float>(v));
  }
  if (t.bits() != 64 || t.code() != DataType::Code::Float) {
    unsupported_float(t);
  }
  return v;
}

class Interpreter {
 public:
  using FreeVars = std::unordered_map<const VarNode*, int64_t>;
  explicit Interpreter(const FreeVars* free_vars = nullptr) : free_vars_(free_vars) {}

  /// Lane `lane` of `e` (scalar expressions ignore the lane).
  Scalar eval(const Expr& e, int lane);
  void exec(const Stmt& s);
  /// Makes `data` (dense, `b.num_elements()` elements of `b.dtype()`) the storage of `b`.
  void bind_buffer(const Buffer& b, void* data);

 private:
  struct VarSlot {
    const VarNode* var;
    size_t offset;
    int lanes;
  };

  Scalar lookup(const VarNode* v, int lane) const;
  const BufferSlot& find_buffer(const BufferNode* b) const;
  int64_t flat_index(const BufferSlot& b,
                     const std::vector<Expr>& indices,
                     int lane,
                     const char* access);
  static Scalar read(const BufferSlot& b, int64_t idx);
  static void write(const BufferSlot& b, int64_t idx, Scalar v);

  Scalar eval_load(const Load* op, int lane);
  Scalar eval_arith(const Expr& e, int lane);
  Scalar eval_compare(const Expr& e, int lane);
  Scalar eval_cast(const Cast* op, int lane);
  Scalar eval_call(const Call* op, int lane);

  void exec_for(const For* op);
  void exec_store(const Store* op);
  void exec_allocate(const Allocate* op);
  void exec_let(const LetStmt* op);

  const FreeVars* free_vars_;
  std::vector<VarSlot> vars_;
  std::vector<Scalar> values_;
  std::vector<BufferSlot> buffers_;
  std::vector<std::vector<unsigned char>> allocations_;  // moving one keeps its data() valid
  std::vector<std::pair<int64_t, Scalar>> pending_;      // a vector store's lanes (never nested)
};

}  // namespace tensortune::ir::eval_detail

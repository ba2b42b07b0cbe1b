// SPDX-License-Identifier: Apache-2.0
// Private to src/codegen: the loop-IR -> LLVM IR emitter (CodeGenLLVM) and the LLVM plumbing
// shared by the JIT, the assembly/IR printers and the shared-library exporter.
#pragma once

#include "tensortune/codegen/model_entry.h"
#include "tensortune/ir/stmt.h"
#include "tensortune/support/error.h"
#include "tensortune/target/target.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tensortune::codegen::detail {

/// exp, tanh or erf of a float32 vector `x` as vector arithmetic (llvm/math.cpp); null for
/// any other intrinsic or type (then libm or an LLVM intrinsic computes it).
llvm::Value* emit_vector_math(llvm::IRBuilder<>& builder, ir::Intrinsic op, llvm::Value* x);

/// A CPU target as LLVM sees it, after host resolution.
struct LlvmTarget {
  std::string triple;
  std::string cpu;
  std::string features;
  int vector_bits = 0;
};

/// Initialises LLVM's native target, asm printer and parser once per process (thread-safe).
void init_llvm();

/// Resolves `target` against the host and checks it is a CPU target (UserError otherwise).
LlvmTarget llvm_target(const target::Target& target);

/// A target machine for `t`: position-independent (for .o/.so export) or the default relocation
/// model; O3 code generation with FP contraction allowed.
std::unique_ptr<llvm::TargetMachine> create_target_machine(const LlvmTarget& t, bool pic);

/// Emits every function of `funcs` into a new module of `ctx` (unoptimised, verified).
std::unique_ptr<llvm::Module> generate_module(const std::vector<ir::LoweredFunc>& funcs,
                                              const LlvmTarget& t,
                                              const llvm::DataLayout& layout,
                                              llvm::LLVMContext& ctx);

/// InternalError with LLVM's message when `module` is not valid IR.
void verify_module(const llvm::Module& module);

/// Adds the model entry point `entry` (tensortune/codegen/model_entry.h) to `module`, which
/// holds the kernels `funcs` it calls. Throws UserError when a call names a function not among
/// `funcs`, passes another number of buffers than it takes, or an index or offset is out of
/// range, or when a kernel already has an entry point's name.
void add_model_entry(llvm::Module& module,
                     const ModelEntry& entry,
                     const std::vector<ir::LoweredFunc>& funcs,
                     const LlvmTarget& t);
/// The entry point's size queries alone (tt_model_arena_bytes, tt_model_weight_bytes,
/// tt_model_num_inputs/outputs, tt_model_input/output_bytes) from `entry`'s sizes.
void add_model_sizes(llvm::Module& module, const LlvmTarget& t, const ModelEntry& entry);
/// A new external, nounwind function with the target's attributes; UserError when `name` is
/// taken.
llvm::Function* new_entry_function(llvm::Module& module,
                                   const LlvmTarget& t,
                                   const char* name,
                                   llvm::FunctionType* type);

/// Runs the new pass manager's O3 per-module pipeline with `tm`'s cost model.
void optimize_module(llvm::Module& module, llvm::TargetMachine& tm);

/// Object code (CodeGenFileType::ObjectFile) or assembly text of an optimised module.
std::string emit_machine_code(llvm::Module& module, llvm::TargetMachine& tm, bool assembly);

/// The message of an llvm::Error (consumes it).
std::string error_message(llvm::Error err);

/// The value of `v`, or InternalError "`what`: <LLVM's message>".
template <class T>
T unwrap(llvm::Expected<T> v, const char* what) {
  if (!v) {
    throw InternalError(std::string(what) + ": " + error_message(v.takeError()));
  }
  return std::move(*v);
}

/// Where a buffer lives while code is emitted, and its alias scope.
struct BufferBinding {
  llvm::Value* ptr = nullptr;
  uint64_t align = 1;  // guaranteed alignment of the base pointer in bytes
  llvm::MDNode* alias_scope = nullptr;
  llvm::MDNode* noalias = nullptr;
};

/// Emits flattened loop IR as LLVM IR, one LoweredFunc at a time. Every buffer gets its own
/// alias scope (the buffers of a kernel never overlap), so the optimiser may reorder accesses.
class CodeGenLLVM {
 public:
  CodeGenLLVM(llvm::Module& module, LlvmTarget target);
  /// Adds `int32_t NAME(void* const* buffers)` (external) and its outlined parallel bodies, and
  /// for a function with prepacked buffers `int32_t NAME_prepare(void* const* buffers)` too.
  void add_function(const ir::LoweredFunc& func);

 private:
  /// One external entry point over func.params.
  void add_entry(const ir::LoweredFunc& func);
  /// The per-llvm::Function state; swapped out while a parallel body is outlined.
  struct FunctionState {
    llvm::Function* function = nullptr;
    llvm::BasicBlock* entry = nullptr;   // allocas go here
    llvm::AllocaInst* status = nullptr;  // first non-zero status of a nested parallel loop
    std::unordered_map<const ir::VarNode*, llvm::Value*> vars;
    std::unordered_map<const ir::BufferNode*, BufferBinding> buffers;
  };

  /// What a parallel body receives: its closure struct's layout and the captured values.
  struct Closure {
    llvm::StructType* type = nullptr;
    std::vector<llvm::Type*> fields;
    std::vector<const ir::VarNode*> vars;                                  // fields 1..vars.size()
    std::vector<std::pair<const ir::BufferNode*, BufferBinding>> buffers;  // the fields after
  };

  // llvm/expr.cpp
  llvm::Value* emit(const ir::Expr& e);
  template <class T>
  llvm::Value* binary(const ir::Expr& e) {
    const T* op = e.as<T>();
    return emit_arith(T::kKind, e.type(), op->a, op->b);
  }
  template <class T>
  llvm::Value* compare(const ir::Expr& e) {
    const T* op = e.as<T>();
    return emit_compare(T::kKind, op->a, op->b);
  }
  llvm::Value* emit_arith(ir::ExprKind kind, ir::DataType t, const ir::Expr& a, const ir::Expr& b);
  llvm::Value* emit_compare(ir::ExprKind kind, const ir::Expr& a, const ir::Expr& b);
  llvm::Value* emit_div(llvm::Value* a, llvm::Value* b, const ir::Expr& divisor, ir::DataType t);
  llvm::Value* emit_mod(llvm::Value* a, llvm::Value* b, const ir::Expr& divisor, ir::DataType t);
  llvm::Value* emit_select(const ir::Select* op);
  llvm::Value* emit_cast(const ir::Cast* op);
  llvm::Value* emit_call(const ir::Call* op);
  llvm::Value* emit_libm_call(const char* name, llvm::Value* x);
  llvm::Value* emit_ramp(const ir::Ramp* op);
  llvm::Value* lookup_var(const ir::VarNode* v) const;

  // llvm/memory.cpp
  llvm::Value* emit_load(const ir::Load* op);
  void emit_store(const ir::Store* op);
  void emit_allocate(const ir::Allocate* op);
  const BufferBinding& buffer(const ir::Buffer& b) const;
  llvm::Value* element_ptr(const BufferBinding& b, llvm::Type* elem, llvm::Value* index);
  void annotate(llvm::Instruction* inst, const BufferBinding& b);
  void create_alias_scopes(const ir::LoweredFunc& func);

  // llvm/stmt.cpp
  void emit(const ir::Stmt& s);
  void emit_for(const ir::For* op);
  void emit_serial_loop(const ir::For* op);
  void emit_if(const ir::IfThenElse* op);
  void emit_let(const ir::LetStmt* op);
  /// Binds `v` to `value`; returns the previous binding (nullptr when none) for restore_var.
  llvm::Value* bind_var(const ir::VarNode* v, llvm::Value* value);
  void restore_var(const ir::VarNode* v, llvm::Value* previous);
  llvm::AllocaInst* entry_alloca(llvm::Type* type,
                                 uint64_t count,
                                 uint64_t align,
                                 const char* name);
  void merge_status(llvm::Value* status);

  // llvm/parallel.cpp
  void emit_parallel_for(const ir::For* op);
  llvm::Function* outline_parallel_body(const ir::For* op, const Closure& closure);
  llvm::Function* declare_runtime(const char* name);

  // llvm_codegen.cpp
  llvm::Function* create_function(const std::string& name,
                                  llvm::FunctionType* type,
                                  llvm::GlobalValue::LinkageTypes linkage);
  void begin_body(llvm::Function* fn);
  void finish_body();

  llvm::Type* llvm_type(ir::DataType t) const;
  /// The in-memory type of a buffer element (bool is stored as i8).
  llvm::Type* storage_type(ir::DataType t) const;
  llvm::Constant* all_true(int lanes) const;

  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> builder_;
  LlvmTarget target_;
  FunctionState state_;
  std::string func_name_;
  int num_outlined_ = 0;
  /// While an arm of a vector select is emitted: the lanes that choose it (loads are masked).
  llvm::Value* active_lanes_ = nullptr;
  std::unordered_map<const ir::BufferNode*, std::pair<llvm::MDNode*, llvm::MDNode*>> scopes_;
};

}  // namespace tensortune::codegen::detail

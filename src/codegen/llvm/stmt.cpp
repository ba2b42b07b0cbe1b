// SPDX-License-Identifier: Apache-2.0
// Statements -> LLVM control flow: serial/unrolled/vectorized loops (with loop metadata), if,
// let, sequences; entry-block allocas and the status of nested parallel loops.
#include "codegen/llvm/internal.h"

namespace tensortune::codegen::detail {
namespace {

/// A distinct llvm.loop node carrying one hint, e.g. {"llvm.loop.unroll.full"}.
llvm::MDNode* loop_hint(llvm::LLVMContext& ctx, std::vector<llvm::Metadata*> hint) {
  llvm::MDNode* hint_node = llvm::MDNode::get(ctx, hint);
  llvm::MDNode* loop_id = llvm::MDNode::getDistinct(ctx, {nullptr, hint_node});
  loop_id->replaceOperandWith(0, loop_id);
  return loop_id;
}

}  // namespace

void CodeGenLLVM::emit(const ir::Stmt& s) {
  TT_CHECK(s.defined()) << "codegen: undefined statement in '" << func_name_ << "'";
  switch (s.kind()) {
    case ir::StmtKind::For:
      return emit_for(s.as<ir::For>());
    case ir::StmtKind::Store:
      return emit_store(s.as<ir::Store>());
    case ir::StmtKind::Allocate:
      return emit_allocate(s.as<ir::Allocate>());
    case ir::StmtKind::IfThenElse:
      return emit_if(s.as<ir::IfThenElse>());
    case ir::StmtKind::Seq:
      for (const ir::Stmt& child : s.as<ir::Seq>()->stmts) {
        emit(child);
      }
      return;
    case ir::StmtKind::Evaluate:
      emit(s.as<ir::Evaluate>()->value);
      return;
    case ir::StmtKind::LetStmt:
      return emit_let(s.as<ir::LetStmt>());
  }
}

void CodeGenLLVM::emit_for(const ir::For* op) {
  TT_USER_CHECK(!ir::is_gpu_kind(op->for_kind))
      << "bind: GPU axis on a CPU target (loop '" << op->var.name() << "' is bound to "
      << ir::for_kind_name(op->for_kind) << " in '" << func_name_ << "')";
  if (op->for_kind == ir::ForKind::Parallel) {
    emit_parallel_for(op);
  } else {
    emit_serial_loop(op);
  }
}

void CodeGenLLVM::emit_serial_loop(const ir::For* op) {
  const std::string& name = op->var.name();
  llvm::Value* min = emit(op->min);
  llvm::Value* end = builder_.CreateAdd(min, emit(op->extent), name + ".end", false, true);
  llvm::BasicBlock* preheader = builder_.GetInsertBlock();
  llvm::Function* fn = state_.function;
  auto* header = llvm::BasicBlock::Create(ctx_, name + ".header", fn);
  auto* body = llvm::BasicBlock::Create(ctx_, name + ".body", fn);
  auto* exit = llvm::BasicBlock::Create(ctx_, name + ".exit", fn);
  builder_.CreateBr(header);
  builder_.SetInsertPoint(header);
  llvm::PHINode* var = builder_.CreatePHI(builder_.getInt32Ty(), 2, name);
  var->addIncoming(min, preheader);
  builder_.CreateCondBr(builder_.CreateICmpSLT(var, end), body, exit);
  builder_.SetInsertPoint(body);
  llvm::Value* previous = bind_var(op->var.get(), var);
  emit(op->body);
  restore_var(op->var.get(), previous);
  llvm::Value* next = builder_.CreateAdd(var, builder_.getInt32(1), name + ".next", false, true);
  var->addIncoming(next, builder_.GetInsertBlock());
  llvm::BranchInst* back = builder_.CreateBr(header);
  // An Unrolled loop that reaches codegen is one the unroll pass judged too large to copy;
  // forcing LLVM to unroll it anyway made O3 run for minutes, so it stays an ordinary loop.
  if (op->for_kind == ir::ForKind::Vectorized) {
    // Lowering could not turn this loop into vector expressions: ask LLVM's loop vectorizer.
    llvm::Metadata* on = llvm::ConstantAsMetadata::get(builder_.getTrue());
    back->setMetadata(
        llvm::LLVMContext::MD_loop,
        loop_hint(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"), on}));
  }
  builder_.SetInsertPoint(exit);
}

void CodeGenLLVM::emit_if(const ir::IfThenElse* op) {
  llvm::Value* cond = emit(op->condition);
  llvm::Function* fn = state_.function;
  auto* then_block = llvm::BasicBlock::Create(ctx_, "if.then", fn);
  auto* done = llvm::BasicBlock::Create(ctx_, "if.done", fn);
  llvm::BasicBlock* else_block =
      op->else_case.defined() ? llvm::BasicBlock::Create(ctx_, "if.else", fn) : done;
  builder_.CreateCondBr(cond, then_block, else_block);
  builder_.SetInsertPoint(then_block);
  emit(op->then_case);
  builder_.CreateBr(done);
  if (op->else_case.defined()) {
    builder_.SetInsertPoint(else_block);
    emit(op->else_case);
    builder_.CreateBr(done);
  }
  builder_.SetInsertPoint(done);
}

void CodeGenLLVM::emit_let(const ir::LetStmt* op) {
  llvm::Value* value = emit(op->value);
  if (llvm::isa<llvm::Instruction>(value) && !value->hasName()) {
    value->setName(op->var.name());
  }
  llvm::Value* previous = bind_var(op->var.get(), value);
  emit(op->body);
  restore_var(op->var.get(), previous);
}

llvm::Value* CodeGenLLVM::bind_var(const ir::VarNode* v, llvm::Value* value) {
  llvm::Value*& slot = state_.vars[v];
  llvm::Value* previous = slot;
  slot = value;
  return previous;
}

void CodeGenLLVM::restore_var(const ir::VarNode* v, llvm::Value* previous) {
  if (previous == nullptr) {
    state_.vars.erase(v);
  } else {
    state_.vars[v] = previous;
  }
}

llvm::AllocaInst* CodeGenLLVM::entry_alloca(llvm::Type* type,
                                            uint64_t count,
                                            uint64_t align,
                                            const char* name) {
  llvm::IRBuilder<> entry(state_.entry, state_.entry->begin());
  llvm::Type* stored = count == 1 ? type : llvm::ArrayType::get(type, count);
  llvm::AllocaInst* slot = entry.CreateAlloca(stored, nullptr, name);
  slot->setAlignment(llvm::Align(align));
  return slot;
}

void CodeGenLLVM::merge_status(llvm::Value* status) {
  llvm::Type* i32 = builder_.getInt32Ty();
  llvm::Value* old = builder_.CreateLoad(i32, state_.status);
  llvm::Value* keep_old = builder_.CreateICmpNE(old, builder_.getInt32(0));
  builder_.CreateStore(builder_.CreateSelect(keep_old, old, status), state_.status);
}

}  // namespace tensortune::codegen::detail

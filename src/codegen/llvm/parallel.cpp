// SPDX-License-Identifier: Apache-2.0
// Parallel loops: the body is outlined into `int32_t body(int32_t index, void* closure)`, the
// values it uses (enclosing loop and let variables, buffer pointers) are packed into a closure
// struct on the caller's stack, and the runtime's tt_parallel_for runs it.
#include "codegen/llvm/internal.h"
#include "tensortune/ir/ir_visitor.h"

#include <unordered_set>

namespace tensortune::codegen::detail {
namespace {

/// The variables and buffers a statement refers to, in order of first use.
class CaptureCollector : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  std::vector<const ir::VarNode*> vars;
  std::vector<ir::Buffer> buffers;

 protected:
  void visit(const ir::VarNode* op) override {
    if (seen_vars_.insert(op).second) {
      vars.push_back(op);
    }
  }
  void visit(const ir::Load* op) override {
    add(op->buffer);
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    add(op->buffer);
    ir::IRVisitor::visit(op);
  }

 private:
  void add(const ir::Buffer& b) {
    if (seen_buffers_.insert(b.get()).second) {
      buffers.push_back(b);
    }
  }
  std::unordered_set<const ir::VarNode*> seen_vars_;
  std::unordered_set<const ir::BufferNode*> seen_buffers_;
};

}  // namespace

llvm::Function* CodeGenLLVM::declare_runtime(const char* name) {
  llvm::Type* i32 = builder_.getInt32Ty();
  llvm::Type* ptr = builder_.getPtrTy();
  llvm::FunctionType* type = nullptr;
  std::string n = name;
  if (n == "tt_parallel_for") {
    type = llvm::FunctionType::get(i32, {i32, ptr, ptr}, false);
  } else if (n == "tt_alloc") {
    type = llvm::FunctionType::get(ptr, {builder_.getInt64Ty()}, false);
  } else {
    TT_CHECK(n == "tt_free") << "codegen: unknown runtime function '" << n << "'";
    type = llvm::FunctionType::get(builder_.getVoidTy(), {ptr}, false);
  }
  llvm::Function* fn = module_.getFunction(n);
  if (fn == nullptr) {
    fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, n, module_);
    fn->setDoesNotThrow();
    if (n == "tt_alloc") {
      fn->setReturnDoesNotAlias();
    }
  }
  return fn;
}

void CodeGenLLVM::emit_parallel_for(const ir::For* op) {
  llvm::Value* min = emit(op->min);
  llvm::Value* extent = emit(op->extent);
  CaptureCollector uses;
  uses.visit(op->body);
  // Field 0 is the loop's min; then every bound variable and buffer the body refers to.
  Closure closure;
  closure.fields = {builder_.getInt32Ty()};
  std::vector<llvm::Value*> values = {min};
  for (const ir::VarNode* v : uses.vars) {
    auto it = state_.vars.find(v);
    if (v != op->var.get() && it != state_.vars.end()) {
      closure.vars.push_back(v);
      closure.fields.push_back(it->second->getType());
      values.push_back(it->second);
    }
  }
  for (const ir::Buffer& b : uses.buffers) {
    auto it = state_.buffers.find(b.get());
    if (it != state_.buffers.end()) {
      closure.buffers.emplace_back(b.get(), it->second);
      closure.fields.push_back(builder_.getPtrTy());
      values.push_back(it->second.ptr);
    }
  }
  closure.type = llvm::StructType::get(ctx_, closure.fields);
  uint64_t align = module_.getDataLayout().getPrefTypeAlign(closure.type).value();
  llvm::AllocaInst* slot = entry_alloca(closure.type, 1, align, "closure");
  for (size_t k = 0; k < values.size(); ++k) {
    builder_.CreateStore(values[k], builder_.CreateStructGEP(closure.type, slot, k));
  }
  llvm::Function* body = outline_parallel_body(op, closure);
  llvm::Value* status =
      builder_.CreateCall(declare_runtime("tt_parallel_for"), {extent, body, slot});
  merge_status(status);
}

llvm::Function* CodeGenLLVM::outline_parallel_body(const ir::For* op, const Closure& closure) {
  llvm::Type* i32 = builder_.getInt32Ty();
  auto* type = llvm::FunctionType::get(i32, {i32, builder_.getPtrTy()}, false);
  std::string name = func_name_ + "_parallel_" + std::to_string(num_outlined_++);
  llvm::Function* body = create_function(name, type, llvm::GlobalValue::InternalLinkage);
  llvm::Argument* index = body->getArg(0);
  llvm::Argument* env = body->getArg(1);
  index->setName(op->var.name() + ".index");
  env->setName("closure");
  env->addAttr(llvm::Attribute::NoAlias);
  env->addAttr(llvm::Attribute::NoCapture);
  env->addAttr(llvm::Attribute::ReadOnly);

  // Emit the body with a fresh per-function state, then return to the caller's.
  FunctionState parent = std::move(state_);
  llvm::BasicBlock* parent_block = builder_.GetInsertBlock();
  state_ = FunctionState();
  begin_body(body);
  auto field = [&](size_t k) {
    return builder_.CreateLoad(closure.fields[k], builder_.CreateStructGEP(closure.type, env, k));
  };
  llvm::Value* min = field(0);
  size_t k = 1;
  for (const ir::VarNode* v : closure.vars) {
    state_.vars[v] = field(k++);
  }
  for (const auto& [node, binding] : closure.buffers) {
    BufferBinding copy = binding;
    copy.ptr = field(k++);
    state_.buffers[node] = copy;
  }
  state_.vars[op->var.get()] = builder_.CreateAdd(min, index, op->var.name(), false, true);
  emit(op->body);
  finish_body();
  state_ = std::move(parent);
  builder_.SetInsertPoint(parent_block);
  return body;
}

}  // namespace tensortune::codegen::detail

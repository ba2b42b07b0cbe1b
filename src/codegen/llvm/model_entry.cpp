// SPDX-License-Identifier: Apache-2.0
// The model entry point as LLVM IR: tt_model_run (every call of the plan in order, each kernel's
// buffer array resolved from the caller's inputs, outputs, arena and weights) and the constant
// query functions (arena and weight sizes, input and output counts and sizes).
#include "tensortune/codegen/model_entry.h"

#include "codegen/llvm/internal.h"
#include "tensortune/codegen/artifact.h"
#include "tensortune/support/hash.h"

#include <algorithm>
#include <map>

namespace tensortune::codegen::detail {
namespace {

const char* kind_name(EntryArg::Kind kind) {
  switch (kind) {
    case EntryArg::Kind::Input:
      return "input";
    case EntryArg::Kind::Output:
      return "output";
    case EntryArg::Kind::Arena:
      return "arena offset";
    case EntryArg::Kind::Weight:
      return "weight offset";
  }
  return "?";
}

/// UserError naming the call when `entry` calls a function that is not among `funcs` (or their
/// prepare functions), passes another number of buffers than it takes, or passes a buffer that
/// does not fit where it points: past the inputs or outputs, larger than the input or output,
/// or beyond the end of the arena or weights.
void check_entry(const ModelEntry& entry, const std::vector<ir::LoweredFunc>& funcs) {
  std::map<std::string, std::vector<int64_t>> sizes;  // bytes of each buffer a function takes
  for (const ir::LoweredFunc& f : funcs) {
    std::vector<int64_t>& bytes = sizes[f.name];
    for (const std::vector<ir::Buffer>* list : {&f.params, &f.prepacked}) {
      for (const ir::Buffer& b : *list)
        bytes.push_back(b.num_elements() * b.dtype().bytes());
    }
    if (!f.prepacked.empty())
      sizes[prepare_function_name(f.name)] = bytes;
  }
  TT_USER_CHECK(entry.arena_bytes >= 0 && entry.weight_bytes >= 0)
      << "model entry: negative arena or weight size";
  for (size_t c = 0; c < entry.calls.size(); ++c) {
    const EntryCall& call = entry.calls[c];
    auto it = sizes.find(call.function);
    TT_USER_CHECK(it != sizes.end()) << "model entry: call " << c << " names '" << call.function
                                     << "', which is not a function of the library";
    TT_USER_CHECK(call.args.size() == it->second.size())
        << "model entry: call " << c << " passes " << call.args.size() << " buffer(s) to '"
        << call.function << "', which takes " << it->second.size();
    for (size_t j = 0; j < call.args.size(); ++j) {
      const EntryArg& a = call.args[j];
      bool tensor = a.kind == EntryArg::Kind::Input || a.kind == EntryArg::Kind::Output;
      const std::vector<int64_t>& tensors =
          a.kind == EntryArg::Kind::Input ? entry.input_bytes : entry.output_bytes;
      int64_t limit = tensor                            ? static_cast<int64_t>(tensors.size())
                      : a.kind == EntryArg::Kind::Arena ? entry.arena_bytes
                                                        : entry.weight_bytes;
      TT_USER_CHECK(a.index >= 0 && a.index < limit)
          << "model entry: call " << c << " ('" << call.function << "') passes "
          << kind_name(a.kind) << " " << a.index << ", out of range (" << limit << ")";
      int64_t start = tensor ? 0 : a.index;
      int64_t end = tensor ? tensors[static_cast<size_t>(a.index)] : limit;
      TT_USER_CHECK(it->second[j] <= end - start)
          << "model entry: call " << c << " ('" << call.function << "') passes a buffer of "
          << it->second[j] << " bytes at " << kind_name(a.kind) << " " << a.index << ", which has "
          << end - start << " bytes";
    }
  }
}

/// A new external function of `module` with the target's attributes.
llvm::Function* new_function(llvm::Module& module,
                             const LlvmTarget& t,
                             const char* name,
                             llvm::FunctionType* type) {
  TT_USER_CHECK(module.getFunction(name) == nullptr)
      << "model entry: a kernel is already named '" << name << "'";
  llvm::Function* fn =
      llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr("target-cpu", t.cpu);
  if (!t.features.empty())
    fn->addFnAttr("target-features", t.features);
  return fn;
}

/// `TYPE NAME(void) { return value; }`.
void add_constant(llvm::Module& module,
                  const LlvmTarget& t,
                  const char* name,
                  llvm::IntegerType* type,
                  int64_t value) {
  llvm::Function* fn = new_function(module, t, name, llvm::FunctionType::get(type, false));
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(module.getContext(), "entry", fn));
  b.CreateRet(llvm::ConstantInt::get(type, static_cast<uint64_t>(value), true));
}

/// `int64_t NAME(int32_t i)`: sizes[i], or -1 when i is out of range.
void add_size_table(llvm::Module& module,
                    const LlvmTarget& t,
                    const char* name,
                    const std::vector<int64_t>& sizes) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Function* fn = new_function(module, t, name, llvm::FunctionType::get(i64, {i32}, false));
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value* minus_one = b.getInt64(static_cast<uint64_t>(-1));
  if (sizes.empty()) {
    b.CreateRet(minus_one);
    return;
  }
  std::vector<llvm::Constant*> values;
  for (int64_t s : sizes)
    values.push_back(b.getInt64(static_cast<uint64_t>(s)));
  auto* array_type = llvm::ArrayType::get(i64, sizes.size());
  auto* table = new llvm::GlobalVariable(
      module, array_type, true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantArray::get(array_type, values), std::string(name) + ".table");
  llvm::Value* index = fn->getArg(0);
  llvm::Value* in_range =
      b.CreateICmpULT(index, b.getInt32(static_cast<uint32_t>(sizes.size())), "in_range");
  llvm::BasicBlock* load_block = llvm::BasicBlock::Create(ctx, "load", fn);
  llvm::BasicBlock* out_block = llvm::BasicBlock::Create(ctx, "out_of_range", fn);
  b.CreateCondBr(in_range, load_block, out_block);
  b.SetInsertPoint(load_block);
  llvm::Value* slot =
      b.CreateInBoundsGEP(array_type, table, {b.getInt64(0), b.CreateZExt(index, i64)});
  b.CreateRet(b.CreateLoad(i64, slot));
  b.SetInsertPoint(out_block);
  b.CreateRet(minus_one);
}

/// The pointer `arg` resolves to inside tt_model_run.
llvm::Value* resolve(llvm::IRBuilder<>& b, llvm::Function* run, const EntryArg& arg) {
  llvm::Type* ptr = b.getPtrTy();
  switch (arg.kind) {
    case EntryArg::Kind::Input:
    case EntryArg::Kind::Output: {
      llvm::Value* array = run->getArg(arg.kind == EntryArg::Kind::Input ? 0 : 1);
      llvm::Value* slot =
          b.CreateConstInBoundsGEP1_64(ptr, array, static_cast<uint64_t>(arg.index));
      return b.CreateAlignedLoad(ptr, slot, llvm::Align(8));
    }
    case EntryArg::Kind::Arena:
    case EntryArg::Kind::Weight: {
      llvm::Value* base = run->getArg(arg.kind == EntryArg::Kind::Arena ? 2 : 3);
      return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), base, static_cast<uint64_t>(arg.index));
    }
  }
  return nullptr;
}

/// tt_model_run: each call fills one buffer array and calls its kernel (never inlined, so the
/// entry point stays small); the first non-zero status is returned at once.
void add_run(llvm::Module& module, const LlvmTarget& t, const ModelEntry& entry) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Function* run =
      new_function(module, t, kModelRun, llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr}, false));
  const char* names[] = {"inputs", "outputs", "arena", "weights"};
  for (unsigned i = 0; i < 4; ++i) {
    run->getArg(i)->setName(names[i]);
  }
  // The pointer arrays are only read; the arena and weights pointers reach the kernels.
  for (unsigned i = 0; i < 2; ++i) {
    run->getArg(i)->addAttr(llvm::Attribute::NoCapture);
    run->getArg(i)->addAttr(llvm::Attribute::ReadOnly);
  }
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", run));
  size_t max_args = 1;
  for (const EntryCall& call : entry.calls)
    max_args = std::max(max_args, call.args.size());
  llvm::AllocaInst* buffers =
      b.CreateAlloca(llvm::ArrayType::get(ptr, max_args), nullptr, "buffers");
  buffers->setAlignment(llvm::Align(8));
  llvm::BasicBlock* failed = llvm::BasicBlock::Create(ctx, "failed", run);
  llvm::PHINode* status = llvm::PHINode::Create(i32, 0, "status", failed);
  for (size_t c = 0; c < entry.calls.size(); ++c) {
    const EntryCall& call = entry.calls[c];
    for (size_t j = 0; j < call.args.size(); ++j) {
      llvm::Value* slot = b.CreateConstInBoundsGEP1_64(ptr, buffers, j);
      b.CreateAlignedStore(resolve(b, run, call.args[j]), slot, llvm::Align(8));
    }
    llvm::Function* kernel = module.getFunction(call.function);
    TT_CHECK(kernel != nullptr) << "model entry: '" << call.function << "' is not in the module";
    llvm::CallInst* rc = b.CreateCall(kernel, {buffers}, "rc" + std::to_string(c));
    rc->addFnAttr(llvm::Attribute::NoInline);
    llvm::BasicBlock* next = llvm::BasicBlock::Create(ctx, "call" + std::to_string(c + 1), run);
    b.CreateCondBr(b.CreateICmpNE(rc, b.getInt32(0)), failed, next);
    status->addIncoming(rc, b.GetInsertBlock());
    b.SetInsertPoint(next);
  }
  b.CreateRet(b.getInt32(0));
  if (status->getNumIncomingValues() == 0) {
    status->eraseFromParent();
    failed->eraseFromParent();
    return;
  }
  b.SetInsertPoint(failed);
  b.CreateRet(status);
}

}  // namespace

void add_model_entry(llvm::Module& module,
                     const ModelEntry& entry,
                     const std::vector<ir::LoweredFunc>& funcs,
                     const LlvmTarget& t) {
  check_entry(entry, funcs);
  llvm::LLVMContext& ctx = module.getContext();
  add_run(module, t, entry);
  add_model_sizes(module, t, entry);
  add_constant(module, t, kModelCallsHash, llvm::Type::getInt64Ty(ctx), calls_hash(entry.calls));
}

void add_model_sizes(llvm::Module& module, const LlvmTarget& t, const ModelEntry& entry) {
  llvm::LLVMContext& ctx = module.getContext();
  add_constant(module, t, kModelArenaBytes, llvm::Type::getInt64Ty(ctx), entry.arena_bytes);
  add_constant(module, t, kModelWeightBytes, llvm::Type::getInt64Ty(ctx), entry.weight_bytes);
  add_constant(module, t, kModelNumInputs, llvm::Type::getInt32Ty(ctx),
               static_cast<int64_t>(entry.input_bytes.size()));
  add_constant(module, t, kModelNumOutputs, llvm::Type::getInt32Ty(ctx),
               static_cast<int64_t>(entry.output_bytes.size()));
  add_size_table(module, t, kModelInputBytes, entry.input_bytes);
  add_size_table(module, t, kModelOutputBytes, entry.output_bytes);
}

llvm::Function* new_entry_function(llvm::Module& module,
                                   const LlvmTarget& t,
                                   const char* name,
                                   llvm::FunctionType* type) {
  return new_function(module, t, name, type);
}

}  // namespace tensortune::codegen::detail

namespace tensortune::codegen {

int64_t calls_hash(const std::vector<EntryCall>& calls) {
  uint64_t h = support::fnv1a64("tensortune-model-calls-1");
  for (const EntryCall& c : calls) {
    h = support::hash_combine(h, support::fnv1a64(c.function));
    h = support::hash_combine(h, c.args.size());
    for (const EntryArg& a : c.args) {
      h = support::hash_combine(h, static_cast<uint64_t>(a.kind));
      h = support::hash_combine(h, static_cast<uint64_t>(a.index));
    }
  }
  return static_cast<int64_t>(h);
}

}  // namespace tensortune::codegen

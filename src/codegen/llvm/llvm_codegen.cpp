// SPDX-License-Identifier: Apache-2.0
// The CPU backend's entry points: module generation (kernel entry functions, attributes, types),
// the O3 pipeline, and the LLVM IR / assembly text forms. Expressions, statements, memory and
// parallel loops are emitted in the other llvm/*.cpp files.
#include "tensortune/codegen/llvm_codegen.h"

#include "codegen/llvm/internal.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cctype>
#include <dlfcn.h>
#include <iterator>

namespace tensortune::codegen {
namespace detail {
namespace {

bool is_c_identifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) != 0) {
    return false;
  }
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') {
      return false;
    }
  }
  return true;
}

}  // namespace

CodeGenLLVM::CodeGenLLVM(llvm::Module& module, LlvmTarget target)
    : module_(module), ctx_(module.getContext()), builder_(ctx_), target_(std::move(target)) {
  // FP contraction (a*b+c -> fma) is allowed; reassociation and the other fast-math relaxations
  // are not, so results stay close to the interpreter's.
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  builder_.setFastMathFlags(fmf);
}

void CodeGenLLVM::add_function(const ir::LoweredFunc& func) {
  if (func.prepacked.empty()) {
    add_entry(func);
    return;
  }
  // Both entry points take the same argument array: inputs, outputs, prepacked buffers.
  ir::LoweredFunc entry = func;
  entry.params.insert(entry.params.end(), func.prepacked.begin(), func.prepacked.end());
  entry.prepacked.clear();
  entry.prepare = ir::Stmt();
  add_entry(entry);
  entry.name = prepare_function_name(func.name);
  entry.body = func.prepare;
  add_entry(entry);
}

void CodeGenLLVM::add_entry(const ir::LoweredFunc& func) {
  TT_USER_CHECK(is_c_identifier(func.name))
      << "codegen: function name '" << func.name << "' is not a C identifier";
  // A kernel named like a function the generated code calls would be called in its place (a
  // float64 workload named "exp" recursed into itself until the stack overflowed): tensortune's
  // runtime entry points, and every symbol the process already resolves (the C library, libm).
  static const char* const kRuntime[] = {"tt_alloc", "tt_free", "tt_parallel_for"};
  const bool reserved = std::any_of(std::begin(kRuntime), std::end(kRuntime),
                                    [&](const char* r) { return func.name == r; }) ||
                        ::dlsym(RTLD_DEFAULT, func.name.c_str()) != nullptr;
  TT_USER_CHECK(!reserved) << "codegen: function name '" << func.name
                           << "' is taken by the C library or tensortune's runtime, which the "
                              "generated code calls; give the workload another name";
  TT_USER_CHECK(module_.getFunction(func.name) == nullptr)
      << "codegen: two functions are named '" << func.name << "'";
  TT_CHECK(func.body.defined()) << "codegen: function '" << func.name << "' has no body";
  func_name_ = func.name;
  num_outlined_ = 0;
  scopes_.clear();
  llvm::Type* ptr_type = builder_.getPtrTy();
  auto* type = llvm::FunctionType::get(builder_.getInt32Ty(), {ptr_type}, false);
  llvm::Function* fn = create_function(func.name, type, llvm::GlobalValue::ExternalLinkage);
  llvm::Argument* args = fn->getArg(0);
  args->setName("buffers");
  args->addAttr(llvm::Attribute::NoCapture);
  args->addAttr(llvm::Attribute::ReadOnly);
  state_ = FunctionState();
  begin_body(fn);
  create_alias_scopes(func);
  for (size_t i = 0; i < func.params.size(); ++i) {
    const ir::Buffer& param = func.params[i];
    llvm::Value* slot = builder_.CreateConstInBoundsGEP1_64(ptr_type, args, i);
    llvm::Value* ptr = builder_.CreateAlignedLoad(ptr_type, slot, llvm::Align(8), param.name());
    BufferBinding binding;
    binding.ptr = ptr;
    // Only the element alignment is guaranteed for a caller's buffer.
    binding.align = static_cast<uint64_t>(param.dtype().bytes());
    binding.alias_scope = scopes_.at(param.get()).first;
    binding.noalias = scopes_.at(param.get()).second;
    TT_USER_CHECK(state_.buffers.emplace(param.get(), binding).second)
        << "codegen: buffer '" << param.name() << "' is passed twice to '" << func.name << "'";
  }
  emit(func.body);
  finish_body();
}

llvm::Function* CodeGenLLVM::create_function(const std::string& name,
                                             llvm::FunctionType* type,
                                             llvm::GlobalValue::LinkageTypes linkage) {
  llvm::Function* fn = llvm::Function::Create(type, linkage, name, module_);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr("target-cpu", target_.cpu);
  if (!target_.features.empty()) {
    fn->addFnAttr("target-features", target_.features);
  }
  if (target_.vector_bits > 0) {
    // LLVM prefers 256-bit vectors on several AVX-512 CPUs (Zen 4 among them); ask for the full
    // width, and let 512-bit IR vectors stay whole instead of being split.
    std::string bits = std::to_string(target_.vector_bits);
    fn->addFnAttr("prefer-vector-width", bits);
    fn->addFnAttr("min-legal-vector-width", bits);
  }
  return fn;
}

void CodeGenLLVM::begin_body(llvm::Function* fn) {
  state_.function = fn;
  state_.entry = llvm::BasicBlock::Create(ctx_, "entry", fn);
  builder_.SetInsertPoint(state_.entry);
  state_.status = entry_alloca(builder_.getInt32Ty(), 1, 4, "status");
  builder_.CreateStore(builder_.getInt32(0), state_.status);
}

void CodeGenLLVM::finish_body() {
  builder_.CreateRet(builder_.CreateLoad(builder_.getInt32Ty(), state_.status));
}

llvm::Type* CodeGenLLVM::llvm_type(ir::DataType t) const {
  llvm::Type* elem = nullptr;
  switch (t.code()) {
    case ir::DataType::Code::Int:
    case ir::DataType::Code::UInt:
      elem = llvm::Type::getIntNTy(ctx_, static_cast<unsigned>(t.bits()));
      break;
    case ir::DataType::Code::Float:
      TT_USER_CHECK(t.bits() == 32 || t.bits() == 64)
          << "codegen: " << t.element_of().to_string() << " is not supported yet on CPU";
      elem = t.bits() == 32 ? llvm::Type::getFloatTy(ctx_) : llvm::Type::getDoubleTy(ctx_);
      break;
    case ir::DataType::Code::BFloat:
      TT_USER_CHECK(false) << "codegen: bfloat16 is not supported yet on CPU";
      break;
  }
  return t.lanes() > 1 ? llvm::FixedVectorType::get(elem, static_cast<unsigned>(t.lanes())) : elem;
}

llvm::Type* CodeGenLLVM::storage_type(ir::DataType t) const {
  if (t.is_bool()) {
    llvm::Type* byte = llvm::Type::getInt8Ty(ctx_);
    return t.lanes() > 1 ? llvm::FixedVectorType::get(byte, static_cast<unsigned>(t.lanes()))
                         : byte;
  }
  return llvm_type(t);
}

llvm::Constant* CodeGenLLVM::all_true(int lanes) const {
  return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(static_cast<unsigned>(lanes)),
                                        llvm::ConstantInt::getTrue(ctx_));
}

std::unique_ptr<llvm::Module> generate_module(const std::vector<ir::LoweredFunc>& funcs,
                                              const LlvmTarget& t,
                                              const llvm::DataLayout& layout,
                                              llvm::LLVMContext& ctx) {
  std::string name = funcs.size() == 1 ? funcs[0].name : "tensortune";
  auto module = std::make_unique<llvm::Module>(name, ctx);
  module->setTargetTriple(t.triple);
  module->setDataLayout(layout);
  CodeGenLLVM cg(*module, t);
  for (const ir::LoweredFunc& f : funcs) {
    cg.add_function(f);
  }
  verify_module(*module);
  return module;
}

void verify_module(const llvm::Module& module) {
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(module, &os)) {
    os.flush();
    throw InternalError("codegen: LLVM rejected the generated module: " + problems);
  }
}

void optimize_module(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions options;
  options.LoopVectorization = true;
  options.SLPVectorization = true;
  options.LoopUnrolling = true;
  options.LoopInterleaving = true;
  llvm::PassBuilder pb(&tm, options);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(module, mam);
}

std::string emit_machine_code(llvm::Module& module, llvm::TargetMachine& tm, bool assembly) {
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  auto type = assembly ? llvm::CodeGenFileType::AssemblyFile : llvm::CodeGenFileType::ObjectFile;
  TT_CHECK(!tm.addPassesToEmitFile(pm, os, nullptr, type))
      << "codegen: the target machine cannot emit " << (assembly ? "assembly" : "object code");
  pm.run(module);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace detail

std::string emit_llvm_ir(const ir::LoweredFunc& func, const target::Target& target, bool optimize) {
  detail::LlvmTarget t = detail::llvm_target(target);
  std::unique_ptr<llvm::TargetMachine> tm = detail::create_target_machine(t, false);
  llvm::LLVMContext ctx;
  auto module = detail::generate_module({func}, t, tm->createDataLayout(), ctx);
  if (optimize) {
    detail::optimize_module(*module, *tm);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, nullptr);
  os.flush();
  return text;
}

std::string emit_assembly(const ir::LoweredFunc& func, const target::Target& target) {
  detail::LlvmTarget t = detail::llvm_target(target);
  std::unique_ptr<llvm::TargetMachine> tm = detail::create_target_machine(t, false);
  llvm::LLVMContext ctx;
  auto module = detail::generate_module({func}, t, tm->createDataLayout(), ctx);
  detail::optimize_module(*module, *tm);
  return detail::emit_machine_code(*module, *tm, true);
}

std::string emit_bitcode(const ir::LoweredFunc& func, const target::Target& target) {
  detail::LlvmTarget t = detail::llvm_target(target);
  std::unique_ptr<llvm::TargetMachine> tm = detail::create_target_machine(t, true);
  llvm::LLVMContext ctx;
  auto module = detail::generate_module({func}, t, tm->createDataLayout(), ctx);
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::WriteBitcodeToFile(*module, os);
  return std::string(buffer.begin(), buffer.end());
}

std::string compile_bitcode(const std::string& bitcode, const target::Target& target) {
  detail::LlvmTarget t = detail::llvm_target(target);
  std::unique_ptr<llvm::TargetMachine> tm = detail::create_target_machine(t, true);
  llvm::LLVMContext ctx;
  llvm::Expected<std::unique_ptr<llvm::Module>> module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(llvm::StringRef(bitcode.data(), bitcode.size()), "candidate"), ctx);
  if (!module) {
    throw UserError("codegen: not a bitcode module: " + detail::error_message(module.takeError()));
  }
  detail::optimize_module(**module, *tm);
  return detail::emit_machine_code(**module, *tm, false);
}

}  // namespace tensortune::codegen

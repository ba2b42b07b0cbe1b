// SPDX-License-Identifier: Apache-2.0
// build_cpu: compiles a LoweredFunc in process with ORC's LLJIT. Each build has its own
// LLVMContext and LLJIT, so several threads may build at once; the Artifact owns the JIT.
#include "codegen/llvm/internal.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/runtime/parallel.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include <cmath>

namespace tensortune::codegen {
namespace {

void check(llvm::Error err, const char* what) {
  if (err) {
    throw InternalError(std::string(what) + ": " + detail::error_message(std::move(err)));
  }
}

/// The runtime and the libm functions generated code calls, bound to this binary's copies (the
/// process search generator covers everything else, e.g. expf or memset).
void define_runtime_symbols(llvm::orc::LLJIT& jit) {
  using llvm::orc::ExecutorAddr;
  auto flags = llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable;
  llvm::orc::SymbolMap symbols;
  auto add = [&](const char* name, auto* fn) {
    symbols[jit.mangleAndIntern(name)] = {ExecutorAddr::fromPtr(fn), flags};
  };
  add("tt_parallel_for", &tt_parallel_for);
  add("tt_alloc", &tt_alloc);
  add("tt_free", &tt_free);
  add("tanhf", static_cast<float (*)(float)>(&::tanhf));
  add("tanh", static_cast<double (*)(double)>(&::tanh));
  add("erff", static_cast<float (*)(float)>(&::erff));
  add("erf", static_cast<double (*)(double)>(&::erf));
  check(jit.getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols))),
        "codegen: defining the runtime symbols");
}

/// An LLJIT for `t` (O3 code generation, FP contraction) that resolves the runtime and libm to
/// this binary's copies and everything else (memset, expf, ...) through the process.
std::unique_ptr<llvm::orc::LLJIT> create_jit(const detail::LlvmTarget& t) {
  llvm::orc::JITTargetMachineBuilder builder{llvm::Triple(t.triple)};
  builder.setCPU(t.cpu);
  builder.addFeatures(llvm::SubtargetFeatures(t.features).getFeatures());
  builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  builder.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::unique_ptr<llvm::orc::LLJIT> jit = detail::unwrap(
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(builder)).create(),
      "codegen: creating the JIT");
  auto process = detail::unwrap(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                                    jit->getDataLayout().getGlobalPrefix()),
                                "codegen: searching the process for symbols");
  jit->getMainJITDylib().addGenerator(std::move(process));
  define_runtime_symbols(*jit);
  return jit;
}

/// The address of `symbol` in `jit`; UserError when it cannot be linked.
KernelFn lookup_function(llvm::orc::LLJIT& jit, const std::string& symbol) {
  llvm::Expected<llvm::orc::ExecutorAddr> address = jit.lookup(symbol);
  if (!address) {
    throw UserError("codegen: the kernel '" + symbol +
                    "' cannot be linked: " + detail::error_message(address.takeError()));
  }
  return address->toPtr<KernelFn>();
}

/// The Artifact for `name` (and NAME_prepare when `with_prepare`) in `jit`, which it then owns.
Artifact lookup_kernel(std::unique_ptr<llvm::orc::LLJIT> jit,
                       const std::string& name,
                       bool with_prepare) {
  KernelFn fn = lookup_function(*jit, name);
  KernelFn prepare = with_prepare ? lookup_function(*jit, prepare_function_name(name)) : nullptr;
  std::shared_ptr<llvm::orc::LLJIT> owner(std::move(jit));
  return Artifact(name, fn, std::move(owner), prepare);
}

}  // namespace

Artifact build_cpu(const ir::LoweredFunc& func, const target::Target& target) {
  detail::init_llvm();
  detail::LlvmTarget t = detail::llvm_target(target);
  std::unique_ptr<llvm::orc::LLJIT> jit = create_jit(t);
  std::unique_ptr<llvm::TargetMachine> tm = detail::create_target_machine(t, false);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module =
      detail::generate_module({func}, t, jit->getDataLayout(), *ctx);
  detail::optimize_module(*module, *tm);
  check(jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(ctx))),
        "codegen: adding the module to the JIT");
  return lookup_kernel(std::move(jit), func.name, !func.prepacked.empty());
}

Artifact load_object(const std::string& object, const std::string& name, bool with_prepare) {
  detail::init_llvm();
  std::unique_ptr<llvm::orc::LLJIT> jit = create_jit(detail::llvm_target(target::Target{}));
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(object, name + ".o");
  if (llvm::Error err = jit->addObjectFile(std::move(buffer))) {
    throw UserError("codegen: cannot load the object of '" + name +
                    "': " + detail::error_message(std::move(err)));
  }
  return lookup_kernel(std::move(jit), name, with_prepare);
}

}  // namespace tensortune::codegen
